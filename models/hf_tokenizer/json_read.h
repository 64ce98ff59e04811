// Typed reads of the members of one tokenizer.json component, with errors
// (kInvalidArgument) that name the file and the field; the conversions are
// read_json_value's (models/base/json_fields.h).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

// Token ids a tokenizer.json may use: 16 times the largest vocabularies in
// use, so that a file cannot make the tokenizer allocate gigabytes.
constexpr int64_t kMaxTokenId = int64_t{1} << 22;

// The component's "type" string; throws if `value` is not an object or has none.
std::string read_type(const nlohmann::json& value, const Field& field);
// A member that must be present (not null).
const nlohmann::json& read_member(const nlohmann::json& value, const char* key, const Field& field);
const nlohmann::json& read_array(const nlohmann::json& value, const char* key, const Field& field);
std::string read_string(const nlohmann::json& value, const char* key, const Field& field);
// Optional members: `fallback` when absent or null.
std::string read_string(const nlohmann::json& value, const char* key, const Field& field, const std::string& fallback);
bool read_bool(const nlohmann::json& value, const char* key, const Field& field, bool fallback);
int64_t read_int(const nlohmann::json& value, const char* key, const Field& field, int64_t fallback);

}  // namespace seed::models::hf
