#include "models/chat_template/builtins.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <set>

#include "models/base/error.h"
#include "models/chat_template/text.h"

namespace seed::models::chat {
namespace {

const std::set<std::string>& filters() {
  static const std::set<std::string> names = {
      "safe", "tojson", "list", "first", "last", "length", "count", "reverse", "sort", "join", "string", "unique",
      "upper", "lower", "title", "capitalize", "trim", "indent", "int", "float", "abs", "items", "default", "d",
      "selectattr", "rejectattr", "select", "reject", "map", "replace", "dictsort", "bool"};
  return names;
}

[[noreturn]] void fail(const std::string& message) { SEED_FAIL(kInvalidArgument) << message; }

const Value& argument(const CallArgs& args, size_t index, const char* keyword, const Value& fallback) {
  if (index < args.positional.size()) return args.positional[index];
  const Value* value = args.keyword_arg(keyword);
  return value != nullptr ? *value : fallback;
}

std::string string_argument(const CallArgs& args, size_t index, const char* keyword, const std::string& what) {
  const Value& value = argument(args, index, keyword, Value());
  if (!value.is(ValueKind::kString)) fail(what + ": argument '" + keyword + "' must be a string");
  return value.text;
}

std::string replace_all(const std::string& text, const std::string& from, const std::string& to, int64_t count) {
  if (count == 0) return text;
  std::string out;
  int64_t done = 0;
  if (from.empty()) {  // Python: insert `to` between characters and at both ends
    for (const std::string& c : code_points(text)) {
      if (count < 0 || done < count) out += to, ++done;
      out += c;
    }
    if (count < 0 || done < count) out += to;
    return out;
  }
  size_t at = 0;
  while (true) {
    const size_t found = text.find(from, at);
    if (found == std::string::npos || (count >= 0 && done >= count)) break;
    out += text.substr(at, found - at) + to;
    at = found + from.size();
    ++done;
  }
  return out + text.substr(at);
}

std::vector<std::string> split(const std::string& text, const Value& separator, int64_t max_split) {
  std::vector<std::string> parts;
  if (separator.is(ValueKind::kNone) || separator.is(ValueKind::kUndefined)) {
    size_t i = 0;
    while (true) {
      while (i < text.size() && space_length(text, i) > 0) i += space_length(text, i);
      if (i >= text.size()) break;
      if (max_split >= 0 && static_cast<int64_t>(parts.size()) >= max_split) {
        parts.push_back(text.substr(i));
        break;
      }
      const size_t start = i;
      while (i < text.size() && space_length(text, i) == 0) i += char_length(text, i);
      parts.push_back(text.substr(start, i - start));
    }
    return parts;
  }
  if (!separator.is(ValueKind::kString)) fail("split(): the separator must be a string or none");
  if (separator.text.empty()) fail("split(): empty separator");
  size_t at = 0;
  while (true) {
    const size_t found = text.find(separator.text, at);
    if (found == std::string::npos || (max_split >= 0 && static_cast<int64_t>(parts.size()) >= max_split)) break;
    parts.push_back(text.substr(at, found - at));
    at = found + separator.text.size();
  }
  parts.push_back(text.substr(at));
  return parts;
}

Value strings(const std::vector<std::string>& parts) {
  std::vector<Value> items;
  for (const std::string& part : parts) items.push_back(Value::of(part));
  return Value::array(std::move(items));
}

// \b\w -> upper, as @huggingface/jinja's title (the rest is left as is).
std::string title_case(const std::string& text) {
  std::string out = text;
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < out.size(); ++i) {
    if (word(out[i]) && (i == 0 || !word(out[i - 1]))) out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[i])));
  }
  return out;
}

std::string capitalize(const std::string& text) {
  if (text.empty()) return text;
  const size_t first = char_length(text, 0);
  return to_upper(text.substr(0, first)) + text.substr(first);
}

