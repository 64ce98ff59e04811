// Search: an algorithm that solves one problem of a task by sending batches
// of generation requests to an Engine (docs/architecture.md, "Layers").
//
// Algorithms (registered by name, make_search):
//   bfs               Tree-of-Thoughts BFS (SEED Algorithm 2): depth T, n
//                     thoughts per state, the b best states kept per level,
//                     the answer written from the best leaf
//   dvts              diverse verifier tree search: N beams in N/M subtrees,
//                     each expanded greedily by the evaluator's score
//   mcts              UCT/PUCT selection, expansion by thought generation,
//                     evaluation by the evaluator (optional rollouts),
//                     backpropagation; `parallel` selections per round under
//                     virtual loss, so each round is one batch
//   cot               one sampled chain of thought
//   best-of-n         n chains, the evaluator's best
//   weighted-best-of-n  n chains, the answer with the largest sum of its
//                     chains' evaluator scores (a PRM's: search-and-learn's
//                     "weighted" selection)
//   self-consistency  n chains, the majority answer
//
// Every algorithm submits all the jobs of a step as one Engine::generate
// batch (what SEED parallelises) and sees only text, never tokens or ranks.
// Requests carry seeds derived from (run seed, problem index, node id), so a
// search is a pure function of (config, task, problem, the completions it
// gets): the same seed gives the same answer under any engine that returns
// the same completions (greedy decoding: every engine).
//
// A Search is immutable after construction; solve() may run concurrently
// for different problems and engines.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "search/search_tree.h"
#include "spec/api/engine.h"
#include "spec/api/step_scorer.h"
#include "tasks/task.h"

namespace seed::search {

struct SearchConfig {
  std::string algorithm = "bfs";  // a name of search_names()
  tasks::SearchParams params;     // the task's defaults, overridden by flags
  uint64_t seed = 0;              // the run seed
};

// What one solve() asked of the engine.
struct SearchUsage {
  int64_t batches = 0;          // Engine::generate calls
  int64_t requests = 0;
  int64_t failed_requests = 0;  // completions with FinishReason::kError
  std::string first_error;      // the engine's reason for the first of them
  int64_t generated_tokens = 0;
  int64_t thought_tokens = 0;     // of which by thought generation
  int64_t evaluation_tokens = 0;  // and by state evaluation
  // A process reward model's work (evaluate mode "prm"): tokens it computed
  // and tokens of the steps it scored (ScoreUsage).
  int64_t prm_tokens = 0;
  int64_t prm_scored_tokens = 0;
};

struct SearchResult {
  std::string answer;  // the final text, as the task's checker reads it
  SearchTree tree;     // tree.chosen(): the node the answer came from
  SearchUsage usage;
};

class Search {
 public:
  virtual ~Search() = default;
  virtual std::string name() const = 0;
  // The requests one step of one problem sends at once (what it takes to
  // fill a batched forward with problems).
  virtual int requests_per_step() const = 0;
  // Throws kInvalidArgument, naming task.json's field, where `task` lacks
  // what this search needs: a cot prompt to sample chains of thought from,
  // an evaluator that scores a whole chain. solve() checks it first; a run
  // over many problems checks before it starts.
  virtual void check(const tasks::Task& task) const = 0;
  // `scorer`: the process reward model of a task whose evaluate mode is
  // "prm" (borrowed; unused otherwise). Throws seed::Error only for what the
  // engine or scorer throws and for task misconfiguration (check(), a prm
  // task without a scorer); a problem nothing could be generated for
  // yields an empty answer.
  virtual SearchResult solve(const tasks::Task& task, const tasks::Problem& problem, spec::Engine& engine,
                             spec::StepScorer* scorer = nullptr) const = 0;
};

// The algorithm names, in the order benchmarks list them.
const std::vector<std::string>& search_names();

// Throws kInvalidArgument for an unknown algorithm (listing the known ones)
// or invalid parameters (SearchParams::validate).
std::unique_ptr<Search> make_search(const SearchConfig& config);

}  // namespace seed::search
