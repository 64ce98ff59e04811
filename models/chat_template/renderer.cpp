#include "models/chat_template/renderer.h"

#include <cstdint>
#include <unordered_map>

#include "models/chat_template/builtins.h"
#include "models/chat_template/expression_evaluator.h"
#include "models/chat_template/lexer.h"

namespace seed::models::chat {
namespace {

enum class Flow { kNormal, kBreak, kContinue };

class Renderer : public ExpressionEvaluator {
 public:
  // Namespaces are the only values a template changes, so the only way to a
  // cycle ({% set ns.self = ns %}): emptied here, a cycle is freed too.
  ~Renderer() {
    for (auto& [address, members] : assigned_namespaces_) members->clear();
  }

  Flow render_block(const std::vector<NodePtr>& block, Scope& scope, std::string* out) {
    for (const NodePtr& node : block) {
      const Flow flow = render_at(*node, scope, out);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

 private:
  // Renders one statement; errors from below get its position.
  Flow render_at(const Node& node, Scope& scope, std::string* out) {
    try {
      const Nested nested(depth_);
      const Flow flow = render(node, scope, out);
      if (out->size() > kMaxTextBytes) fail("the rendering is longer than " + std::to_string(kMaxTextBytes) + " bytes");
      return flow;
    } catch (const Error& e) {
      const std::string message = e.what();
      if (message.rfind(kErrorPrefix, 0) == 0) throw;
      SEED_FAIL(kInvalidArgument) << "chat template " << position_name(node.line, node.column) << ": " << message;
    }
  }

  Flow render(const Node& node, Scope& scope, std::string* out) {
    switch (node.kind) {
      case NodeKind::kText: *out += node.name; return Flow::kNormal;
      case NodeKind::kComment:
      case NodeKind::kMacro:
        if (node.kind == NodeKind::kMacro) define_macro(node, scope);
        return Flow::kNormal;
      case NodeKind::kOutput: *out += evaluate(*node.children[0], scope).str(); return Flow::kNormal;
      case NodeKind::kIf:
        return render_block(evaluate(*node.children[0], scope).truthy() ? node.body : node.else_body, scope, out);
      case NodeKind::kFor: render_for(node, scope, out); return Flow::kNormal;
      case NodeKind::kSet: render_set(node, scope); return Flow::kNormal;
      case NodeKind::kBreak: return Flow::kBreak;
      case NodeKind::kContinue: return Flow::kContinue;
      case NodeKind::kCallBlock: {
        Scope with_caller{{}, &scope};
        const std::vector<NodePtr>* body = &node.body;
        with_caller.variables["caller"] = Value::callable([this, body, &with_caller](const CallArgs&) {
          std::string text;
          Scope inner{{}, &with_caller};
          render_block(*body, inner, &text);
          return Value::of(text);
        });
        *out += evaluate(*node.children[0], with_caller).str();
        return Flow::kNormal;
      }
      case NodeKind::kFilterBlock: {
        std::string text;
        render_block(node.body, scope, &text);
        const Node& filter = *node.children[0];
        *out += apply_filter(filter.name, Value::of(text), arguments(filter, 1, scope)).str();
        return Flow::kNormal;
      }
      default: *out += evaluate(node, scope).str(); return Flow::kNormal;
    }
  }

  void render_for(const Node& node, Scope& scope, std::string* out) {
    Scope loop_scope{{}, &scope};
    const Node& target = *node.children[0];
    const Node* iterable_node = node.children[1].get();
    const Node* condition = nullptr;
    if (iterable_node->kind == NodeKind::kSelect) {  // for x in xs if cond
      condition = iterable_node->children[1].get();
      iterable_node = iterable_node->children[0].get();
    }
    Value iterable = evaluate(*iterable_node, loop_scope);
    if (iterable.is(ValueKind::kObject)) iterable = builtin_member(iterable, "keys").function->operator()({});
    if (!iterable.is(ValueKind::kArray)) {
      fail(std::string("cannot loop over a ") + value_kind_name(iterable.kind));
    }
    std::vector<Value> items;
    for (const Value& item : *iterable.items) {
      if (condition != nullptr) {
        Scope test_scope{{}, &loop_scope};
        bind(target, item, test_scope);
        if (!evaluate(*condition, test_scope).truthy()) continue;
      }
      items.push_back(item);
    }
    const auto count = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < count; ++i) {
      loop_scope.variables["loop"] = Value::object({
          {"index", Value::of(i + 1)},
          {"index0", Value::of(i)},
          {"revindex", Value::of(count - i)},
          {"revindex0", Value::of(count - i - 1)},
          {"first", Value::of(i == 0)},
          {"last", Value::of(i == count - 1)},
          {"length", Value::of(count)},
          {"previtem", i > 0 ? items[i - 1] : Value()},
          {"nextitem", i + 1 < count ? items[i + 1] : Value()},
      });
      bind(target, items[i], loop_scope);
      if (render_block(node.body, loop_scope, out) == Flow::kBreak) break;
    }
    if (count == 0) render_block(node.else_body, loop_scope, out);
  }

  void bind(const Node& target, const Value& value, Scope& scope) {
    if (target.kind == NodeKind::kName) {
      scope.variables[target.name] = value;
      return;
    }
    if (!value.is(ValueKind::kArray)) fail(std::string("cannot unpack a ") + value_kind_name(value.kind));
    if (value.items->size() != target.children.size()) {
      fail("cannot unpack " + std::to_string(value.items->size()) + " values into " +
           std::to_string(target.children.size()) + " names");
    }
    for (size_t i = 0; i < target.children.size(); ++i) scope.variables[target.children[i]->name] = (*value.items)[i];
  }

  void render_set(const Node& node, Scope& scope) {
    Value value;
    if (node.children.size() > 1) {
      value = evaluate(*node.children[1], scope);
    } else {
      std::string text;
      render_block(node.body, scope, &text);
      value = Value::of(text);
    }
    const Node& target = *node.children[0];
    if (target.kind == NodeKind::kMember) {
      Value object = evaluate(*target.children[0], scope);
      if (!object.is(ValueKind::kNamespace)) fail("only a namespace's attributes can be set");
      assigned_namespaces_.emplace(object.members.get(), object.members);
      object.set(target.name, std::move(value));
      return;
    }
    bind(target, value, scope);
  }

  void define_macro(const Node& node, Scope& scope) {
    const Node* macro = &node;
    scope.variables[node.name] = Value::callable([this, macro](const CallArgs& args) {
      Scope local{{}, current_};
      const std::vector<NodePtr>& parameters = macro->children;
      if (args.positional.size() > parameters.size()) {
        fail("macro '" + macro->name + "' takes at most " + std::to_string(parameters.size()) + " arguments");
      }
      for (const auto& [key, value] : args.keyword) {
        bool known = false;
        for (const NodePtr& p : parameters) known = known || p->name == key;
        if (!known) fail("macro '" + macro->name + "' has no parameter '" + key + "'");
      }
      for (size_t i = 0; i < parameters.size(); ++i) {
        const Node& parameter = *parameters[i];
        const Value* keyword = args.keyword_arg(parameter.name);
        if (i < args.positional.size()) {
          local.variables[parameter.name] = args.positional[i];
        } else if (keyword != nullptr) {
          local.variables[parameter.name] = *keyword;
        } else if (parameter.kind == NodeKind::kKeyword) {
          local.variables[parameter.name] = evaluate(*parameter.children[0], local);
        } else {
          local.variables[parameter.name] = Value();
        }
      }
      std::string text;
      render_block(macro->body, local, &text);
      return Value::of(text);
    });
  }

  std::unordered_map<const Members*, std::shared_ptr<Members>> assigned_namespaces_;
};

}  // namespace

std::string render_program(const std::vector<NodePtr>& program, const Members& variables) {
  Scope globals;
  for (auto& [name, value] : global_functions()) globals.variables[name] = value;
  for (const char* name : {"true", "True"}) globals.variables[name] = Value::of(true);
  for (const char* name : {"false", "False"}) globals.variables[name] = Value::of(false);
  for (const char* name : {"none", "None"}) globals.variables[name] = Value::none();
  for (const auto& [name, value] : variables) globals.variables[name] = value;
  std::string out;
  Renderer renderer;
  renderer.render_block(program, globals, &out);
  return out;
}

}  // namespace seed::models::chat
