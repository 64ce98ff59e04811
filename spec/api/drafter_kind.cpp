#include "spec/api/drafter_kind.h"

#include "models/base/error.h"

namespace seed::spec {

DrafterKind DrafterKind::parse(const std::string& name) {
  for (const DrafterKind kind : kDrafterKinds) {
    if (name == kind.name()) return kind;
  }
  SEED_FAIL(kInvalidArgument) << "--drafter: unknown drafter '" << name << "'; expected " << drafter_kind_names(", ");
}

std::string drafter_kind_names(const char* separator) {
  std::string out;
  for (const DrafterKind kind : kDrafterKinds) out += (out.empty() ? "" : separator) + std::string(kind.name());
  return out;
}

}  // namespace seed::spec
