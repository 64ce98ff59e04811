// `seed tree`: learns STAND's static draft trees for a target and writes
// them as files for `--drafter stand --tree FILE` (spec/drafters/stand/tree_optimizer.h).
#include <cstdint>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <numeric>

#include "spec/drafters/stand/tree_optimizer.h"
#include "launch/commands.h"
#include "launch/counted.h"
#include "launch/puzzles_option.h"
#include "models/base/error.h"
#include "models/base/sampling.h"
#include "tasks/corpus.h"
#include "tasks/corpus_formats.h"
#include "tasks/game24.h"

namespace seed::launch {
namespace {

struct TreeOptions {
  spec::TreeOptimizeOptions optimize;
  std::vector<std::string> puzzles = {"1 1 4 6", "2 3 5 12", "3 3 8 8", "1 2 7 9"};
  std::vector<int> nodes = {16, 32, 64, 80};
  std::string out_dir = ".";
};

void run_tree(const TreeOptions& o) {
  for (int n : o.nodes) SEED_CHECK(n >= 1, kInvalidArgument) << "--nodes: " << n << " < 1";
  check_temperature(o.optimize.temperature, "--temperature");
  SEED_CHECK(!o.puzzles.empty(), kInvalidArgument) << "--puzzles: need at least one puzzle";
  spec::TreeOptimizeOptions optimize = o.optimize;
  for (const std::string& text : o.puzzles) {
    const tasks::Numbers puzzle = tasks::parse_puzzle(text);
    optimize.prompts.push_back(
        tasks::render_prompt(tasks::kGame24CotPrompt, {{"input", tasks::numbers_text(puzzle)}}));
  }
  const spec::TreeCounts counts = spec::count_accepted_nodes(optimize);
  const int64_t accepted = std::accumulate(counts.counts.begin(), counts.counts.end(), int64_t{0});
  std::cout << fmt::format("{} x {} of {} tokens at T = {} on Algorithm 1's tree ({} nodes): "
                           "tau {:.2f}, {} accepted draft tokens\n",
                           counted(static_cast<int64_t>(o.puzzles.size()), "puzzle"),
                           counted(o.optimize.trajectories, "chain"), o.optimize.tokens,
                           o.optimize.temperature, counts.initial.size(), counts.tau, accepted);
  std::filesystem::create_directories(o.out_dir);
  for (int n : o.nodes) {
    const spec::StaticTree tree = counts.initial.pruned(counts.counts, n);
    const std::string path = (std::filesystem::path(o.out_dir) / fmt::format("stand-tree-{}.json", n)).string();
    tree.save(path);
    std::cout << fmt::format("{}: {} nodes, depth {}, per depth {}\n", path, tree.size(), tree.depth(),
                             fmt::join(tree.nodes_per_depth(), " "));
  }
}

}  // namespace

void add_tree_command(CLI::App& app) {
  auto o = std::make_shared<TreeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tree", "Learn STAND's static draft trees: the N nodes of Algorithm 1's tree most often accepted");
  cmd->add_option("--target", o->optimize.target, "Target model folder")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  cmd->add_option("--nodes", o->nodes, "Tree sizes to write (draft nodes)")->capture_default_str();
  cmd->add_option("--out", o->out_dir, "Folder for stand-tree-N.json")->capture_default_str();
  add_puzzles_option(cmd, &o->puzzles, "Game-of-24 puzzles (one request group each)");
  cmd->add_option("--trajectories", o->optimize.trajectories, "Chains per puzzle")->capture_default_str();
  cmd->add_option("--tokens", o->optimize.tokens, "max_new_tokens of a chain")->capture_default_str();
  cmd->add_option("--temperature", o->optimize.temperature, "Sampling temperature")->capture_default_str();
  cmd->add_option("--seed", o->optimize.seed, "Random seed of the requests")->capture_default_str();
  cmd->callback([o] { run_tree(*o); });
}

}  // namespace seed::launch