Value strip_method(const Value& object, const CallArgs& args, bool start, bool end) {
  const Value& chars = argument(args, 0, "chars", Value());
  if (chars.is(ValueKind::kString)) return Value::of(strip_chars(object.text, chars.text, start, end));
  std::string text = object.text;
  if (start) text = trim_start(text);
  if (end) text = trim_end(text);
  return Value::of(text);
}

bool starts_or_ends(const Value& object, const CallArgs& args, bool ends, const char* name) {
  const Value& pattern = argument(args, 0, "prefix", Value());
  const auto match = [&](const std::string& p) {
    if (p.size() > object.text.size()) return false;
    return ends ? object.text.compare(object.text.size() - p.size(), p.size(), p) == 0
                : object.text.compare(0, p.size(), p) == 0;
  };
  if (pattern.is(ValueKind::kString)) return match(pattern.text);
  if (pattern.is(ValueKind::kArray)) {
    for (const Value& item : *pattern.items) {
      if (!item.is(ValueKind::kString)) fail(std::string(name) + "(): tuple elements must be strings");
      if (match(item.text)) return true;
    }
    return false;
  }
  fail(std::string(name) + "(): the argument must be a string or a tuple of strings");
}

Value items_of(const Value& object) {
  std::vector<Value> items;
  for (const auto& [key, value] : *object.members) items.push_back(Value::array({Value::of(key), value}));
  return Value::array(std::move(items));
}

// Ordering for sort/dictsort: numbers with numbers, strings with strings.
int compare(const Value& a, const Value& b, bool case_sensitive) {
  const auto number_like = [](const Value& v) { return v.is_number() || v.is(ValueKind::kBool); };
  const auto number = [](const Value& v) {
    return v.is(ValueKind::kInt) ? static_cast<double>(v.integer) : v.is(ValueKind::kFloat) ? v.real : double(v.boolean);
  };
  if (number_like(a) && number_like(b)) return number(a) < number(b) ? -1 : number(a) > number(b) ? 1 : 0;
  if (a.is(ValueKind::kString) && b.is(ValueKind::kString)) {
    const std::string x = case_sensitive ? a.text : to_lower(a.text), y = case_sensitive ? b.text : to_lower(b.text);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.kind == b.kind && (a.is(ValueKind::kNone) || a.is(ValueKind::kUndefined))) return 0;
  fail(std::string("cannot compare ") + value_kind_name(a.kind) + " with " + value_kind_name(b.kind));
}

// item.a.b (dots descend into dicts and list indices).
Value attribute_path(const Value& item, const std::string& path) {
  Value value = item;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (value.is_mapping()) {
      const Value* member = value.find(part);
      if (member == nullptr) return Value();
      value = *member;
    } else if (value.is(ValueKind::kArray) && !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit)) {
      const size_t index = std::stoul(part);
      if (index >= value.items->size()) return Value();
      value = (*value.items)[index];
    } else {
      return Value();
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return value;
}

Value sort_filter(const Value& operand, const CallArgs& args) {
  const bool reverse = argument(args, 0, "reverse", Value::of(false)).truthy();
  const bool case_sensitive = argument(args, 1, "case_sensitive", Value::of(false)).truthy();
  const Value& attribute = argument(args, 2, "attribute", Value::none());
  std::vector<Value> items = *operand.items;
  const auto key = [&](const Value& v) {
    if (attribute.is(ValueKind::kString)) return attribute_path(v, attribute.text);
    if (attribute.is(ValueKind::kInt)) return attribute_path(v, std::to_string(attribute.integer));
    return v;
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const int order = compare(key(a), key(b), case_sensitive);
    return reverse ? order > 0 : order < 0;
  });
  return Value::array(std::move(items));
}

