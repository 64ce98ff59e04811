// A sweep's config file and the points it expands to (`seed sweep`).
//
// The file is one JSON object. Every key except "grid" and "baseline" is a
// `seed run` option, spelled as the flag without its dashes ("beam-width";
// "beam_width" is read the same) and applied to every point. "grid" sweeps:
// an object whose list values are crossed (a cartesian product; a scalar is
// a one-value list), or a list of such objects whose products are joined in
// order, which is how a sweep names explicit points or gives each search its
// own budgets:
//
//   {"task": "tasks/game24", "limit": 4,
//    "grid": [{"search": ["cot", "bfs"], "engine": ["ar", "seed"]},
//             {"search": "mcts", "simulations": [8, 24], "engine": "seed"}],
//    "baseline": "ar"}
//
// "baseline" (default "ar") names the engine the sweep's speedups are over.
// Validation happens here, before any point runs, and every error names
// the file, the key and the value at fault.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace seed::launch {

// One `seed run` of a sweep.
struct SweepPoint {
  // Every run option of the point, base keys and grid keys, in flag
  // spelling; values are JSON scalars or lists of scalars.
  nlohmann::json params;
  // A stable, readable folder name from the point's grid keys (in a fixed
  // key order), e.g. "search=bfs_b=2_engine=seed".
  std::string slug;
  // `params` as `seed run` arguments ("--key", value...); a flag whose value
  // is true appears alone and one that is false not at all.
  std::vector<std::string> run_args() const;
};

struct SweepConfig {
  std::vector<SweepPoint> points;  // in grid order, duplicates removed
  std::string baseline = "ar";     // the engine speedups are over
  nlohmann::json normalized;       // the whole config in flag spelling: what a rerun must match
};

// Whether `key` (flag spelling) is a `seed run` option.
using RunOptionCheck = std::function<bool(const std::string& key)>;

// Expands and validates `config` (read from `file`, named in errors):
// throws kInvalidArgument for a key that is not a run option or that the
// sweep sets itself (out, resume, tree-out), an empty list, a grid value
// that is not a scalar or list of scalars, a point without "task", a search
// parameter the point's search does not take, and two points whose slugs
// collide.
SweepConfig expand_sweep_config(const nlohmann::json& config, const std::string& file,
                                const RunOptionCheck& is_run_option);

// Reads the config file `path`: kNotFound / kCorruption for a missing or
// unparsable file.
nlohmann::json read_sweep_config(const std::string& path);

// The points of shard `index` of `count`: every count-th point from index.
std::vector<SweepPoint> shard_points(const std::vector<SweepPoint>& points, int index, int count);

}  // namespace seed::launch
