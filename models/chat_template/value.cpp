#include "models/chat_template/value.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "models/base/error.h"

namespace seed::models::chat {
namespace {

// JavaScript's Number#toString for finite doubles: the shortest digits that
// read back the same.
std::string js_number(double value) {
  if (value == 0) return "0";
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == std::floor(value) && std::fabs(value) < 1e21) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);
    return buffer;
  }
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string json_string(const std::string& text, bool ensure_ascii) {
  return nlohmann::json(text).dump(-1, ' ', ensure_ascii, nlohmann::json::error_handler_t::replace);
}

// Deeper than this, a value is written by no real template; a namespace that
// holds itself would be written forever.
constexpr int kMaxWriteDepth = 512;

void write_json(const Value& value, const JsonStyle& style, int depth, std::string* out) {
  if (depth > kMaxWriteDepth) {
    SEED_FAIL(kInvalidArgument) << "chat template: a value nested more than " << kMaxWriteDepth
                                << " levels deep (or holding itself) cannot be written";
  }
  const std::string item_separator =
      !style.item_separator.empty() ? style.item_separator : style.indent > 0 ? "," : ", ";
  const std::string key_separator = !style.key_separator.empty() ? style.key_separator : ": ";
  const std::string pad = style.indent > 0 ? std::string(style.indent, ' ') : "";
  std::string base = "\n", child = "\n";
  for (int k = 0; k < depth; ++k) base += pad;
  child = base + pad;
  switch (value.kind) {
    case ValueKind::kUndefined:
    case ValueKind::kNone: *out += "null"; return;
    case ValueKind::kBool: *out += value.boolean ? "true" : "false"; return;
    case ValueKind::kInt: *out += std::to_string(value.integer); return;
    case ValueKind::kFloat: *out += js_number(value.real); return;
    case ValueKind::kString: *out += json_string(value.text, style.ensure_ascii); return;
    case ValueKind::kArray: {
      *out += '[';
      const bool indented = style.indent > 0 && !value.items->empty();
      for (size_t i = 0; i < value.items->size(); ++i) {
        if (i > 0) *out += item_separator;
        if (indented) *out += child;
        write_json((*value.items)[i], style, depth + 1, out);
      }
      if (indented) *out += base;
      *out += ']';
      return;
    }
    case ValueKind::kObject:
    case ValueKind::kNamespace: {
      Members members = *value.members;
      if (style.sort_keys) {
        std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      *out += '{';
      const bool indented = style.indent > 0 && !members.empty();
      for (size_t i = 0; i < members.size(); ++i) {
        if (i > 0) *out += item_separator;
        if (indented) *out += child;
        *out += json_string(members[i].first, style.ensure_ascii) + key_separator;
        write_json(members[i].second, style, depth + 1, out);
      }
      if (indented) *out += base;
      *out += '}';
      return;
    }
    case ValueKind::kFunction: SEED_FAIL(kInvalidArgument) << "chat template: a function cannot be converted to JSON";
  }
}

}  // namespace

Value Value::none() {
  Value v;
  v.kind = ValueKind::kNone;
  return v;
}
Value Value::of(bool value) {
  Value v;
  v.kind = ValueKind::kBool;
  v.boolean = value;
  return v;
}
Value Value::of(int64_t value) {
  Value v;
  v.kind = ValueKind::kInt;
  v.integer = value;
  return v;
}
Value Value::of_real(double value) {
  Value v;
  v.kind = ValueKind::kFloat;
  v.real = value;
  return v;
}
Value Value::of(std::string value) {
  Value v;
  v.kind = ValueKind::kString;
  v.text = std::move(value);
  return v;
}
Value::~Value() {
  std::vector<std::shared_ptr<std::vector<Value>>> arrays;
  std::vector<std::shared_ptr<Members>> objects;
  // Takes the containers only `v` holds, so freeing `v` frees nothing nested.
  const auto take = [&](Value& v) {
    if (v.items != nullptr && v.items.use_count() == 1) arrays.push_back(std::move(v.items));
    if (v.members != nullptr && v.members.use_count() == 1) objects.push_back(std::move(v.members));
  };
  take(*this);
  while (!arrays.empty() || !objects.empty()) {
    if (!arrays.empty()) {
      const std::shared_ptr<std::vector<Value>> array = std::move(arrays.back());
      arrays.pop_back();
      for (Value& item : *array) take(item);
    } else {
      const std::shared_ptr<Members> object = std::move(objects.back());
      objects.pop_back();
      for (auto& member : *object) take(member.second);
    }
  }
}