Value select_filter(const Value& operand, const CallArgs& args, bool select, const std::string& name) {
  const std::string attribute = string_argument(args, 0, "attribute", name);
  const Value& test = argument(args, 1, "test", Value());
  if (!test.is(ValueKind::kUndefined) && !test.is(ValueKind::kString)) fail(name + ": the test must be a string");
  if (test.is(ValueKind::kString) && !is_known_test(test.text)) fail(name + ": unsupported test '" + test.text + "'");
  const std::vector<Value> test_args(args.positional.size() > 2 ? args.positional.begin() + 2 : args.positional.end(),
                                     args.positional.end());
  std::vector<Value> kept;
  for (const Value& item : *operand.items) {
    if (!item.is_mapping()) fail(name + " can only be applied to a list of dicts");
    const Value* member = item.find(attribute);
    const bool passes =
        member != nullptr && (test.is(ValueKind::kString) ? apply_test(test.text, *member, test_args) : member->truthy());
    if (passes == select) kept.push_back(item);
  }
  return Value::array(std::move(kept));
}

Value join_filter(const Value& operand, const CallArgs& args) {
  const Value& separator = argument(args, 0, "d", Value::of(std::string()));
  if (!separator.is(ValueKind::kString)) fail("join: the separator must be a string");
  std::vector<std::string> parts;
  if (operand.is(ValueKind::kString)) {
    parts = code_points(operand.text);
  } else {
    for (const Value& item : *operand.items) parts.push_back(item.str());
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? separator.text : "") + parts[i];
  return Value::of(out);
}

Value indent_filter(const Value& operand, const CallArgs& args) {
  const Value& width = argument(args, 0, "width", Value::of(int64_t{4}));
  const bool first = argument(args, 1, "first", Value::of(false)).truthy();
  const bool blank = argument(args, 2, "blank", Value::of(false)).truthy();
  const std::string pad = width.is(ValueKind::kString) ? width.text : std::string(std::max<int64_t>(width.integer, 0), ' ');
  std::string out;
  size_t start = 0;
  for (int line = 0;; ++line) {
    const size_t end = operand.text.find('\n', start);
    const std::string text = operand.text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if ((line > 0 || first) && (!text.empty() || blank)) out += pad;
    out += text;
    if (end == std::string::npos) break;
    out += '\n';
    start = end + 1;
  }
  return Value::of(out);
}

Value number_filter(const std::string& name, const Value& operand, const CallArgs& args) {
  const bool to_int = name == "int";
  const Value fallback = to_int ? Value::of(int64_t{0}) : Value::of_real(0.0);
  const Value& default_value = argument(args, 0, "default", fallback);
  switch (operand.kind) {
    case ValueKind::kInt: return to_int ? operand : Value::of_real(static_cast<double>(operand.integer));
    case ValueKind::kFloat: return to_int ? Value::of(static_cast<int64_t>(std::floor(operand.real))) : operand;
    case ValueKind::kBool: return to_int ? Value::of(int64_t{operand.boolean}) : Value::of_real(operand.boolean);
    case ValueKind::kString: {
      try {
        size_t used = 0;
        const std::string text = trim_start(operand.text);
        if (to_int) {
          const int64_t value = std::stoll(text, &used, 10);
          return Value::of(value);
        }
        return Value::of_real(std::stod(text, &used));
      } catch (const std::exception&) {
        return default_value;
      }
    }
    default: fail(name + " cannot be applied to a " + value_kind_name(operand.kind));
  }
}

JsonStyle json_style(const CallArgs& args) {
  JsonStyle style;
  if (const Value* indent = args.keyword_arg("indent"); indent != nullptr && indent->is(ValueKind::kInt)) {
    style.indent = static_cast<int>(indent->integer);
  }
  if (const Value* ascii = args.keyword_arg("ensure_ascii")) style.ensure_ascii = ascii->truthy();
  if (const Value* sort = args.keyword_arg("sort_keys")) style.sort_keys = sort->truthy();
  if (const Value* separators = args.keyword_arg("separators"); separators != nullptr && separators->is(ValueKind::kArray)) {
    if (separators->items->size() != 2 || !(*separators->items)[0].is(ValueKind::kString) ||
        !(*separators->items)[1].is(ValueKind::kString)) {
      fail("tojson: separators must be two strings");
    }
    style.item_separator = (*separators->items)[0].text;
    style.key_separator = (*separators->items)[1].text;
  }
  return style;
}

