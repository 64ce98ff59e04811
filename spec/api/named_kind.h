// NamedKind: what EngineKind and DrafterKind share. Each is a small enum as
// a value that answers capability questions, with one name per value (the
// CLI value, the results' field and the registry key: one spelling),
// compared by value. `Kind` derives from NamedKind<Kind>, has
// `constexpr value()`, and lists its names in `kNames`, indexed by value.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "models/base/error.h"

namespace seed::spec {

template <typename Kind>
class NamedKind {
 public:
  constexpr const char* name() const { return Kind::kNames[static_cast<const Kind&>(*this).value()]; }

  friend constexpr bool operator==(Kind a, Kind b) { return a.value() == b.value(); }
  friend constexpr bool operator!=(Kind a, Kind b) { return a.value() != b.value(); }
};

// The names of `kinds` joined by `separator` ("ar | ar-batch | ...").
template <typename Kind, size_t N>
std::string kind_names(const std::array<Kind, N>& kinds, const char* separator) {
  std::string out;
  for (const Kind kind : kinds) out += (out.empty() ? "" : separator) + std::string(kind.name());
  return out;
}

// The kind of `kinds` named `name`. Throws seed::Error kInvalidArgument
// naming `option` ("--engine"), the name and every known name.
template <typename Kind, size_t N>
Kind parse_kind(const std::array<Kind, N>& kinds, const std::string& name, const std::string& option) {
  for (const Kind kind : kinds) {
    if (name == kind.name()) return kind;
  }
  SEED_FAIL(kInvalidArgument) << option << ": unknown " << option.substr(2) << " '" << name << "'; expected "
                              << kind_names(kinds, ", ");
}

}  // namespace seed::spec
