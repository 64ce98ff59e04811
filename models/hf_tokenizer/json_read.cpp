#include "models/hf_tokenizer/json_read.h"

#include <cstdint>

#include "models/base/error.h"
#include "models/base/json_fields.h"

namespace seed::models::hf {

using json = nlohmann::json;

namespace {
const json* find(const json& value, const char* key) {
  const auto it = value.find(key);
  return it == value.end() || it->is_null() ? nullptr : &*it;
}

// The member's typed value through the one checked conversion.
template <typename T>
T convert(const json& member, const char* key, const Field& field) {
  T out{};
  read_json_value(member, (field / key).str(), &out);
  return out;
}
}  // namespace

std::string read_type(const json& value, const Field& field) {
  SEED_CHECK(value.is_object(), kInvalidArgument) << field.str() << " must be a JSON object";
  return read_string(value, "type", field);
}

const json& read_member(const json& value, const char* key, const Field& field) {
  SEED_CHECK(value.is_object(), kInvalidArgument) << field.str() << " must be a JSON object";
  const json* member = find(value, key);
  SEED_CHECK(member != nullptr, kInvalidArgument) << (field / key).str() << " is missing";
  return *member;
}

const json& read_array(const json& value, const char* key, const Field& field) {
  const json& member = read_member(value, key, field);
  SEED_CHECK(member.is_array(), kInvalidArgument) << (field / key).str() << " must be a list";
  return member;
}

std::string read_string(const json& value, const char* key, const Field& field) {
  return convert<std::string>(read_member(value, key, field), key, field);
}

std::string read_string(const json& value, const char* key, const Field& field, const std::string& fallback) {
  const json* member = find(value, key);
  return member == nullptr ? fallback : convert<std::string>(*member, key, field);
}

bool read_bool(const json& value, const char* key, const Field& field, bool fallback) {
  const json* member = find(value, key);
  return member == nullptr ? fallback : convert<bool>(*member, key, field);
}

int64_t read_int(const json& value, const char* key, const Field& field, int64_t fallback) {
  const json* member = find(value, key);
  return member == nullptr ? fallback : convert<int64_t>(*member, key, field);
}

}  // namespace seed::models::hf
