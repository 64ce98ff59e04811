// STAND's n-gram table: the merge rule on a hand example, top-10
// truncation, occurrence counts, and longest-context-first lookup.
#include "spec/drafters/stand/ngram_table.h"

#include <gtest/gtest.h>

#include <memory>

#include "spec/drafters/stand/ngram_store.h"

namespace seed::spec {
namespace {

TopTokens dist(std::vector<int32_t> ids, std::vector<float> probs) { return {std::move(ids), std::move(probs)}; }

TEST(NgramTableTest, MergeAveragesOverOccurrencesOnTheNotesExample) {
  // Bob 0, Mary 1, Tom 2, Sue 3, as after "I am" in STAND's Figure 4 (Song et al. 2025, sec. 4.1).
  NgramTable::Entry entry;
  NgramTable::merge(entry, dist({0, 1, 2}, {0.7f, 0.2f, 0.05f}));
  NgramTable::merge(entry, dist({0, 1, 3}, {0.3f, 0.6f, 0.05f}));
  EXPECT_EQ(entry.count, 2u);
  ASSERT_EQ(entry.next.ids, (std::vector<int32_t>{0, 1, 2, 3}));  // most likely first, ties to the lower id
  EXPECT_FLOAT_EQ(entry.next.probs[0], 0.5f);
  EXPECT_FLOAT_EQ(entry.next.probs[1], 0.4f);
  EXPECT_FLOAT_EQ(entry.next.probs[2], 0.025f);
  EXPECT_FLOAT_EQ(entry.next.probs[3], 0.025f);
  // A third occurrence weighs 1/3.
  NgramTable::merge(entry, dist({3}, {1.0f}));
  EXPECT_EQ(entry.count, 3u);
  EXPECT_EQ(entry.next.ids.front(), 3);
  EXPECT_NEAR(entry.next.probs.front(), 0.025 * 2 / 3 + 1.0 / 3, 1e-6);
}

TEST(NgramTableTest, KeepsTheTenMostLikely) {
  NgramTable::Entry entry;
  std::vector<int32_t> ids;
  std::vector<float> probs;
  for (int32_t i = 0; i < 10; ++i) {
    ids.push_back(i);
    probs.push_back(0.1f - 0.001f * i);
  }
  NgramTable::merge(entry, dist(ids, probs));
  NgramTable::merge(entry, dist({50, 51}, {0.6f, 0.3f}));
  ASSERT_EQ(entry.next.ids.size(), 10u);
  EXPECT_EQ(entry.next.ids[0], 50);
  EXPECT_EQ(entry.next.ids[1], 51);
  EXPECT_EQ(entry.next.ids[9], 7);  // 8 and 9 fell out
}

TEST(NgramTableTest, LookupPrefersTheLongestSeenContext) {
  NgramTable table;
  const std::vector<int32_t> a = {1, 2, 3, 4, 5};
  table.add(a, 5, dist({9}, {1.0f}));  // contexts (5), (4 5), (3 4 5), (2 3 4 5)
  const std::vector<int32_t> b = {7, 7, 7, 5};
  table.add(b, 4, dist({8}, {1.0f}));  // (5) again, (7 5), (7 7 5), (7 7 7 5)

  NgramTable::Entry e;
  ASSERT_TRUE(table.lookup({0, 2, 3, 4, 5}, &e));  // 4-gram hit: only a's distribution
  EXPECT_EQ(e.next.ids, (std::vector<int32_t>{9}));
  ASSERT_TRUE(table.lookup({6, 6, 6, 5}, &e));  // only (5) matches: both merged
  EXPECT_EQ(e.count, 2u);
  EXPECT_EQ(e.next.ids, (std::vector<int32_t>{8, 9}));
  EXPECT_FLOAT_EQ(e.next.probs[0], 0.5f);
  ASSERT_TRUE(table.lookup({7, 5}, &e));
  EXPECT_EQ(e.next.ids, (std::vector<int32_t>{8}));
  EXPECT_FALSE(table.lookup({4}, &e));
  EXPECT_FALSE(table.lookup({}, &e));
  table.add(a, 0, dist({1}, {1.0f}));  // no context: nothing
  ASSERT_TRUE(table.lookup({6, 6, 6, 5}, &e));
  EXPECT_EQ(e.count, 2u);
  EXPECT_EQ(e.next.ids, (std::vector<int32_t>{8, 9}));
}

TEST(NgramTableTest, TheStoreSharesOneTablePerGroup) {
  NgramStore store;
  EXPECT_EQ(store.table(3), store.table(3));
  EXPECT_NE(store.table(3), store.table(4));
}

TEST(NgramTableTest, ADroppedGroupsTableIsFreedOnceItsLastSlotLetsGo) {
  NgramStore store;
  const std::weak_ptr<NgramTable> alone = store.table(3);
  std::shared_ptr<NgramTable> held = store.table(4);  // as a slot still drafting holds it
  const std::weak_ptr<NgramTable> kept = store.table(5);
  held->add({1, 2}, 2, dist({7}, {1.0f}));
  store.drop(3);
  store.drop(4);
  store.drop(6);  // never made: nothing to drop
  EXPECT_TRUE(alone.expired());
  EXPECT_FALSE(kept.expired());
  NgramTable::Entry e;
  EXPECT_TRUE(held->lookup({1, 2}, &e));
  EXPECT_NE(store.table(4), held);  // the group starts afresh
  EXPECT_FALSE(store.table(4)->lookup({1, 2}, &e));
  const std::weak_ptr<NgramTable> last = held;
  held.reset();
  EXPECT_TRUE(last.expired());
}

}  // namespace
}  // namespace seed::spec