Value Value::array(std::vector<Value> values) {
  Value v;
  v.kind = ValueKind::kArray;
  v.items = std::make_shared<std::vector<Value>>(std::move(values));
  return v;
}
Value Value::object(Members members, ValueKind kind) {
  Value v;
  v.kind = kind;
  v.members = std::make_shared<Members>(std::move(members));
  return v;
}
Value Value::callable(Function function) {
  Value v;
  v.kind = ValueKind::kFunction;
  v.function = std::make_shared<const Function>(std::move(function));
  return v;
}

const Value* Value::find(const std::string& key) const {
  if (!is_mapping()) return nullptr;
  for (const auto& [name, member] : *members) {
    if (name == key) return &member;
  }
  return nullptr;
}

void Value::set(const std::string& key, Value value) {
  for (auto& [name, member] : *members) {
    if (name == key) {
      member = std::move(value);
      return;
    }
  }
  members->emplace_back(key, std::move(value));
}

bool Value::truthy() const {
  switch (kind) {
    case ValueKind::kUndefined:
    case ValueKind::kNone: return false;
    case ValueKind::kBool: return boolean;
    case ValueKind::kInt: return integer != 0;
    case ValueKind::kFloat: return real != 0 && !std::isnan(real);
    case ValueKind::kString: return !text.empty();
    case ValueKind::kArray: return !items->empty();
    case ValueKind::kObject: return !members->empty();
    case ValueKind::kNamespace:
    case ValueKind::kFunction: return true;
  }
  return false;
}

std::string Value::str() const {
  switch (kind) {
    case ValueKind::kUndefined:
    case ValueKind::kNone: return "";
    case ValueKind::kBool: return boolean ? "true" : "false";
    case ValueKind::kInt: return std::to_string(integer);
    case ValueKind::kFloat:
      if (real == 0 && std::signbit(real)) return "-0.0";
      return real == std::floor(real) && std::fabs(real) < 1e21 ? js_number(real) + ".0" : js_number(real);
    case ValueKind::kString: return text;
    case ValueKind::kArray:
    case ValueKind::kObject:
    case ValueKind::kNamespace: return value_to_json(*this);
    case ValueKind::kFunction: return "[function]";
  }
  return "";
}

const Value* CallArgs::keyword_arg(const std::string& name) const {
  for (const auto& [key, value] : keyword) {
    if (key == name) return &value;
  }
  return nullptr;
}

Value value_from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::of(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::of(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: return Value::of(static_cast<int64_t>(json.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: {
      const double real = json.get<double>();
      // JavaScript has one number type: 2.0 arrives as the integer 2.
      if (real == std::floor(real) && std::fabs(real) < 9e15) return Value::of(static_cast<int64_t>(real));
      return Value::of_real(real);
    }
    case nlohmann::ordered_json::value_t::string: return Value::of(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& item : json) items.push_back(value_from_json(item));
      return Value::array(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Members members;
      for (const auto& [key, item] : json.items()) members.emplace_back(key, value_from_json(item));
      return Value::object(std::move(members));
    }
    default: return Value();
  }
}

std::string value_to_json(const Value& value, const JsonStyle& style) {
  std::string out;
  write_json(value, style, 0, &out);
  return out;
}

bool values_equal(const Value& a, const Value& b) {
  const auto numeric = [](const Value& v) {
    return v.kind == ValueKind::kInt ? static_cast<double>(v.integer)
           : v.kind == ValueKind::kFloat ? v.real
                                         : static_cast<double>(v.boolean);
  };
  const auto number_like = [](const Value& v) { return v.is_number() || v.kind == ValueKind::kBool; };
  const auto missing = [](const Value& v) { return v.kind == ValueKind::kNone || v.kind == ValueKind::kUndefined; };
  if (missing(a) || missing(b)) return missing(a) && missing(b);
  if (number_like(a) && number_like(b)) return numeric(a) == numeric(b);
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::kString: return a.text == b.text;
    case ValueKind::kArray: return a.items == b.items;
    case ValueKind::kObject:
    case ValueKind::kNamespace: return a.members == b.members;
    case ValueKind::kFunction: return a.function == b.function;
    default: return false;
  }
}

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kUndefined: return "undefined";
    case ValueKind::kNone: return "none";
    case ValueKind::kBool: return "boolean";
    case ValueKind::kInt: return "integer";
    case ValueKind::kFloat: return "float";
    case ValueKind::kString: return "string";
    case ValueKind::kArray: return "list";
    case ValueKind::kObject: return "dict";
    case ValueKind::kNamespace: return "namespace";
    case ValueKind::kFunction: return "function";
  }
  return "?";
}

}  // namespace seed::models::chat