std::string strftime_now(const std::string& format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[256];
  const size_t length = std::strftime(buffer, sizeof(buffer), format.c_str(), &local);
  return std::string(buffer, length);
}

}  // namespace

bool is_known_filter(const std::string& name) { return filters().count(name) > 0; }

bool is_known_test(const std::string& name) {
  static const std::set<std::string> names = {"boolean", "callable", "odd", "even", "false", "true", "none",
                                              "string", "number", "integer", "iterable", "mapping", "sequence",
                                              "lower", "upper", "defined", "undefined"};
  return names.count(name) > 0 || test_takes_argument(name);
}

bool test_takes_argument(const std::string& name) {
  static const std::set<std::string> names = {"equalto", "eq", "==", "ne", "!=", "sameas", "divisibleby", "in",
                                              "gt", "ge", "lt", "le", ">", ">=", "<", "<="};
  return names.count(name) > 0;
}

bool is_known_method(const std::string& name) {
  static const std::set<std::string> names = {"upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize",
                                              "startswith", "endswith", "split", "replace", "get", "items", "keys",
                                              "values", "dictsort"};
  return names.count(name) > 0;
}

bool is_global_function(const std::string& name) {
  return name == "raise_exception" || name == "namespace" || name == "range" || name == "strftime_now";
}

bool apply_test(const std::string& name, const Value& v, const std::vector<Value>& args) {
  if (test_takes_argument(name)) {
    if (args.size() != 1) fail("test '" + name + "' takes one argument");
    const Value& other = args[0];
    if (name == "equalto" || name == "eq" || name == "==") return values_equal(v, other);
    if (name == "ne" || name == "!=") return !values_equal(v, other);
    if (name == "sameas") {
      if (v.kind != other.kind) return false;
      return v.is(ValueKind::kArray) ? v.items == other.items
             : v.is_mapping()        ? v.members == other.members
                                     : values_equal(v, other);
    }
    if (name == "in") {
      if (other.is(ValueKind::kArray)) {
        return std::any_of(other.items->begin(), other.items->end(), [&](const Value& x) { return values_equal(x, v); });
      }
      if (other.is(ValueKind::kString) && v.is(ValueKind::kString)) return other.text.find(v.text) != std::string::npos;
      if (other.is(ValueKind::kObject) && v.is(ValueKind::kString)) return other.find(v.text) != nullptr;
      fail(std::string("test 'in' cannot look in a ") + value_kind_name(other.kind));
    }
    if (name == "divisibleby") {
      if (!v.is(ValueKind::kInt) || !other.is(ValueKind::kInt) || other.integer == 0) {
        fail("test 'divisibleby' needs integers (and a non-zero divisor)");
      }
      return v.integer % other.integer == 0;
    }
    const int order = compare(v, other, /*case_sensitive=*/true);
    if (name == "gt" || name == ">") return order > 0;
    if (name == "ge" || name == ">=") return order >= 0;
    if (name == "lt" || name == "<") return order < 0;
    return order <= 0;
  }
  if (name == "defined") return !v.is(ValueKind::kUndefined);
  if (name == "undefined") return v.is(ValueKind::kUndefined);
  if (name == "none") return v.is(ValueKind::kNone);
  if (name == "string") return v.is(ValueKind::kString);
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is(ValueKind::kInt);
  if (name == "boolean") return v.is(ValueKind::kBool);
  if (name == "true") return v.is(ValueKind::kBool) && v.boolean;
  if (name == "false") return v.is(ValueKind::kBool) && !v.boolean;
  if (name == "callable") return v.is(ValueKind::kFunction);
  if (name == "iterable") return v.is(ValueKind::kArray) || v.is(ValueKind::kString);
  if (name == "mapping") return v.is(ValueKind::kObject);
  if (name == "sequence") return v.is(ValueKind::kArray) || v.is(ValueKind::kObject) || v.is(ValueKind::kString);
  if (name == "lower") return v.is(ValueKind::kString) && v.text == to_lower(v.text);
  if (name == "upper") return v.is(ValueKind::kString) && v.text == to_upper(v.text);
  if (name == "odd" || name == "even") {
    if (!v.is(ValueKind::kInt)) fail("test '" + name + "' needs an integer, got a " + value_kind_name(v.kind));
    return (v.integer % 2 != 0) == (name == "odd");
  }
  fail("unsupported test '" + name + "'");
}

