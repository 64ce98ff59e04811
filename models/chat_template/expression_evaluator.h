// Evaluating the chat template's expressions over Values: names through
// nested scopes, members and subscripts, Python's slices, the unary and
// binary operators, calls, filters and tests. The renderer (renderer.cpp)
// builds its statements on this, and shares the scopes, the nesting bound,
// the size bounds and the errors declared here.
//
// One instance serves one rendering; not thread-safe.
#pragma once

#include <string>
#include <unordered_map>

#include "models/base/error.h"
#include "models/chat_template/ast.h"
#include "models/chat_template/value.h"

namespace seed::models::chat {

constexpr const char* kErrorPrefix = "chat template line ";
// Operator chains and calls (a recursive macro) nest deeper in a rendering
// than the parser counts, so the renderer allows twice its depth.
constexpr int kMaxRenderNesting = 2 * kMaxNesting;
// A rendered prompt, and any text or list on the way to it, is far below
// these; a template that doubles a string in a loop is not.
constexpr size_t kMaxTextBytes = size_t{16} << 20;

struct Scope {
  std::unordered_map<std::string, Value> variables;
  Scope* parent = nullptr;

  const Value* find(const std::string& name) const {
    for (const Scope* scope = this; scope != nullptr; scope = scope->parent) {
      const auto it = scope->variables.find(name);
      if (it != scope->variables.end()) return &it->second;
    }
    return nullptr;
  }
};

[[noreturn]] inline void fail(const std::string& message) { SEED_FAIL(kInvalidArgument) << message; }

// Counts the statements and expressions being rendered, one inside another.
class Nested {
 public:
  explicit Nested(int& depth) : depth_(depth) {
    if (++depth_ > kMaxRenderNesting) {
      --depth_;
      fail("nested more than " + std::to_string(kMaxRenderNesting) + " levels deep (a macro that calls itself?)");
    }
  }
  ~Nested() { --depth_; }
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;

 private:
  int& depth_;
};

class ExpressionEvaluator {
 protected:
  CallArgs arguments(const Node& node, size_t first, Scope& scope);
  Value evaluate(const Node& node, Scope& scope);

  Scope* current_ = nullptr;  // the caller's scope while a function runs (macros render in it)
  int depth_ = 0;

 private:
  Value evaluate_here(const Node& node, Scope& scope);
  Value member(const Node& node, Scope& scope);
  Value slice(const Node& node, Scope& scope);
  Value unary(const Node& node, Scope& scope);
  Value binary(const Node& node, Scope& scope);
  static Value arithmetic(const std::string& op, const Value& left, const Value& right);
};

}  // namespace seed::models::chat
