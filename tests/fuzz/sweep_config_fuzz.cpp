// A `seed sweep` config (expand_sweep_config): the grid expanded into points,
// each point's `seed run` arguments, and a shard of them.
#include <set>

#include "launch/sweep_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The `seed run` options of the sweeps in docs/sweeps.md.
  static const std::set<std::string> run_options = {
      "task", "search", "engine", "limit", "seed", "n", "b", "depth", "samples", "beams", "beam-width",
      "simulations", "draft-length", "k-config", "drafter", "no-prefix-cache", "out", "resume"};
  const auto json = seed::fuzz::as_json(data, size);
  if (!json) return 0;
  seed::fuzz::refuse_only_with_seed_error([&] {
    const seed::launch::SweepConfig sweep = seed::launch::expand_sweep_config(
        *json, "sweep.json", [](const std::string& key) { return run_options.count(key) > 0; });
    for (const seed::launch::SweepPoint& point : sweep.points) point.run_args();
    seed::launch::shard_points(sweep.points, 1, 3);
  });
  return 0;
}
