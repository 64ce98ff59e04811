#include "spec/drafters/stand/tree_optimizer.h"

#include <unistd.h>

#include <filesystem>

#include "models/base/error.h"
#include "models/causal_lm.h"
#include "spec/engine/engine_factory.h"
#include "spec/drafters/stand/stand_drafter.h"

namespace seed::spec {

TreeCounts count_accepted_nodes(const TreeOptimizeOptions& o) {
  SEED_CHECK(!o.prompts.empty(), kInvalidArgument) << "need at least one prompt";
  SEED_CHECK(o.trajectories >= 1, kInvalidArgument) << "--trajectories: " << o.trajectories << " < 1";
  TreeCounts result;
  result.initial = StaticTree::initial();
  // The engine bounds drafts by the tree file's depth; the drafter below
  // drafts into the same tree and counts its acceptances.
  const std::filesystem::path tree_file =
      std::filesystem::temp_directory_path() / ("seed_initial_tree_" + std::to_string(::getpid()) + ".json");
  result.initial.save(tree_file.string());
  EngineOptions eo;
  eo.engine = EngineKind::kSeed;
  eo.drafter = DrafterKind::kStand;
  eo.target = o.target;
  eo.tree = tree_file.string();
  const int64_t vocab =
      models::ModelConfig::from_file((std::filesystem::path(o.target) / "config.json").string()).vocab_size;
  auto drafter = std::make_unique<StandDrafter>(std::make_shared<NgramStore>(), vocab, result.initial);
  const StandDrafter& counter = *drafter;  // owned by the engine below, which outlives its use here
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::move(drafter));
  std::unique_ptr<Engine> engine = make_engine(eo, std::move(drafters));
  std::filesystem::remove(tree_file);

  for (size_t p = 0; p < o.prompts.size(); ++p) {
    std::vector<GenRequest> batch;
    for (int i = 0; i < o.trajectories; ++i) {
      GenRequest r;
      r.prompt = o.prompts[p];
      r.max_new_tokens = o.tokens;
      r.sampling.temperature = o.temperature;
      r.seed = o.seed;
      r.stream = p * 1000 + static_cast<uint64_t>(i);
      r.group = p + 1;
      batch.push_back(r);
    }
    engine->generate(batch);
    engine->end_group(p + 1);
  }
  result.counts = counter.accepted_per_node();
  result.tau = engine->stats().tau();
  return result;
}

}  // namespace seed::spec
