// SearchContext: the operations every algorithm builds on, each one batch
// (or one batch per generation stage) of requests to the engine:
// generating thoughts from nodes, evaluating nodes, voting among siblings,
// sampling whole chains of thought, and writing the final answer.
//
// It owns the tree of one solve() and the usage counters, and derives every
// request's (seed, stream) from the run seed, the problem index and what
// the request is for (the node id, the stage, the sample index; evaluations
// from their prompt text, so equal states get equal verdicts and are asked
// once). Borrowed: the task, problem and engine must outlive it.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "search/search.h"

namespace seed::search {

class SearchContext {
 public:
  // `scorer` (borrowed, may be null): the process reward model of a prm-mode task.
  SearchContext(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine, uint64_t seed,
                spec::StepScorer* scorer = nullptr);
  // The solve is over, however it ended: the engine's drafters drop what
  // they learned from the problem's requests (Engine::end_group).
  ~SearchContext();
  SearchContext(const SearchContext&) = delete;
  SearchContext& operator=(const SearchContext&) = delete;

  SearchTree& tree() { return tree_; }
  const tasks::Task& task() const { return task_; }
  const SearchUsage& usage() const { return usage_; }

  // The state of node `id`: the thoughts from the root (a chain node's
  // chain split into lines).
  tasks::State state(int id) const;
  // The node's path ends the search: the task says final, or depth >= limit.
  bool terminal(int id, int depth_limit) const;

  // Generates up to `n` distinct thoughts from each node (in order) and adds
  // them as children; returns the new ids, node by node. Propose mode: one
  // request per node; sample mode: n requests per node and stage. Marks the
  // nodes expanded (in order) and the children final where the task says so.
  // `priorities` (per node; empty: each node's normalized value) rank the
  // requests for an engine that serves the most urgent first.
  std::vector<int> expand(const std::vector<int>& nodes, int n, const std::vector<double>& priorities = {});

  // Value mode: sets each node's value (the sum over the evaluator's
  // samples; a completion that does not parse counts the task's `unparsed`).
  // Prm mode: the aggregate of the PRM's scores of the node's steps (each
  // step scored once per solve; a state without steps is worth 0).
  // Vote mode: the nodes are grouped by parent, each group voted on, and a
  // node's value is its share of the votes. One batch.
  void evaluate(const std::vector<int>& nodes);
  // A node's value scaled to [0, 1] by the largest value the task can give.
  double normalized_value(int id) const;

  // Rollouts (mcts): from each node, `steps` more thoughts, one per step
  // (the first of each generation), then the end state evaluated; returns
  // each rollout's normalised value. The rollouts are not added to the tree.
  // One generation batch per step (and stage), one evaluation batch.
  std::vector<double> rollout(const std::vector<int>& nodes, int steps, int depth_limit);

  // `count` chains of thought from the task's cot prompt, added as chain
  // children of the root; returns their ids. One batch. With `enough`, it
  // is told each chain's text as the chain completes; once it returns true
  // the chains still running are cancelled and left out.
  std::vector<int> sample_chains(int count, const std::function<bool(const std::string&)>& enough = {});

  // The final text from node `id` (the task's answer prompt, one request;
  // without one, the node's steps or chain) and marks the node chosen.
  std::string answer(int id);

 private:
  // `priority`: the normalized value of the node the request works for, so
  // that an engine that ranks work serves the promising branches first.
  spec::GenRequest request(const tasks::PromptSpec& prompt, std::string text, uint64_t stream,
                           spec::RequestKind kind, double priority = 0) const;
  std::vector<spec::Completion> run(const std::vector<spec::GenRequest>& batch,
                                    const spec::CompletionCallback& on_complete = {});
  // Thoughts for each state: per state, a list of distinct thoughts (at
  // most n); `keys` key each state's random streams, `priorities` rank its
  // requests.
  std::vector<std::vector<tasks::Thought>> generate(const std::vector<tasks::State>& states,
                                                    const std::vector<uint64_t>& keys,
                                                    const std::vector<double>& priorities, int n);
  // Summed values of states, one batch (cached by prompt); prm mode:
  // prm_values.
  std::vector<double> values(const std::vector<tasks::State>& states);
  // The aggregate step scores of states, one scorer batch for the steps
  // not scored before.
  std::vector<double> prm_values(const std::vector<tasks::State>& states);

  const tasks::Task& task_;
  const tasks::Problem& problem_;
  spec::Engine& engine_;
  uint64_t seed_;  // the run seed mixed with the problem index
  SearchTree tree_;
  SearchUsage usage_;
  int expansions_ = 0;
  std::map<std::string, double> value_cache_;  // evaluation prompt -> summed value
  spec::StepScorer* scorer_;
  std::map<std::string, double> step_scores_;  // steps 1..i (step_key) -> step i's score
};

// A 64-bit mix of two values (splitmix64 finaliser), for stream keys.
uint64_t mix_key(uint64_t a, uint64_t b);

}  // namespace seed::search
