// The tests (x is name) and the global functions.
#include "models/chat_template/builtins.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <set>

#include "models/base/error.h"
#include "models/chat_template/builtin_support.h"
#include "models/chat_template/text.h"

namespace seed::models::chat {
namespace {

// range() builds its list in memory; Jinja's sandbox caps it the same way.
constexpr int64_t kMaxRange = 100000;

std::string strftime_now(const std::string& format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[256];
  const size_t length = std::strftime(buffer, sizeof(buffer), format.c_str(), &local);
  return std::string(buffer, length);
}

}  // namespace

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

bool is_global_function(const std::string& name) {
  return name == "raise_exception" || name == "namespace" || name == "range" || name == "strftime_now";
}

bool apply_test(const std::string& name, const Value& v, const std::vector<Value>& args) {
  if (test_takes_argument(name)) {
    if (args.size() != 1) builtin_error("test '" + name + "' takes one argument");
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
      builtin_error(std::string("test 'in' cannot look in a ") + value_kind_name(other.kind));
    }
    if (name == "divisibleby") {
      if (!v.is(ValueKind::kInt) || !other.is(ValueKind::kInt) || other.integer == 0) {
        builtin_error("test 'divisibleby' needs integers (and a non-zero divisor)");
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
    if (!v.is(ValueKind::kInt)) builtin_error("test '" + name + "' needs an integer, got a " + value_kind_name(v.kind));
    return (v.integer % 2 != 0) == (name == "odd");
  }
  builtin_error("unsupported test '" + name + "'");
}

Members global_functions() {
  Members globals;
  globals.emplace_back("raise_exception", Value::callable([](const CallArgs& a) -> Value {
    const Value& message = argument(a, 0, "message", Value::of(std::string()));
    SEED_FAIL(kInvalidArgument) << "raise_exception: " << message.str();
  }));
  globals.emplace_back("range", Value::callable([](const CallArgs& a) {
    for (const Value& v : a.positional) {
      if (!v.is(ValueKind::kInt)) builtin_error("range(): arguments must be integers");
    }
    if (a.positional.empty() || a.positional.size() > 3) builtin_error("range() takes 1 to 3 integers");
    const int64_t start = a.positional.size() > 1 ? a.positional[0].integer : 0;
    const int64_t stop = a.positional.size() > 1 ? a.positional[1].integer : a.positional[0].integer;
    const int64_t step = a.positional.size() > 2 ? a.positional[2].integer : 1;
    if (step == 0) builtin_error("range() step must not be zero");
    // In 128 bits: stop - start and the last value may pass int64.
    const __int128 span = static_cast<__int128>(stop) - start;
    const __int128 count = (span > 0) != (step > 0) || span == 0 ? 0 : (span + step + (step > 0 ? -1 : 1)) / step;
    if (count > kMaxRange) builtin_error("range() of more than " + std::to_string(kMaxRange) + " numbers");
    std::vector<Value> out;
    for (int64_t k = 0; k < count; ++k) out.push_back(Value::of(static_cast<int64_t>(start + static_cast<__int128>(k) * step)));
    return Value::array(std::move(out));
  }));
  globals.emplace_back("namespace", Value::callable([](const CallArgs& a) {
    if (a.positional.size() > 1) builtin_error("namespace() takes at most one positional argument");
    Members members;
    if (!a.positional.empty()) {
      if (!a.positional[0].is(ValueKind::kObject)) builtin_error("namespace() takes a dict");
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
