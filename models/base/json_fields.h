// Reading JSON files and their fields with errors that name the file and
// the field: what config.json, the safetensors index, the training config and
// the trainer's checkpoint state all need.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>

namespace seed::models {

// Parses the JSON file at `path`. Throws kNotFound if it does not exist, kIo
// if it cannot be read, kCorruption naming the file (with nlohmann's byte
// position) if it is not valid JSON.
nlohmann::json read_json_file(const std::string& path);

// Checked conversions of one JSON value, the one typed read every JSON
// reader of seed uses. `field` names the value in errors ("FILE: field
// 'model.hidden_size'"); a value of another type (or out of range) throws
// kInvalidArgument ("FIELD must be an integer").
void read_json_value(const nlohmann::json& value, const std::string& field, int64_t* out);
void read_json_value(const nlohmann::json& value, const std::string& field, int* out);
void read_json_value(const nlohmann::json& value, const std::string& field, uint64_t* out);
void read_json_value(const nlohmann::json& value, const std::string& field, double* out);
void read_json_value(const nlohmann::json& value, const std::string& field, bool* out);
void read_json_value(const nlohmann::json& value, const std::string& field, std::string* out);

// Typed access to the keys of one JSON object. Errors are kInvalidArgument
// and name the source and the field ("FILE: field 'model.hidden_size' must be
// an integer"). A null value counts as absent. Remembers which keys were
// asked for, so that reject_unknown() can refuse misspelt settings; configs
// written by others (Hugging Face's config.json) simply never call it.
// `object` must outlive the JsonFields.
class JsonFields {
 public:
  // `prefix` names a nested object ("rope_scaling."); throws if `object` is
  // not a JSON object.
  JsonFields(const nlohmann::json& object, std::string source, std::string prefix = "");

  const nlohmann::json* find(const char* key);  // nullptr if absent or null
  bool has(const char* key) { return find(key) != nullptr; }

  // The value of a key that must be there; its absence throws, naming a
  // key that looks like it misspelt.
  const nlohmann::json& require(const char* key);
  template <typename T>
  void required(const char* key, T* out) {
    convert(require(key), key, out);
  }
  template <typename T>
  void optional(const char* key, T* out) {
    if (const nlohmann::json* value = find(key)) convert(*value, key, out);
  }

  // Checked conversion of one value that belongs to `key` (read_json_value).
  template <typename T>
  void convert(const nlohmann::json& value, const std::string& key, T* out) const {
    read_json_value(value, where(key), out);
  }

  // Throws for the first key no find() asked for; `hint` ends the message.
  void reject_unknown(const std::string& hint) const;

  std::string where(const std::string& key) const;  // "SOURCE: field 'PREFIXkey'"

 private:
  [[noreturn]] void missing(const char* key) const;

  const nlohmann::json& object_;
  std::string source_;
  std::string prefix_;
  std::set<std::string> known_;
};

}  // namespace seed::models
