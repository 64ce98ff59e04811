#include "models/chat_template/expression_evaluator.h"

#include <cmath>
#include <cstdint>
#include <optional>

#include "models/chat_template/builtin_support.h"
#include "models/chat_template/builtins.h"
#include "models/chat_template/lexer.h"
#include "models/chat_template/text.h"

namespace seed::models::chat {
namespace {

constexpr size_t kMaxListItems = size_t{1} << 20;

double as_double(const Value& v) { return v.is(ValueKind::kInt) ? static_cast<double>(v.integer) : v.real; }

}  // namespace

CallArgs ExpressionEvaluator::arguments(const Node& node, size_t first, Scope& scope) {
  CallArgs args;
  for (size_t i = first; i < node.children.size(); ++i) {
    const Node& argument = *node.children[i];
    if (argument.kind == NodeKind::kKeyword) {
      if (args.keyword_arg(argument.name) != nullptr) fail("keyword argument '" + argument.name + "' given twice");
      args.keyword.emplace_back(argument.name, evaluate(*argument.children[0], scope));
    } else {
      args.positional.push_back(evaluate(argument, scope));
    }
  }
  return args;
}

// Evaluates one expression; errors from below get its position.
Value ExpressionEvaluator::evaluate(const Node& node, Scope& scope) {
  try {
    const Nested nested(depth_);
    Value value = evaluate_here(node, scope);
    if (value.is(ValueKind::kString) && value.text.size() > kMaxTextBytes) {
      fail("a string longer than " + std::to_string(kMaxTextBytes) + " bytes");
    }
    if (value.is(ValueKind::kArray) && value.items->size() > kMaxListItems) {
      fail("a list of more than " + std::to_string(kMaxListItems) + " items");
    }
    return value;
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(kErrorPrefix, 0) == 0) throw;
    SEED_FAIL(kInvalidArgument) << "chat template " << position_name(node.line, node.column) << ": " << message;
  }
}

Value ExpressionEvaluator::evaluate_here(const Node& node, Scope& scope) {
  switch (node.kind) {
    case NodeKind::kLiteral: return node.literal;
    case NodeKind::kName: {
      const Value* value = scope.find(node.name);
      return value != nullptr ? *value : Value();
    }
    case NodeKind::kArray:
    case NodeKind::kTuple: {
      std::vector<Value> items;
      for (const NodePtr& child : node.children) items.push_back(evaluate(*child, scope));
      return Value::array(std::move(items));
    }
    case NodeKind::kObject: {
      Value object = Value::object();
      for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
        const Value key = evaluate(*node.children[i], scope);
        if (!key.is(ValueKind::kString)) fail("dict keys must be strings");
        object.set(key.text, evaluate(*node.children[i + 1], scope));
      }
      return object;
    }
    case NodeKind::kMember: return member(node, scope);
    case NodeKind::kSlice: return slice(node, scope);
    case NodeKind::kCall: {
      const Value callee = evaluate(*node.children[0], scope);
      if (!callee.is(ValueKind::kFunction)) {
        const Node& name = *node.children[0];
        fail("'" + name.name + "' is not callable here (it is " + value_kind_name(callee.kind) + ")");
      }
      const CallArgs args = arguments(node, 1, scope);
      Scope* saved = current_;
      current_ = &scope;
      Value result = (*callee.function)(args);
      current_ = saved;
      return result;
    }
    case NodeKind::kFilter:
      return apply_filter(node.name, evaluate(*node.children[0], scope), arguments(node, 1, scope));
    case NodeKind::kTest: {
      const Value operand = evaluate(*node.children[0], scope);
      const CallArgs args = arguments(node, 1, scope);
      const bool result = apply_test(node.name, operand, args.positional);
      return Value::of(node.flag ? !result : result);
    }
    case NodeKind::kUnary: return unary(node, scope);
    case NodeKind::kBinary: return binary(node, scope);
    case NodeKind::kTernary:
      return evaluate(*node.children[evaluate(*node.children[0], scope).truthy() ? 1 : 2], scope);
    case NodeKind::kSelect:
      return evaluate(*node.children[1], scope).truthy() ? evaluate(*node.children[0], scope) : Value();
    default: fail("a statement cannot be used as a value");
  }
}

