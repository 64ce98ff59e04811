// Static draft trees: Algorithm 1's initial tree (counts from the STAND
// notes), product trees, pruning to an ancestor-closed tree, the file format
// and its errors.
#include "spec/drafters/stand/static_tree.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "models/base/error.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::throws_error;

TEST(StaticTreeTest, AlgorithmOneBuildsTheNotesInitialTree) {
  const StaticTree tree = StaticTree::initial();
  EXPECT_EQ(tree.size() + 1, 625);  // with the prefix (root)
  EXPECT_EQ(tree.depth(), 20);
  const std::vector<int> want = {1, 8, 24, 64, 141, 170, 68, 39, 14, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
  EXPECT_EQ(tree.nodes_per_depth(), want);
  std::vector<int> children(static_cast<size_t>(tree.size()) + 1, 0);
  for (const int32_t p : tree.parents) ++children[static_cast<size_t>(p + 1)];
  EXPECT_EQ(*std::max_element(children.begin(), children.end()), 8) << "at most 8 of STAND's 10 candidates";
}

TEST(StaticTreeTest, KConfigIsAProductTree) {
  const StaticTree tree = StaticTree::from_k_config({2, 2, 1});
  EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, -1, 0, 0, 1, 1, 2, 3, 4, 5}));
  EXPECT_EQ(tree.nodes_per_depth(), (std::vector<int>{1, 2, 4, 4}));
}

bool ancestor_closed(const StaticTree& tree) {
  for (int32_t i = 0; i < tree.size(); ++i) {
    if (tree.parents[static_cast<size_t>(i)] >= i) return false;  // parents come first and exist
  }
  return true;
}

TEST(StaticTreeTest, PruningKeepsTheBestNodesAncestorClosed) {
  const StaticTree tree = StaticTree::initial();
  // Counts that favour deep nodes of the leftmost path and some nodes whose
  // ancestors scored less (as float noise in real counts can make them).
  std::vector<int64_t> counts(static_cast<size_t>(tree.size()), 0);
  int32_t node = 0;  // the leftmost path: node 0, its first child, ...
  for (int d = 1; d <= 20; ++d) {
    counts[static_cast<size_t>(node)] = 100 - d;
    for (int32_t c = node + 1; c < tree.size(); ++c) {
      if (tree.parents[static_cast<size_t>(c)] == node) {
        node = c;
        break;
      }
    }
  }
  counts[600] = 1000;  // a deep node alone: its ancestors score 0
  const StaticTree pruned = tree.pruned(counts, 30);
  EXPECT_EQ(pruned.size(), 30);
  EXPECT_TRUE(ancestor_closed(pruned));
  EXPECT_EQ(pruned.depth(), 20) << "the whole leftmost path is kept";
  EXPECT_EQ(tree.pruned(counts, 10000).size(), tree.size());
  EXPECT_EQ(tree.pruned(counts, 0).size(), 0);
  EXPECT_TRUE(throws_error([&] { tree.pruned({1, 2}, 3); }, ErrorKind::kInvalidArgument, {"counts"}));
}

TEST(StaticTreeTest, FilesRoundTripAndBadFilesNameTheField) {
  const fs::path dir = fs::temp_directory_path() / ("seed_static_tree_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const StaticTree tree = StaticTree::from_k_config({3, 2});
  tree.save((dir / "tree.json").string());
  EXPECT_EQ(StaticTree::load((dir / "tree.json").string()).parents, tree.parents);

  const auto bad = [&](const std::string& text, const std::vector<std::string>& needles) {
    const std::string path = (dir / "bad.json").string();
    std::ofstream(path) << text;
    std::vector<std::string> with_path = needles;
    with_path.push_back(path);
    return throws_error([&] { StaticTree::load(path); }, ErrorKind::kInvalidArgument, with_path);
  };
  EXPECT_TRUE(bad("[1, 2", {"not JSON"}));
  EXPECT_TRUE(bad(R"({"format": "other", "version": 1, "parents": []})", {"'format'"}));
  EXPECT_TRUE(bad(R"({"format": "seed-static-tree", "version": 2, "parents": []})", {"'version'"}));
  EXPECT_TRUE(bad(R"({"format": "seed-static-tree", "version": 1})", {"'parents'"}));
  EXPECT_TRUE(bad(R"({"format": "seed-static-tree", "version": 1, "parents": [-1, 1]})", {"'parents'[1]"}));
  EXPECT_TRUE(bad(R"({"format": "seed-static-tree", "version": 1, "parents": [-1, "a"]})", {"'parents'"}));
  EXPECT_TRUE(throws_error([&] { StaticTree::load((dir / "missing.json").string()); }, ErrorKind::kIo,
                           {"missing.json"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::spec
