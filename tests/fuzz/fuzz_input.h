// Helpers shared by the libFuzzer targets of this folder.
//
// A target feeds bytes to one parser of outside input. The parser may refuse
// them only with seed::Error (its documented way to fail); any other
// exception escapes, and libFuzzer reports it as a crash, like a sanitizer
// finding, a timeout or a leak.
#pragma once

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "models/base/error.h"

namespace seed::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input as JSON, or nullopt when it is not JSON: what the parser under
// test receives is what its loader gets after nlohmann's parse.
template <typename Json = nlohmann::json>
std::optional<Json> as_json(const uint8_t* data, size_t size) {
  Json json = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

// A folder of this process for parsers that read files, made on first use.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("seed_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path;
  }();
  return dir;
}

// Writes `bytes` to `name` in the scratch folder and returns its path.
inline std::string write_scratch(const std::string& name, const std::string& bytes) {
  const std::filesystem::path path = scratch_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path.string();
}

// Runs `parse`, accepting a seed::Error as its answer to bad input.
template <typename Parse>
void refuse_only_with_seed_error(Parse&& parse) {
  try {
    parse();
  } catch (const seed::Error&) {
  }
}

}  // namespace seed::fuzz
