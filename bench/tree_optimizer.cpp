#include "bench/tree_optimizer.h"

#include <unistd.h>

#include <filesystem>

#include "models/base/error.h"
#include "models/causal_lm.h"
#include "spec/engine_factory.h"
#include "spec/stand_drafter.h"
#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"
#include "tasks/game24.h"

namespace seed::bench {

TreeCounts count_accepted_nodes(const TreeOptimizeOptions& o) {
  SEED_CHECK(!o.puzzles.empty(), kInvalidArgument) << "--puzzles: need at least one puzzle";
  SEED_CHECK(o.trajectories >= 1, kInvalidArgument) << "--trajectories: " << o.trajectories << " < 1";
  TreeCounts result;
  result.initial = spec::StaticTree::initial();
  // The engine bounds drafts by the tree file's depth; the drafter below
  // drafts into the same tree and counts its acceptances.
  const std::filesystem::path tree_file =
      std::filesystem::temp_directory_path() / ("seed_initial_tree_" + std::to_string(::getpid()) + ".json");
  result.initial.save(tree_file.string());
  spec::EngineOptions eo;
  eo.engine = spec::EngineKind::kSeed;
  eo.drafter = spec::DrafterKind::kStand;
  eo.target = o.target;
  eo.tree = tree_file.string();
  const int64_t vocab =
      models::ModelConfig::from_file((std::filesystem::path(o.target) / "config.json").string()).vocab_size;
  auto drafter = std::make_unique<spec::StandDrafter>(std::make_shared<spec::NgramStore>(), vocab, result.initial);
  const spec::StandDrafter& counter = *drafter;  // owned by the engine below, which outlives its use here
  std::vector<std::unique_ptr<spec::Drafter>> drafters;
  drafters.push_back(std::move(drafter));
  std::unique_ptr<spec::Engine> engine = spec::make_engine(eo, std::move(drafters));
  std::filesystem::remove(tree_file);

  for (size_t p = 0; p < o.puzzles.size(); ++p) {
    const tasks::Numbers puzzle = tasks::parse_puzzle(o.puzzles[p]);
    std::vector<spec::GenRequest> batch;
    for (int i = 0; i < o.trajectories; ++i) {
      spec::GenRequest r;
      r.prompt = tasks::render_prompt(tasks::kGame24CotPrompt, {{"input", tasks::numbers_text(puzzle)}});
      r.max_new_tokens = o.tokens;
      r.sampling.temperature = o.temperature;
      r.seed = o.seed;
      r.stream = p * 1000 + static_cast<uint64_t>(i);
      r.group = p + 1;
      batch.push_back(r);
    }
    engine->generate(batch);
  }
  result.counts = counter.accepted_per_node();
  result.tau = engine->stats().tau();
  return result;
}

}  // namespace seed::bench
