// ADED's parts on hand-made sequences and tables (Liu et al. 2024, ADED, sec. 2):
//   - the tri-gram table: counts per document, row normalisation, top-k
//     pruning, the file's round trip and its errors;
//   - Algorithm 2: creation at the increment, raises, the cap, the window,
//     repeated raises across steps, one view per group;
//   - the MCTS: E by hand, a two-iteration search expanded by hand, visits
//     conserved, drafts most visited first within the limits;
//   - the drafter's trie within the draft shape.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "spec/drafters/aded/aded_drafter.h"
#include "spec/drafters/aded/aded_search.h"
#include "spec/drafters/aded/trigram_store.h"
#include "spec/drafters/aded/trigram_table.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::throws_error;

std::map<int32_t, float> row_of(const std::vector<TrigramSuccessor>* row) {
  std::map<int32_t, float> out;
  if (row != nullptr) {
    for (const TrigramSuccessor& s : *row) out[s.token] = s.weight;
  }
  return out;
}

std::map<int32_t, float> row_of(const std::vector<TrigramSuccessor>& row) { return row_of(&row); }

TEST(TrigramTableTest, CountsNormalisesAndKeepsTheTopSuccessorsPerContext) {
  // (1, 2) is followed by 3 three times, 4 twice and 5 once; documents never
  // join, and a two-token document adds nothing.
  const TrigramTable table = TrigramTable::build({{1, 2, 3, 1, 2, 4}, {1, 2, 3}, {1, 2, 3, 9}, {1, 2, 4}, {1, 2, 5}, {7, 8}},
                                                 /*top_k=*/2);
  const auto* row = table.successors(1, 2);
  ASSERT_NE(row, nullptr);
  ASSERT_EQ(row->size(), 2u) << "top 2 of 3 successors";
  EXPECT_EQ((*row)[0].token, 3);
  EXPECT_FLOAT_EQ((*row)[0].weight, 3.0f / 6);
  EXPECT_EQ((*row)[1].token, 4);
  EXPECT_FLOAT_EQ((*row)[1].weight, 2.0f / 6) << "not renormalised after pruning";
  EXPECT_EQ(row_of(table.successors(2, 3)), (std::map<int32_t, float>{{1, 0.5f}, {9, 0.5f}}));
  EXPECT_EQ(table.successors(3, 1)->size(), 1u);
  EXPECT_EQ(table.successors(7, 8), nullptr);
  EXPECT_EQ(table.successors(2, 4), nullptr) << "no tri-gram crosses a document's end";
  EXPECT_EQ(table.contexts(), 3u);
}

class TrigramFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seed_trigram_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(TrigramFileTest, RoundTripsAndNamesTheFileOnBadInput) {
  const TrigramTable table = TrigramTable::build({{5, 6, 7, 5, 6, 8, 5, 6, 7}});
  table.save(path("t.bin"));
  const TrigramTable loaded = TrigramTable::load(path("t.bin"));
  EXPECT_EQ(loaded.contexts(), table.contexts());
  for (const auto& [a, b] : std::vector<std::pair<int32_t, int32_t>>{{5, 6}, {6, 7}, {7, 5}, {6, 8}, {8, 5}}) {
    EXPECT_EQ(row_of(loaded.successors(a, b)), row_of(table.successors(a, b))) << a << " " << b;
  }

