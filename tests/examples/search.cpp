// A tree search in one page: load a task folder, build an engine, and run
// Tree-of-Thoughts BFS on a few problems, scoring each answer with the
// task's checker.
//
//   example_search TASK_DIR TARGET_DIR DRAFT_DIR [PROBLEMS]
//
// What `seed run --search bfs` does, without results files or resuming.
// Exits 0 when every problem got an answer from a searched tree (right or
// wrong: the tiny models solve few puzzles), 1 otherwise.
#include <algorithm>
#include <iostream>
#include <string>

#include "search/search.h"
#include "spec/engine/engine_factory.h"
#include "tasks/task.h"

using namespace seed;

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: example_search TASK_DIR TARGET_DIR DRAFT_DIR [PROBLEMS]\n";
    return 2;
  }
  try {
    // 1. The task: task.json (prompts, how values parse, the checker, search
    //    defaults) and its data. No compilation is needed for a new task
    //    that uses an existing checker (tasks/README.md).
    const tasks::Task task = tasks::Task::load(argv[1]);

    // 2. The engine every LLM call goes through: here SEED's scheduled
    //    speculative decoding over the target/draft pair. The search never
    //    sees tokens, models or ranks, only Engine::generate.
    spec::EngineOptions engine_options;
    engine_options.engine = spec::EngineKind::kSeed;
    engine_options.target = argv[2];
    engine_options.draft = argv[3];
    const std::unique_ptr<spec::Engine> engine = spec::make_engine(engine_options);

    // 3. The search: BFS with the task's defaults (depth, n thoughts per
    //    state, b states kept per level), every level's thoughts and their
    //    evaluations sent to the engine as one batch each.
    search::SearchConfig config;
    config.algorithm = "bfs";
    config.params = task.spec().search;
    config.seed = 0;
    const std::unique_ptr<search::Search> bfs = search::make_search(config);

    // 4. Solve, then score the final text with the task's checker.
    const size_t count = std::min<size_t>(argc == 5 ? std::stoul(argv[4]) : 2, task.problems().size());
    bool answered = true;
    int correct = 0;
    for (size_t i = 0; i < count; ++i) {
      const tasks::Problem& problem = task.problems()[i];
      const search::SearchResult result = bfs->solve(task, problem, *engine);
      const tasks::CheckResult verdict = task.checker().check(problem, result.answer);
      correct += verdict.correct;
      answered = answered && result.tree.chosen() > 0 && !result.answer.empty();
      std::cout << "problem " << problem.index << ": " << result.tree.size() << " nodes, "
                << result.usage.batches << " batches, " << result.usage.generated_tokens << " tokens; answer '"
                << verdict.answer << "' " << (verdict.correct ? "correct" : "wrong: " + verdict.reason) << "\n";
    }
    const spec::EngineStats s = engine->stats();
    std::cout << correct << " of " << count << " correct; " << s.tokens_per_s() << " tokens/s, "
              << s.tau() << " tokens per target forward\n";
    return answered ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "example_search: " << e.what() << "\n";
    return 1;
  }
}