Value ExpressionEvaluator::member(const Node& node, Scope& scope) {
  const Value object = evaluate(*node.children[0], scope);
  if (!node.flag) {  // .name
    if (object.is_mapping()) {
      if (const Value* found = object.find(node.name)) return *found;
      return object.is(ValueKind::kObject) ? builtin_member(object, node.name) : Value();
    }
    return builtin_member(object, node.name);
  }
  const Value key = evaluate(*node.children[1], scope);
  if (object.is_mapping()) {
    if (!key.is(ValueKind::kString)) fail(std::string("a dict key must be a string, got ") + value_kind_name(key.kind));
    if (const Value* found = object.find(key.text)) return *found;
    return object.is(ValueKind::kObject) ? builtin_member(object, key.text) : Value();
  }
  if (object.is(ValueKind::kArray) || object.is(ValueKind::kString)) {
    if (key.is(ValueKind::kString)) return builtin_member(object, key.text);
    if (!key.is(ValueKind::kInt)) fail(std::string("a list index must be an integer, got ") + value_kind_name(key.kind));
    if (object.is(ValueKind::kArray)) {
      const auto size = static_cast<int64_t>(object.items->size());
      const int64_t index = key.integer < 0 ? key.integer + size : key.integer;
      return index >= 0 && index < size ? (*object.items)[index] : Value();
    }
    const std::vector<std::string> chars = code_points(object.text);
    const auto size = static_cast<int64_t>(chars.size());
    const int64_t index = key.integer < 0 ? key.integer + size : key.integer;
    return index >= 0 && index < size ? Value::of(chars[index]) : Value();
  }
  if (object.is(ValueKind::kUndefined)) return Value();
  fail(std::string("cannot subscript a ") + value_kind_name(object.kind));
}

// Python's slice rules (negative bounds count from the end; a negative step walks back).
Value ExpressionEvaluator::slice(const Node& node, Scope& scope) {
  const Value object = evaluate(*node.children[0], scope);
  if (!object.is(ValueKind::kArray) && !object.is(ValueKind::kString)) {
    fail(std::string("cannot slice a ") + value_kind_name(object.kind));
  }
  std::optional<int64_t> bounds[3];
  for (int k = 0; k < 3; ++k) {
    if (node.children[k + 1] == nullptr) continue;
    const Value v = evaluate(*node.children[k + 1], scope);
    if (v.is(ValueKind::kUndefined) || v.is(ValueKind::kNone)) continue;
    if (!v.is(ValueKind::kInt)) fail("slice bounds must be integers");
    bounds[k] = v.integer;
  }
  const int64_t step = bounds[2].value_or(1);
  if (step == 0) fail("slice step cannot be zero");
  std::vector<std::string> chars;
  if (object.is(ValueKind::kString)) chars = code_points(object.text);
  const int64_t length = object.is(ValueKind::kArray) ? static_cast<int64_t>(object.items->size())
                                                       : static_cast<int64_t>(chars.size());
  int64_t start, stop;
  if (step > 0) {
    start = !bounds[0] ? 0 : *bounds[0] < 0 ? std::max<int64_t>(length + *bounds[0], 0) : std::min(*bounds[0], length);
    stop = !bounds[1] ? length : *bounds[1] < 0 ? std::max<int64_t>(length + *bounds[1], 0) : std::min(*bounds[1], length);
  } else {
    start = !bounds[0] ? length - 1
            : *bounds[0] < 0 ? std::max<int64_t>(length + *bounds[0], -1)
                             : std::min(*bounds[0], length - 1);
    stop = !bounds[1] ? -1 : *bounds[1] < 0 ? std::max<int64_t>(length + *bounds[1], -1) : std::min(*bounds[1], length - 1);
  }
  std::vector<Value> items;
  std::string text;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    if (object.is(ValueKind::kArray)) {
      items.push_back((*object.items)[i]);
    } else {
      text += chars[i];
    }
    if (__builtin_add_overflow(i, step, &i)) break;  // a step past int64 is past either end
  }
  return object.is(ValueKind::kArray) ? Value::array(std::move(items)) : Value::of(text);
}

Value ExpressionEvaluator::unary(const Node& node, Scope& scope) {
  const Value operand = evaluate(*node.children[0], scope);
  if (node.name == "not") return Value::of(!operand.truthy());
  const int64_t sign = node.name == "-" ? -1 : 1;
  if (operand.is(ValueKind::kInt)) return integer_result(__int128{sign} * operand.integer);
  if (operand.is(ValueKind::kFloat)) return Value::of_real(sign * operand.real);
  if (operand.is(ValueKind::kBool)) return Value::of(sign * int64_t{operand.boolean});
  fail("unary " + node.name + " needs a number, got a " + value_kind_name(operand.kind));
}

