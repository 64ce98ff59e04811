#include "spec/api/engine_kind.h"

#include "models/base/error.h"

namespace seed::spec {

EngineKind EngineKind::parse(const std::string& name) {
  for (const EngineKind kind : kEngineKinds) {
    if (name == kind.name()) return kind;
  }
  SEED_FAIL(kInvalidArgument) << "--engine: unknown engine '" << name << "'; expected " << engine_kind_names(", ");
}

std::string engine_kind_names(const char* separator) {
  std::string out;
  for (const EngineKind kind : kEngineKinds) out += (out.empty() ? "" : separator) + std::string(kind.name());
  return out;
}

}  // namespace seed::spec
