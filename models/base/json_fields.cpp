#include "models/base/json_fields.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "models/base/error.h"

namespace seed::models {

using json = nlohmann::json;

json read_json_file(const std::string& path) {
  std::error_code ec;
  SEED_CHECK(std::filesystem::exists(path, ec), kNotFound) << path << ": no such file";
  std::ifstream in(path);
  SEED_CHECK(in.good(), kIo) << path << ": cannot open: " << std::strerror(errno);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number past double
    SEED_FAIL(kCorruption) << path << ": not valid JSON: " << e.what();
  }
}

void read_json_value(const json& value, const std::string& field, int64_t* out) {
  // Unsigned values past int64 would wrap in get<int64_t>().
  const bool fits = value.is_number_integer() &&
                    !(value.is_number_unsigned() &&
                      value.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()});
  SEED_CHECK(fits, kInvalidArgument) << field << " must be an integer";
  *out = value.get<int64_t>();
}

void read_json_value(const json& value, const std::string& field, int* out) {
  int64_t wide = 0;
  read_json_value(value, field, &wide);
  SEED_CHECK(wide >= std::numeric_limits<int>::min() && wide <= std::numeric_limits<int>::max(), kInvalidArgument)
      << field << " is out of range";
  *out = static_cast<int>(wide);
}

void read_json_value(const json& value, const std::string& field, uint64_t* out) {
  SEED_CHECK(value.is_number_unsigned(), kInvalidArgument) << field << " must be a non-negative integer";
  *out = value.get<uint64_t>();
}

void read_json_value(const json& value, const std::string& field, double* out) {
  SEED_CHECK(value.is_number(), kInvalidArgument) << field << " must be a number";
  *out = value.get<double>();
}

void read_json_value(const json& value, const std::string& field, bool* out) {
  SEED_CHECK(value.is_boolean(), kInvalidArgument) << field << " must be true or false";
  *out = value.get<bool>();
}

void read_json_value(const json& value, const std::string& field, std::string* out) {
  SEED_CHECK(value.is_string(), kInvalidArgument) << field << " must be a string";
  *out = value.get<std::string>();
}

JsonFields::JsonFields(const json& object, std::string source, std::string prefix)
    : object_(object), source_(std::move(source)), prefix_(std::move(prefix)) {
  SEED_CHECK(object.is_object(), kInvalidArgument)
      << source_ << ": "
      << (prefix_.empty() ? std::string("the top level") : "field '" + prefix_.substr(0, prefix_.size() - 1) + "'")
      << " must be a JSON object";
}

const json* JsonFields::find(const char* key) {
  known_.insert(key);
  const auto it = object_.find(key);
  return it == object_.end() || it->is_null() ? nullptr : &*it;
}

void JsonFields::missing(const char* key) const {
  SEED_FAIL(kInvalidArgument) << source_ << ": required field '" << prefix_ << key << "' is missing";
}

void JsonFields::reject_unknown(const std::string& hint) const {
  for (const auto& item : object_.items()) {
    SEED_CHECK(known_.count(item.key()) != 0, kInvalidArgument) << where(item.key()) << " is not a known setting; " << hint;
  }
}

std::string JsonFields::where(const std::string& key) const { return source_ + ": field '" + prefix_ + key + "'"; }

}  // namespace seed::models