Value ExpressionEvaluator::binary(const Node& node, Scope& scope) {
  const std::string& op = node.name;
  const Value left = evaluate(*node.children[0], scope);
  if (op == "and") return left.truthy() ? evaluate(*node.children[1], scope) : left;
  if (op == "or") return left.truthy() ? left : evaluate(*node.children[1], scope);
  const Value right = evaluate(*node.children[1], scope);
  if (op == "==") return Value::of(values_equal(left, right));
  if (op == "!=") return Value::of(!values_equal(left, right));
  const bool membership = op == "in" || op == "not in";
  if (membership && right.is(ValueKind::kUndefined)) return Value::of(op == "not in");
  const std::string operands = std::string(value_kind_name(left.kind)) + " and " + value_kind_name(right.kind);
  if (left.is(ValueKind::kUndefined) || right.is(ValueKind::kUndefined) || left.is(ValueKind::kNone) ||
      right.is(ValueKind::kNone)) {
    fail("cannot apply '" + op + "' to " + operands);
  }
  if (op == "~") return Value::of(left.str() + right.str());
  if (membership) {
    bool found = false;
    if (right.is(ValueKind::kArray)) {
      for (const Value& item : *right.items) found = found || values_equal(item, left);
    } else if (right.is(ValueKind::kString) && left.is(ValueKind::kString)) {
      found = right.text.find(left.text) != std::string::npos;
    } else if (right.is(ValueKind::kObject) && left.is(ValueKind::kString)) {
      found = right.find(left.text) != nullptr;
    } else {
      fail("cannot apply '" + op + "' to " + operands);
    }
    return Value::of(found == (op == "in"));
  }
  if (left.is_number() && right.is_number()) return arithmetic(op, left, right);
  if (left.is(ValueKind::kString) && right.is(ValueKind::kString) && op != "+") {
    const int order = left.text.compare(right.text);
    if (op == "<") return Value::of(order < 0);
    if (op == ">") return Value::of(order > 0);
    if (op == "<=") return Value::of(order <= 0);
    if (op == ">=") return Value::of(order >= 0);
  }
  if (op == "+" && left.is(ValueKind::kArray) && right.is(ValueKind::kArray)) {
    std::vector<Value> items = *left.items;
    items.insert(items.end(), right.items->begin(), right.items->end());
    return Value::array(std::move(items));
  }
  if (op == "+" && (left.is(ValueKind::kString) || right.is(ValueKind::kString))) {
    return Value::of(left.str() + right.str());
  }
  fail("cannot apply '" + op + "' to " + operands);
}

Value ExpressionEvaluator::arithmetic(const std::string& op, const Value& left, const Value& right) {
  const bool real = left.is(ValueKind::kFloat) || right.is(ValueKind::kFloat);
  const double a = as_double(left), b = as_double(right);
  const auto number = [&](double value) { return real ? Value::of_real(value) : integer_result(value); };
  if (op == "<") return Value::of(a < b);
  if (op == ">") return Value::of(a > b);
  if (op == "<=") return Value::of(a <= b);
  if (op == ">=") return Value::of(a >= b);
  if (!real && (op == "+" || op == "-" || op == "*")) {
    const __int128 x = left.integer, y = right.integer;
    return integer_result(op == "+" ? x + y : op == "-" ? x - y : x * y);
  }
  if (op == "+") return number(a + b);
  if (op == "-") return number(a - b);
  if (op == "*") return number(a * b);
  if ((op == "/" || op == "//" || op == "%") && b == 0) fail("division by zero");
  if (op == "/") return Value::of_real(a / b);
  if (op == "//") return number(std::floor(a / b));
  if (op == "%") return number(a - b * std::floor(a / b));  // Python's sign rule
  if (op == "**") {
    if (a == 0 && b < 0) fail("0 cannot be raised to a negative power");
    const double result = std::pow(a, b);
    return real || b < 0 ? Value::of_real(result) : integer_result(result);
  }
  fail("cannot apply '" + op + "' to numbers");
}

}  // namespace seed::models::chat
