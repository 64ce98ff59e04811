// Field: where a value sits in a JSON file, for error messages that name the
// file and the field ("DIR/tokenizer.json: field 'model.merges[3]'").
#pragma once

#include <string>

namespace seed::models::hf {

struct Field {
  std::string file;
  std::string path;  // "" for the top level

  Field operator/(const std::string& key) const { return {file, path.empty() ? key : path + "." + key}; }
  Field operator[](size_t index) const { return {file, path + "[" + std::to_string(index) + "]"}; }
  std::string str() const { return file + ": field '" + path + "'"; }
};

}  // namespace seed::models::hf
