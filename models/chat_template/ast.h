// The chat template's syntax tree: statements and expressions share one node
// type (a kind, a name, children), as the renderer walks both the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/chat_template/value.h"

namespace seed::models::chat {

// How deeply blocks and expressions may nest in a template, and calls (a
// macro's body, caller()) in a rendering: far beyond real chat templates,
// far below what overflows a thread's stack (8 MiB) even under ASan.
constexpr int kMaxNesting = 256;

enum class NodeKind {
  // Statements
  kText,         // literal template text: name
  kOutput,       // {{ children[0] }}
  kIf,           // if children[0]: body, else else_body (an elif is an if in else_body)
  kFor,          // for children[0] (name or tuple) in children[1]: body, else else_body
  kSet,          // set children[0] = children[1], or (no children[1]) the rendered body
  kMacro,        // macro name(children: names or keyword defaults): body
  kCallBlock,    // call children[0] (a call): body is `caller()`
  kFilterBlock,  // filter children[0] (a filter node with no operand): body
  kBreak,
  kContinue,
  kComment,
  // Expressions
  kLiteral,      // literal
  kName,         // name
  kArray,        // [children]
  kTuple,        // (children)
  kObject,       // {children[0]: children[1], ...}
  kMember,       // children[0].name (attribute) or children[0][children[1]] (subscript)
  kSlice,        // children[0][children[1]:children[2]:children[3]] (null children: omitted)
  kCall,         // children[0](children[1..]); keyword arguments are kKeyword
  kKeyword,      // name=children[0]
  kFilter,       // children[0] | name(children[1..])
  kTest,         // children[0] is [not] name
  kUnary,        // name (not, -, +) children[0]
  kBinary,       // children[0] name children[1]
  kTernary,      // children[1] if children[0] else children[2]
  kSelect,       // children[0] if children[1] (no else: undefined when false)
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeKind kind;
  int line = 0, column = 0;
  std::string name;
  Value literal;
  bool flag = false;  // kMember: subscript; kTest: negated; kFilter: has an argument list
  std::vector<NodePtr> children;  // null entries stand for omitted slice bounds
  std::vector<NodePtr> body, else_body;
};

}  // namespace seed::models::chat
