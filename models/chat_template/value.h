// Value: what a chat template computes with. JSON's kinds plus Jinja's
// undefined, namespaces and callables; objects keep insertion order (as
// Python dicts and JavaScript Maps do, so tojson and items() match them).
// Arrays, objects and namespaces are shared by reference, as in Jinja.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace seed::models::chat {

enum class ValueKind { kUndefined, kNone, kBool, kInt, kFloat, kString, kArray, kObject, kNamespace, kFunction };

struct Value;
using Members = std::vector<std::pair<std::string, Value>>;
struct CallArgs;
using Function = std::function<Value(const CallArgs&)>;

struct Value {
  ValueKind kind = ValueKind::kUndefined;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::shared_ptr<std::vector<Value>> items;  // kArray
  std::shared_ptr<Members> members;           // kObject, kNamespace
  std::shared_ptr<const Function> function;   // kFunction

  Value() = default;
  Value(const Value&) = default;
  Value(Value&&) noexcept = default;
  Value& operator=(const Value&) = default;
  Value& operator=(Value&&) noexcept = default;
  // Frees nested lists and dicts in a loop: a value nested thousands deep
  // (built by a loop) would overflow the stack if freed by recursion.
  ~Value();

  static Value none();
  static Value of(bool value);
  static Value of(int64_t value);
  static Value of_real(double value);
  static Value of(std::string value);
  static Value array(std::vector<Value> values = {});
  static Value object(Members members = {}, ValueKind kind = ValueKind::kObject);
  static Value callable(Function function);

  bool is(ValueKind k) const { return kind == k; }
  bool is_number() const { return kind == ValueKind::kInt || kind == ValueKind::kFloat; }
  bool is_mapping() const { return kind == ValueKind::kObject || kind == ValueKind::kNamespace; }
  // The member `key` of an object or namespace; nullptr if absent.
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value value);
  // Python truthiness: empty strings, lists and dicts, 0, none and undefined are false.
  bool truthy() const;
  // The text {{ value }} writes (none and undefined write nothing; true is "true").
  std::string str() const;
};

struct CallArgs {
  std::vector<Value> positional;
  Members keyword;
  const Value* keyword_arg(const std::string& name) const;
};

Value value_from_json(const nlohmann::ordered_json& json);

struct JsonStyle {
  int indent = -1;  // -1: one line
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::string item_separator, key_separator;  // empty: Python's defaults
};
// Python's json.dumps formatting ("a": 1, [1, 2]); kInvalidArgument for a function.
std::string value_to_json(const Value& value, const JsonStyle& style = {});

// Jinja's == (as @huggingface/jinja: numbers by value, strings by content,
// none equals undefined, lists and dicts by identity).
bool values_equal(const Value& a, const Value& b);
const char* value_kind_name(ValueKind kind);

}  // namespace seed::models::chat