Value apply_filter(const std::string& name, const Value& operand, const CallArgs& args) {
  if (name == "safe") return operand;
  if (name == "tojson") return Value::of(value_to_json(operand, json_style(args)));
  if (name == "default" || name == "d") {
    const bool boolean = argument(args, 1, "boolean", Value::of(false)).truthy();
    if (operand.is(ValueKind::kUndefined) || (boolean && !operand.truthy())) {
      return argument(args, 0, "default_value", Value::of(std::string()));
    }
    return operand;
  }
  if (name == "int" || name == "float") return number_filter(name, operand, args);
  const std::string what = std::string("filter '") + name + "' cannot be applied to a " + value_kind_name(operand.kind);
  if (operand.is(ValueKind::kArray)) {
    const std::vector<Value>& items = *operand.items;
    if (name == "list") return operand;
    if (name == "first") return items.empty() ? Value() : items.front();
    if (name == "last") return items.empty() ? Value() : items.back();
    if (name == "length" || name == "count") return Value::of(static_cast<int64_t>(items.size()));
    if (name == "reverse") return Value::array(std::vector<Value>(items.rbegin(), items.rend()));
    if (name == "sort") return sort_filter(operand, args);
    if (name == "join") return join_filter(operand, args);
    if (name == "string") return Value::of(operand.str());
    if (name == "unique") {
      std::vector<Value> unique;
      for (const Value& item : items) {
        if (std::none_of(unique.begin(), unique.end(), [&](const Value& u) { return values_equal(u, item); })) {
          unique.push_back(item);
        }
      }
      return Value::array(std::move(unique));
    }
    if (name == "selectattr" || name == "rejectattr") return select_filter(operand, args, name == "selectattr", name);
    if (name == "select" || name == "reject") {
      std::vector<Value> kept;
      const std::string test = args.positional.empty() ? "" : args.positional[0].str();
      if (!test.empty() && !is_known_test(test)) fail(name + ": unsupported test '" + test + "'");
      const std::vector<Value> test_args(args.positional.size() > 1 ? args.positional.begin() + 1 : args.positional.end(),
                                         args.positional.end());
      for (const Value& item : items) {
        const bool passes = test.empty() ? item.truthy() : apply_test(test, item, test_args);
        if (passes == (name == "select")) kept.push_back(item);
      }
      return Value::array(std::move(kept));
    }
    if (name == "map") {
      const Value* attribute = args.keyword_arg("attribute");
      if (attribute == nullptr || !attribute->is(ValueKind::kString)) fail("map: only map(attribute='name') is supported");
      const Value* fallback = args.keyword_arg("default");
      std::vector<Value> mapped;
      for (const Value& item : items) {
        if (!item.is_mapping()) fail("map: the items must be dicts");
        Value value = attribute_path(item, attribute->text);
        mapped.push_back(value.is(ValueKind::kUndefined) && fallback != nullptr ? *fallback : value);
      }
      return Value::array(std::move(mapped));
    }
    fail(what);
  }
  if (operand.is(ValueKind::kString)) {
    const std::string& text = operand.text;
    if (name == "length" || name == "count") return Value::of(static_cast<int64_t>(code_points(text).size()));
    if (name == "upper") return Value::of(to_upper(text));
    if (name == "lower") return Value::of(to_lower(text));
    if (name == "title") return Value::of(title_case(text));
    if (name == "capitalize") return Value::of(capitalize(text));
    if (name == "trim") return Value::of(trim_end(trim_start(text)));
    if (name == "string") return operand;
    if (name == "join") return join_filter(operand, args);
    if (name == "indent") return indent_filter(operand, args);
    if (name == "first") return text.empty() ? Value() : Value::of(text.substr(0, char_length(text, 0)));
    if (name == "last") return text.empty() ? Value() : Value::of(code_points(text).back());
    if (name == "reverse") {
      std::vector<std::string> chars = code_points(text);
      std::string out;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
      return Value::of(out);
    }
    if (name == "replace") {
      const Value& count = argument(args, 2, "count", Value::none());
      return Value::of(replace_all(text, string_argument(args, 0, "old", name), string_argument(args, 1, "new", name),
                                   count.is(ValueKind::kInt) ? count.integer : -1));
    }
    fail(what);
  }
  if (operand.is_number()) {
    if (name == "abs") {
      return operand.is(ValueKind::kInt) ? Value::of(operand.integer < 0 ? -operand.integer : operand.integer)
                                         : Value::of_real(std::fabs(operand.real));
    }
    if (name == "string") return Value::of(operand.str());
    fail(what);
  }
  if (operand.is(ValueKind::kObject)) {
    if (name == "items") return items_of(operand);
    if (name == "length" || name == "count") return Value::of(static_cast<int64_t>(operand.members->size()));
    if (name == "dictsort") {
      const Value method = builtin_member(operand, "dictsort");
      return (*method.function)(args);
    }
    fail(what);
  }
  if (operand.is(ValueKind::kBool)) {
    if (name == "bool") return operand;
    if (name == "string") return Value::of(operand.str());
  }
  fail(what);
}