  EXPECT_TRUE(throws_error([&] { TrigramTable::load(path("missing.bin")); }, ErrorKind::kNotFound, {"missing.bin"}));
  std::ofstream(path("text.bin")) << "not a table";
  EXPECT_TRUE(throws_error([&] { TrigramTable::load(path("text.bin")); }, ErrorKind::kCorruption,
                           {"text.bin", "seed trigrams"}));
  std::string bytes;
  {
    std::ifstream in(path("t.bin"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(path("short.bin"), std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  EXPECT_TRUE(throws_error([&] { TrigramTable::load(path("short.bin")); }, ErrorKind::kCorruption,
                           {"short.bin", "truncated"}));
  std::string bad = bytes;
  const float two = 2.0f;
  bad.replace(bad.size() - sizeof(float), sizeof(float), reinterpret_cast<const char*>(&two), sizeof(float));
  std::ofstream(path("bad.bin"), std::ios::binary) << bad;
  EXPECT_TRUE(throws_error([&] { TrigramTable::load(path("bad.bin")); }, ErrorKind::kCorruption,
                           {"bad.bin", "weight 2"}));
}

TEST(AdaptiveTrigramsTest, RaisesCreatesCapsWithinTheWindow) {
  auto corpus = std::make_shared<const TrigramTable>(TrigramTable::build({{1, 2, 3}, {1, 2, 3}, {1, 2, 4}}));
  AdaptiveTrigrams m(corpus, TrigramAdaptation{/*window=*/4, /*increment=*/0.5f, /*cap=*/1.5f});
  // Window of 4 of [9 9 1 2 3 7]: (1 2 3), (2 3 7); (9 9 1), (9 1 2) are out.
  m.adjust({9, 9, 1, 2, 3, 7}, 6);
  EXPECT_EQ(row_of(m.successors(1, 2)), (std::map<int32_t, float>{{3, 2.0f / 3 + 0.5f}, {4, 1.0f / 3}}));
  EXPECT_EQ(row_of(m.successors(2, 3)), (std::map<int32_t, float>{{7, 0.5f}})) << "created at the increment";
  EXPECT_TRUE(m.successors(9, 1).empty()) << "outside the window";
  // Repeated steps raise again, up to the cap; the order follows the values.
  for (int step = 0; step < 5; ++step) m.adjust({1, 2, 4, 5}, 4);
  const std::vector<TrigramSuccessor> row = m.successors(1, 2);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row[0].token, 4);
  EXPECT_FLOAT_EQ(row[0].weight, 1.5f);
  EXPECT_EQ(row_of(m.successors(2, 4)), (std::map<int32_t, float>{{5, 1.5f}}));
  // `end` bounds the window.
  m.adjust({6, 6, 6, 8, 8, 8}, 3);
  EXPECT_EQ(row_of(m.successors(6, 6)), (std::map<int32_t, float>{{6, 0.5f}}));
  EXPECT_TRUE(m.successors(8, 8).empty());
  EXPECT_EQ(row_of(corpus->successors(1, 2)), (std::map<int32_t, float>{{3, 2.0f / 3}, {4, 1.0f / 3}}))
      << "the corpus table is never changed";
}

TEST(AdaptiveTrigramsTest, TheDefaultsAreAdedsAndGroupsAdaptApart) {
  const TrigramAdaptation defaults;
  EXPECT_EQ(defaults.window, 16);
  EXPECT_FLOAT_EQ(defaults.increment, 0.04f);
  EXPECT_FLOAT_EQ(defaults.cap, 3.0f);
  TrigramStore store(std::make_shared<const TrigramTable>());
  store.table(1)->adjust({1, 2, 3}, 3);
  EXPECT_EQ(store.table(1), store.table(1));
  EXPECT_EQ(row_of(store.table(1)->successors(1, 2)), (std::map<int32_t, float>{{3, 0.04f}}));
  EXPECT_TRUE(store.table(2)->successors(1, 2).empty());
  EXPECT_TRUE(throws_error([] { AdaptiveTrigrams(std::make_shared<const TrigramTable>(), {2, 0.04f, 3.0f}); },
                           ErrorKind::kInvalidArgument, {"window 2"}));
}

// (1, 2) -> 3 (0.6) | 4 (0.4); (2, 3) -> 5; (2, 4) -> 6; (3, 5) -> 7;
// (4, 6) -> 8; (5, 7) -> 9.
TrigramRows hand_rows() {
  return [](int32_t a, int32_t b) -> std::vector<TrigramSuccessor> {
    const std::map<std::pair<int32_t, int32_t>, std::vector<TrigramSuccessor>> rows = {
        {{1, 2}, {{3, 0.6f}, {4, 0.4f}}}, {{2, 3}, {{5, 1.0f}}}, {{2, 4}, {{6, 1.0f}}},
        {{3, 5}, {{7, 1.0f}}},            {{4, 6}, {{8, 1.0f}}}, {{5, 7}, {{9, 1.0f}}}};
    const auto it = rows.find({a, b});
    return it == rows.end() ? std::vector<TrigramSuccessor>{} : it->second;
  };
}

TEST(AdedSearchTest, ExplorationWeightMatchesTheNotes) {
  EXPECT_NEAR(aded_exploration(150, 32, 8), 32 + std::log(159.0 / 8), 1e-12);
  EXPECT_NEAR(aded_exploration(150, 32, 8), 34.99, 0.01);
}

TEST(AdedSearchTest, TwoIterationsExpandAsComputedByHand) {
  // 1: the root expands into 3 and 4 and continues through 3; the rollout
  //    (2,3)->5, (3,5)->7 ends at depth 4. 2: 4 is unvisited, so selected
  //    first whatever its prior; it expands into 6 and rolls out to 8.
  // Drafts: each node's path plus the best successor of its last two tokens.
  AdedSearchOptions o;
  o.iterations = 2;
  const auto drafts = aded_search(hand_rows(), 1, 2, o, [](uint32_t) { return 0.5; });
  ASSERT_EQ(drafts.size(), 3u);
  EXPECT_EQ(drafts[0].tokens, (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(drafts[1].tokens, (std::vector<int32_t>{4, 6}));
  EXPECT_EQ(drafts[2].tokens, (std::vector<int32_t>{4, 6, 8}));
  for (const AdedDraft& d : drafts) EXPECT_EQ(d.visits, 1);
  EXPECT_TRUE(aded_search(hand_rows(), 7, 7, o, [](uint32_t) { return 0.5; }).empty());
}

TEST(AdedSearchTest, VisitsAreConservedAndDraftsRespectTheLimits) {
  // A random-looking table over 6 tokens, 3 successors per context.
  const TrigramRows rows = [](int32_t a, int32_t b) {
    std::vector<TrigramSuccessor> row;
    for (int32_t j = 0; j < 3; ++j) row.push_back({(a * 5 + b * 3 + j * 2) % 6, 0.5f / static_cast<float>(j + 1)});
    sort_successors(row);
    return row;
  };
  AdedSearchOptions o;  // 150 iterations, depth 4, 24 candidates
  int calls = 0;
  const auto uniform = [&calls](uint32_t i) {
    ++calls;
    return std::fmod(0.618034 * (i + 1), 1.0);
  };
  const auto drafts = aded_search(rows, 1, 2, o, uniform);
  ASSERT_EQ(drafts.size(), 24u);
  EXPECT_GT(calls, 0) << "rollouts draw";
  int first_level = 0;
  for (size_t i = 0; i < drafts.size(); ++i) {
    EXPECT_GE(drafts[i].tokens.size(), 1u);
    EXPECT_LE(drafts[i].tokens.size(), 4u);
    if (i > 0) {
      EXPECT_GE(drafts[i - 1].visits, drafts[i].visits) << "most visited first";
    }
    // Every iteration passes through one child of the root (paths of 1 token, +1 extension).
    if (drafts[i].tokens.size() == 2) first_level += drafts[i].visits;
  }
  EXPECT_EQ(first_level, o.iterations);
  // The same table and uniforms: the same drafts.
  const auto again = aded_search(rows, 1, 2, o, uniform);
  ASSERT_EQ(again.size(), drafts.size());
  for (size_t i = 0; i < drafts.size(); ++i) EXPECT_EQ(again[i].tokens, drafts[i].tokens);
  o.depth = 1;
  EXPECT_TRUE(throws_error([&] { aded_search(rows, 1, 2, o, uniform); }, ErrorKind::kInvalidArgument, {"depth 1"}));
}

TEST(AdedDrafterTest, MergesTheDraftsIntoATrieWithinTheShape) {
  auto store = std::make_shared<TrigramStore>(std::make_shared<const TrigramTable>(
      TrigramTable::build({{1, 2, 3, 5, 7, 9}, {1, 2, 3, 5, 7, 9}, {1, 2, 4, 6, 8}})));
  AdedDrafter drafter(store);
  DraftSettings settings;
  settings.k_config = {2, 1, 1};
  settings.group = 4;
  drafter.start(0, {0, 1, 2}, settings);
  const DraftTree draft = drafter.propose(0, 8);
  EXPECT_TRUE(draft.deterministic);
  EXPECT_TRUE(draft.q.empty());
  // Two branches, each a chain: 3 5 7 (9 is past the depth) and 4 6 8, the
  // likelier (more visited) first.
  EXPECT_EQ(draft.tokens, (std::vector<int32_t>{3, 5, 7, 4, 6, 8}));
  EXPECT_EQ(draft.parents, (std::vector<int32_t>{-1, 0, 1, -1, 3, 4}));
  EXPECT_EQ(drafter.propose(0, 1).tokens, (std::vector<int32_t>{3, 4})) << "max_depth bounds the trie";

  // The accepted tokens adapt the group's table, step after step: after
  // (1, 2) 4 overtakes 3 (1/3 + 11 x 0.04 > 2/3).
  Verdict verdict;
  verdict.tokens = {4, 6, 8, 1, 2};
  for (int step = 0; step < 6; ++step) drafter.advance(0, verdict);
  EXPECT_EQ(drafter.propose(0, 8).tokens.front(), 4);
  EXPECT_EQ(store->table(4)->successors(1, 2).front().token, 4);
  drafter.finish(0);
  EXPECT_TRUE(throws_error([&] { drafter.propose(0, 4); }, ErrorKind::kInvalidArgument, {"slot 0"}));
}

}  // namespace
}  // namespace seed::spec
