// The filters (x | name(args)): apply_filter and is_known_filter.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "models/chat_template/builtin_support.h"
#include "models/chat_template/builtins.h"
#include "models/chat_template/text.h"

namespace seed::models::chat {
namespace {

// Wider indentation is no formatting, and would be allocated for every line.
constexpr int64_t kMaxIndent = 1024;

const std::set<std::string>& filters() {
  static const std::set<std::string> names = {
      "safe", "tojson", "list", "first", "last", "length", "count", "reverse", "sort", "join", "string", "unique",
      "upper", "lower", "title", "capitalize", "trim", "indent", "int", "float", "abs", "items", "default", "d",
      "selectattr", "rejectattr", "select", "reject", "map", "replace", "dictsort", "bool"};
  return names;
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
      // More digits than any list has items (and than stoul can hold): absent.
      if (part.size() > 9) return Value();
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
  if (!test.is(ValueKind::kUndefined) && !test.is(ValueKind::kString)) builtin_error(name + ": the test must be a string");
  if (test.is(ValueKind::kString) && !is_known_test(test.text)) builtin_error(name + ": unsupported test '" + test.text + "'");
  const std::vector<Value> test_args(args.positional.size() > 2 ? args.positional.begin() + 2 : args.positional.end(),
                                     args.positional.end());
  std::vector<Value> kept;
  for (const Value& item : *operand.items) {
    if (!item.is_mapping()) builtin_error(name + " can only be applied to a list of dicts");
    const Value* member = item.find(attribute);
    const bool passes =
        member != nullptr && (test.is(ValueKind::kString) ? apply_test(test.text, *member, test_args) : member->truthy());
    if (passes == select) kept.push_back(item);
  }
  return Value::array(std::move(kept));
}

Value join_filter(const Value& operand, const CallArgs& args) {
  const Value& separator = argument(args, 0, "d", Value::of(std::string()));
  if (!separator.is(ValueKind::kString)) builtin_error("join: the separator must be a string");
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
  if (width.is(ValueKind::kInt) && width.integer > kMaxIndent) builtin_error("indent wider than " + std::to_string(kMaxIndent));
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
    case ValueKind::kFloat: return to_int ? integer_result(std::floor(operand.real)) : operand;
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
    default: builtin_error(name + " cannot be applied to a " + value_kind_name(operand.kind));
  }
}

JsonStyle json_style(const CallArgs& args) {
  JsonStyle style;
  if (const Value* indent = args.keyword_arg("indent"); indent != nullptr && indent->is(ValueKind::kInt)) {
    if (indent->integer > kMaxIndent) builtin_error("tojson: indent wider than " + std::to_string(kMaxIndent));
    style.indent = static_cast<int>(std::max<int64_t>(indent->integer, -1));
  }
  if (const Value* ascii = args.keyword_arg("ensure_ascii")) style.ensure_ascii = ascii->truthy();
  if (const Value* sort = args.keyword_arg("sort_keys")) style.sort_keys = sort->truthy();
  if (const Value* separators = args.keyword_arg("separators"); separators != nullptr && separators->is(ValueKind::kArray)) {
    if (separators->items->size() != 2 || !(*separators->items)[0].is(ValueKind::kString) ||
        !(*separators->items)[1].is(ValueKind::kString)) {
      builtin_error("tojson: separators must be two strings");
    }
    style.item_separator = (*separators->items)[0].text;
    style.key_separator = (*separators->items)[1].text;
  }
  return style;
}

}  // namespace

bool is_known_filter(const std::string& name) { return filters().count(name) > 0; }

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
      if (!test.empty() && !is_known_test(test)) builtin_error(name + ": unsupported test '" + test + "'");
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
      if (attribute == nullptr || !attribute->is(ValueKind::kString)) builtin_error("map: only map(attribute='name') is supported");
      const Value* fallback = args.keyword_arg("default");
      std::vector<Value> mapped;
      for (const Value& item : items) {
        if (!item.is_mapping()) builtin_error("map: the items must be dicts");
        Value value = attribute_path(item, attribute->text);
        mapped.push_back(value.is(ValueKind::kUndefined) && fallback != nullptr ? *fallback : value);
      }
      return Value::array(std::move(mapped));
    }
    builtin_error(what);
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
    builtin_error(what);
  }
  if (operand.is_number()) {
    if (name == "abs") {
      return operand.is(ValueKind::kInt) ? integer_result(operand.integer < 0 ? -__int128{operand.integer} : operand.integer)
                                         : Value::of_real(std::fabs(operand.real));
    }
    if (name == "string") return Value::of(operand.str());
    builtin_error(what);
  }
  if (operand.is(ValueKind::kObject)) {
    if (name == "items") return items_of(operand);
    if (name == "length" || name == "count") return Value::of(static_cast<int64_t>(operand.members->size()));
    if (name == "dictsort") {
      const Value method = builtin_member(operand, "dictsort");
      return (*method.function)(args);
    }
    builtin_error(what);
  }
  if (operand.is(ValueKind::kBool)) {
    if (name == "bool") return operand;
    if (name == "string") return Value::of(operand.str());
  }
  builtin_error(what);
}

}  // namespace seed::models::chat