Value builtin_member(const Value& object, const std::string& name) {
  if (object.is(ValueKind::kString)) {
    const Value self = object;
    if (name == "length") return Value::of(static_cast<int64_t>(code_points(object.text).size()));
    if (name == "upper") return Value::callable([self](const CallArgs&) { return Value::of(to_upper(self.text)); });
    if (name == "lower") return Value::callable([self](const CallArgs&) { return Value::of(to_lower(self.text)); });
    if (name == "title") return Value::callable([self](const CallArgs&) { return Value::of(title_case(self.text)); });
    if (name == "capitalize") return Value::callable([self](const CallArgs&) { return Value::of(capitalize(self.text)); });
    if (name == "strip") return Value::callable([self](const CallArgs& a) { return strip_method(self, a, true, true); });
    if (name == "lstrip") return Value::callable([self](const CallArgs& a) { return strip_method(self, a, true, false); });
    if (name == "rstrip") return Value::callable([self](const CallArgs& a) { return strip_method(self, a, false, true); });
    if (name == "startswith" || name == "endswith") {
      const bool ends = name == "endswith";
      return Value::callable([self, ends](const CallArgs& a) {
        return Value::of(starts_or_ends(self, a, ends, ends ? "endswith" : "startswith"));
      });
    }
    if (name == "split") {
      return Value::callable([self](const CallArgs& a) {
        const Value& max_split = argument(a, 1, "maxsplit", Value::of(int64_t{-1}));
        if (!max_split.is(ValueKind::kInt)) fail("split(): maxsplit must be an integer");
        return strings(split(self.text, argument(a, 0, "sep", Value::none()), max_split.integer));
      });
    }
    if (name == "replace") {
      return Value::callable([self](const CallArgs& a) {
        const Value& count = argument(a, 2, "count", Value::none());
        return Value::of(replace_all(self.text, string_argument(a, 0, "old", "replace()"),
                                     string_argument(a, 1, "new", "replace()"), count.is(ValueKind::kInt) ? count.integer : -1));
      });
    }
    return Value();
  }
  if (object.is(ValueKind::kArray)) {
    return name == "length" ? Value::of(static_cast<int64_t>(object.items->size())) : Value();
  }
  if (!object.is(ValueKind::kObject)) return Value();
  const Value self = object;
  if (name == "get") {
    return Value::callable([self](const CallArgs& a) {
      const Value& key = argument(a, 0, "key", Value());
      if (!key.is(ValueKind::kString)) fail("get(): the key must be a string");
      const Value* found = self.find(key.text);
      return found != nullptr ? *found : argument(a, 1, "default", Value::none());
    });
  }
  if (name == "items") return Value::callable([self](const CallArgs&) { return items_of(self); });
  if (name == "keys" || name == "values") {
    const bool keys = name == "keys";
    return Value::callable([self, keys](const CallArgs&) {
      std::vector<Value> out;
      for (const auto& [key, value] : *self.members) out.push_back(keys ? Value::of(key) : value);
      return Value::array(std::move(out));
    });
  }
  if (name == "dictsort") {
    return Value::callable([self](const CallArgs& a) {
      const bool case_sensitive = argument(a, 0, "case_sensitive", Value::of(false)).truthy();
      const Value& by = argument(a, 1, "by", Value::of(std::string("key")));
      const bool reverse = argument(a, 2, "reverse", Value::of(false)).truthy();
      if (!by.is(ValueKind::kString) || (by.text != "key" && by.text != "value")) fail("dictsort: by must be 'key' or 'value'");
      const size_t index = by.text == "key" ? 0 : 1;
      std::vector<Value> pairs = *items_of(self).items;
      std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
        const int order = compare((*x.items)[index], (*y.items)[index], case_sensitive);
        return reverse ? order > 0 : order < 0;
      });
      return Value::array(std::move(pairs));
    });
  }
  return Value();
}

