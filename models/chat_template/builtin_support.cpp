#include "models/chat_template/builtin_support.h"

#include <cctype>
#include <cstdint>
#include <limits>

#include "models/base/error.h"
#include "models/chat_template/text.h"

namespace seed::models::chat {

void builtin_error(const std::string& message) { SEED_FAIL(kInvalidArgument) << message; }

Value integer_result(__int128 value) {
  if (value < std::numeric_limits<int64_t>::min() || value > std::numeric_limits<int64_t>::max()) {
    builtin_error("an integer past 64 bits");
  }
  return Value::of(static_cast<int64_t>(value));
}

Value integer_result(double value) {
  // 2^63 is exact in a double; every double below it (and from -2^63) fits.
  if (!(value >= -0x1p63 && value < 0x1p63)) builtin_error("an integer past 64 bits");
  return Value::of(static_cast<int64_t>(value));
}

Value argument(const CallArgs& args, size_t index, const char* keyword, const Value& fallback) {
  if (index < args.positional.size()) return args.positional[index];
  const Value* value = args.keyword_arg(keyword);
  return value != nullptr ? *value : fallback;
}

std::string string_argument(const CallArgs& args, size_t index, const char* keyword, const std::string& what) {
  const Value& value = argument(args, index, keyword, Value());
  if (!value.is(ValueKind::kString)) builtin_error(what + ": argument '" + keyword + "' must be a string");
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

Value items_of(const Value& object) {
  std::vector<Value> items;
  for (const auto& [key, value] : *object.members) items.push_back(Value::array({Value::of(key), value}));
  return Value::array(std::move(items));
}


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
  builtin_error(std::string("cannot compare ") + value_kind_name(a.kind) + " with " + value_kind_name(b.kind));
}


}  // namespace seed::models::chat
