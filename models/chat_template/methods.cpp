// The methods and properties of strings, lists and dicts (s.strip(),
// d.items(), xs.length): builtin_member and is_known_method.
#include <algorithm>
#include <cstdint>
#include <set>

#include "models/chat_template/builtin_support.h"
#include "models/chat_template/builtins.h"
#include "models/chat_template/text.h"

namespace seed::models::chat {
namespace {

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
  if (!separator.is(ValueKind::kString)) builtin_error("split(): the separator must be a string or none");
  if (separator.text.empty()) builtin_error("split(): empty separator");
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
      if (!item.is(ValueKind::kString)) builtin_error(std::string(name) + "(): tuple elements must be strings");
      if (match(item.text)) return true;
    }
    return false;
  }
  builtin_error(std::string(name) + "(): the argument must be a string or a tuple of strings");
}

}  // namespace

bool is_known_method(const std::string& name) {
  static const std::set<std::string> names = {"upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize",
                                              "startswith", "endswith", "split", "replace", "get", "items", "keys",
                                              "values", "dictsort"};
  return names.count(name) > 0;
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
        if (!max_split.is(ValueKind::kInt)) builtin_error("split(): maxsplit must be an integer");
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
      if (!key.is(ValueKind::kString)) builtin_error("get(): the key must be a string");
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
      if (!by.is(ValueKind::kString) || (by.text != "key" && by.text != "value")) builtin_error("dictsort: by must be 'key' or 'value'");
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

}  // namespace seed::models::chat