Members global_functions() {
  Members globals;
  globals.emplace_back("raise_exception", Value::callable([](const CallArgs& a) -> Value {
    const Value& message = argument(a, 0, "message", Value::of(std::string()));
    SEED_FAIL(kInvalidArgument) << "raise_exception: " << message.str();
  }));
  globals.emplace_back("range", Value::callable([](const CallArgs& a) {
    for (const Value& v : a.positional) {
      if (!v.is(ValueKind::kInt)) fail("range(): arguments must be integers");
    }
    if (a.positional.empty() || a.positional.size() > 3) fail("range() takes 1 to 3 integers");
    const int64_t start = a.positional.size() > 1 ? a.positional[0].integer : 0;
    const int64_t stop = a.positional.size() > 1 ? a.positional[1].integer : a.positional[0].integer;
    const int64_t step = a.positional.size() > 2 ? a.positional[2].integer : 1;
    if (step == 0) fail("range() step must not be zero");
    std::vector<Value> out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(Value::of(i));
    return Value::array(std::move(out));
  }));
  globals.emplace_back("namespace", Value::callable([](const CallArgs& a) {
    if (a.positional.size() > 1) fail("namespace() takes at most one positional argument");
    Members members;
    if (!a.positional.empty()) {
      if (!a.positional[0].is(ValueKind::kObject)) fail("namespace() takes a dict");
      members = *a.positional[0].members;
    }
    Value ns = Value::object(std::move(members), ValueKind::kNamespace);
    for (const auto& [key, value] : a.keyword) ns.set(key, value);
    return ns;
  }));
  globals.emplace_back("strftime_now", Value::callable([](const CallArgs& a) {
    return Value::of(strftime_now(string_argument(a, 0, "format", "strftime_now()")));
  }));
  return globals;
}

}  // namespace seed::models::chat
