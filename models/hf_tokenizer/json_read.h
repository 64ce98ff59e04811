// Typed reads of the members of one tokenizer.json component, with errors
// (kInvalidArgument) that name the file and the field.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

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
