#include "spec/api/drafter_kind.h"

namespace seed::spec {

DrafterKind DrafterKind::parse(const std::string& name) { return parse_kind(kDrafterKinds, name, "--drafter"); }

std::string drafter_kind_names(const char* separator) { return kind_names(kDrafterKinds, separator); }

}  // namespace seed::spec
