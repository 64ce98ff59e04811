#include "spec/api/engine_kind.h"

namespace seed::spec {

EngineKind EngineKind::parse(const std::string& name) { return parse_kind(kEngineKinds, name, "--engine"); }

std::string engine_kind_names(const char* separator) { return kind_names(kEngineKinds, separator); }

}  // namespace seed::spec
