// StepTree: one request's drafted steps in Lookahead Reasoning.
//
// The root holds what the request has committed. Each node below it is a
// drafted step; a node's children are the draft's alternatives for the step
// after it (up to the width, identical texts kept once). The target's step
// after a node's text is attached to the node once computed: the verifier
// compares it with each child's drafted step. Committing a drafted step
// makes its node the root (its siblings' subtrees are dropped); committing
// the target's own step starts a new, empty tree.
//
// Node ids are never reused, so an answer for a node dropped meanwhile (the
// asynchronous engine drafts while the target works) is recognised and
// thrown away. Not thread-safe: the engine guards it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "spec/api/engine.h"

namespace seed::spec {

class StepTree {
 public:
  using Id = int64_t;

  // `committed`: the request's generated tokens so far.
  explicit StepTree(std::vector<int32_t> committed);

  Id root() const { return root_; }
  bool contains(Id id) const { return nodes_.count(id) != 0; }
  // Generated tokens up to and including the node's drafted step.
  const std::vector<int32_t>& path(Id id) const { return node(id).path; }
  // Drafted steps between the root and the node (the root: 0).
  int depth(Id id) const { return node(id).depth - node(root_).depth; }
  const std::optional<Completion>& target(Id id) const { return node(id).target; }
  const Completion& draft(Id id) const { return *node(id).draft; }
  const std::vector<Id>& children(Id id) const { return node(id).children; }
  bool expanded(Id id) const { return node(id).expansion == Progress::kDone; }
  // Whether the verifier accepted the drafted step against its parent's
  // target step; none until judged.
  std::optional<bool> verdict(Id id) const { return node(id).verdict; }
  void set_verdict(Id id, bool accepted) { node(id).verdict = accepted; }

  // Nodes whose alternatives for the next step are still to be asked for:
  // less than `max_depth` below the root, whose text can be continued (the
  // root, or a drafted step that ended at the delimiter). Shallowest first.
  std::vector<Id> to_expand(int max_depth) const;
  // Nodes whose target step is still to be asked for (the same condition
  // without the depth limit).
  std::vector<Id> to_verify() const;
  void mark_expanding(Id id) { node(id).expansion = Progress::kAsked; }
  void mark_verifying(Id id) { node(id).verification = Progress::kAsked; }

  // Adds a drafted step below `parent`, unless a sibling has the same text.
  void add_child(Id parent, Completion draft);
  // No more children will come for the node.
  void mark_expanded(Id id) { node(id).expansion = Progress::kDone; }
  void set_target(Id id, Completion step);

  // The child becomes the root; everything not below it is dropped.
  void advance_to(Id child);
  // A new tree after the request committed more tokens.
  void restart(std::vector<int32_t> committed);

 private:
  enum class Progress { kNotAsked, kAsked, kDone };
  struct Node {
    std::vector<int32_t> path;
    std::optional<Completion> draft;   // none at the root
    std::optional<Completion> target;  // the target's step after `path`
    std::optional<bool> verdict;       // the drafted step against the parent's target step
    int depth = 0;                     // from the first root
    std::vector<Id> children;
    Progress expansion = Progress::kNotAsked;
    Progress verification = Progress::kNotAsked;
  };

  Node& node(Id id);
  const Node& node(Id id) const;
  // The root, or a drafted step that ended at the delimiter.
  bool continues(const Node& n) const;
  Id add(Node n);

  std::map<Id, Node> nodes_;
  Id root_ = 0;
  Id next_id_ = 0;
};

}  // namespace seed::spec
