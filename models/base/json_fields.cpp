#include "models/base/json_fields.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "models/base/error.h"

namespace seed::models {

using json = nlohmann::json;

namespace {

// Edits that turn `a` into `b`: one-character insertions, deletions,
// substitutions and swaps of neighbours (optimal string alignment).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

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

const json& JsonFields::require(const char* key) {
  const json* value = find(key);
  if (value == nullptr) missing(key);
  return *value;
}

void JsonFields::missing(const char* key) const {
  // A key no reader asked for that is a typo or two away is most likely the
  // missing one misspelt: name it, since its own error would come later.
  std::string near;
  size_t nearest = std::max<size_t>(1, std::strlen(key) / 4) + 1;
  for (const auto& item : object_.items()) {
    if (known_.count(item.key()) != 0) continue;
    const size_t distance = edit_distance(item.key(), key);
    if (distance < nearest) {
      nearest = distance;
      near = item.key();
    }
  }
  SEED_FAIL(kInvalidArgument) << source_ << ": required field '" << prefix_ << key << "' is missing"
                              << (near.empty() ? "" : " (is '" + prefix_ + near + "' a misspelling of it?)");
}

void JsonFields::reject_unknown(const std::string& hint) const {
  for (const auto& item : object_.items()) {
    SEED_CHECK(known_.count(item.key()) != 0, kInvalidArgument) << where(item.key()) << " is not a known setting; " << hint;
  }
}

std::string JsonFields::where(const std::string& key) const { return source_ + ": field '" + prefix_ + key + "'"; }

}  // namespace seed::models
