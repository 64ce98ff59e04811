// Lessons (spec/drafters/lesson.h): a STAND or ADED table that learns a sequence's
// lessons -- each carrying only the last few tokens before a verdict --
// ends up equal to the table of the drafter that saw the sequence itself,
// entry for entry, and drafts the same trees from it; starts and verdicts
// that teach a kind nothing are recognised as such.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "spec/drafters/aded/aded_drafter.h"
#include "spec/drafters/lesson.h"
#include "spec/drafters/stand/ngram_store.h"
#include "spec/drafters/stand/stand_drafter.h"
#include "spec/drafters/aded/trigram_store.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

using ::seed::testing::throws_error;

constexpr int64_t kVocab = 12;
constexpr uint64_t kGroup = 7;
constexpr uint64_t kSlot = 3;

// Verdicts of 1..4 tokens over a small vocabulary, with repeats, so that
// contexts recur and entries merge several distributions; each token with
// the target's top entries at it (ids and probabilities vary per verdict).
std::vector<Verdict> verdicts() {
  std::vector<Verdict> out;
  int32_t t = 1;
  for (int v = 0; v < 30; ++v) {
    Verdict verdict;
    for (int i = 0; i <= v % 4; ++i) {
      t = (t * 5 + v) % static_cast<int32_t>(kVocab);
      verdict.tokens.push_back(t);
      TopTokens top;
      for (int j = 0; j < 3; ++j) {
        top.ids.push_back((t + j * (v % 3 + 1)) % static_cast<int32_t>(kVocab));
        top.probs.push_back(0.5f / static_cast<float>(j + 1) + 0.01f * static_cast<float>(v % 5));
      }
      verdict.target_top.push_back(top);
    }
    out.push_back(verdict);
  }
  return out;
}

const std::vector<int32_t> kPrompt = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4};

DraftSettings settings(float temperature) {
  DraftSettings s;
  s.sampling.temperature = temperature;
  s.seed = 11;
  s.k_config = {3, 2, 1, 1};
  s.group = kGroup;
  return s;
}

// Every context of 1..4 tokens ending anywhere in `sequence` (and the empty
// one's successors) looks up the same entry in both tables.
void expect_same_ngram_entries(const NgramTable& a, const NgramTable& b, const std::vector<int32_t>& sequence) {
  for (size_t end = 1; end <= sequence.size(); ++end) {
    for (size_t length = 1; length <= end && length <= NgramTable::kMaxContext; ++length) {
      const std::vector<int32_t> context(sequence.begin() + static_cast<std::ptrdiff_t>(end - length),
                                         sequence.begin() + static_cast<std::ptrdiff_t>(end));
      NgramTable::Entry ea, eb;
      ASSERT_EQ(a.lookup(context, &ea), b.lookup(context, &eb));
      EXPECT_EQ(ea.count, eb.count);
      EXPECT_EQ(ea.next.ids, eb.next.ids);
      EXPECT_EQ(ea.next.probs, eb.next.probs);  // the same merges in the same order: bit for bit
    }
  }
}

void expect_same_draft(const DraftTree& a, const DraftTree& b) {
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.parents, b.parents);
  EXPECT_EQ(a.q, b.q);
}

TEST(LessonTest, AStandTableThatLearnsLessonsEqualsTheDraftersOwn) {
  auto own = std::make_shared<NgramStore>();
  StandDrafter drafter(own, kVocab, std::nullopt);
  drafter.start(kSlot, kPrompt, settings(0.0f));
  auto taught = std::make_shared<NgramStore>();
  std::vector<int32_t> sequence = kPrompt;
  EXPECT_FALSE(teaches(DrafterKind::kStand, make_lesson(DrafterKind::kStand, kGroup, sequence, {}, {})));
  for (const Verdict& v : verdicts()) {
    drafter.advance(kSlot, v);
    const Lesson lesson = make_lesson(DrafterKind::kStand, kGroup, sequence, v.tokens, v.target_top);
    EXPECT_EQ(lesson.context.size(), static_cast<size_t>(NgramTable::kMaxContext));
    EXPECT_TRUE(teaches(DrafterKind::kStand, lesson));
    learn(*taught->table(kGroup), lesson);
    sequence.insert(sequence.end(), v.tokens.begin(), v.tokens.end());
  }
  NgramTable::Entry entry;
  ASSERT_TRUE(own->table(kGroup)->lookup({sequence.back()}, &entry)) << "the drafter learned from its verdicts";
  expect_same_ngram_entries(*own->table(kGroup), *taught->table(kGroup), sequence);
  EXPECT_FALSE(taught->table(kGroup + 1)->lookup({sequence.back()}, &entry)) << "a lesson teaches its own group only";

  // A new slot of the group drafts the same trees from either table,
  // greedy and sampled (q rows included).
  for (const float temperature : {0.0f, 0.8f}) {
    StandDrafter from_own(own, kVocab, std::nullopt), from_taught(taught, kVocab, std::nullopt);
    const std::vector<int32_t> tail(sequence.end() - 6, sequence.end());
    from_own.start(kSlot, tail, settings(temperature));
    from_taught.start(kSlot, tail, settings(temperature));
    const DraftTree draft = from_own.propose(kSlot, 4);
    EXPECT_FALSE(draft.tokens.empty());
    expect_same_draft(draft, from_taught.propose(kSlot, 4));
  }
}

TEST(LessonTest, AnAdedTableThatLearnsLessonsEqualsTheDraftersOwn) {
  const auto corpus = std::make_shared<const TrigramTable>(TrigramTable::build({{1, 2, 3, 1, 2, 4}, {5, 6, 7}}));
  auto own = std::make_shared<TrigramStore>(corpus);
  AdedDrafter drafter(own);
  drafter.start(kSlot, kPrompt, settings(0.0f));
  auto taught = std::make_shared<TrigramStore>(corpus);
  std::vector<int32_t> sequence = kPrompt;
  // ADED adapts to the prompt when a slot starts: that teaches too.
  const Lesson start = make_lesson(DrafterKind::kAded, kGroup, sequence, {}, {});
  EXPECT_EQ(start.context.size(), lesson_context(DrafterKind::kAded));
  EXPECT_TRUE(teaches(DrafterKind::kAded, start));
  learn(*taught->table(kGroup), start);
  for (const Verdict& v : verdicts()) {
    drafter.advance(kSlot, v);
    learn(*taught->table(kGroup), make_lesson(DrafterKind::kAded, kGroup, sequence, v.tokens, {}));
    sequence.insert(sequence.end(), v.tokens.begin(), v.tokens.end());
  }
  for (int32_t a = 0; a < kVocab; ++a) {
    for (int32_t b = 0; b < kVocab; ++b) {
      const std::vector<TrigramSuccessor> x = own->table(kGroup)->successors(a, b);
      const std::vector<TrigramSuccessor> y = taught->table(kGroup)->successors(a, b);
      ASSERT_EQ(x.size(), y.size()) << "context (" << a << ", " << b << ")";
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(x[i].token, y[i].token);
        EXPECT_EQ(x[i].weight, y[i].weight) << "context (" << a << ", " << b << ")";
      }
    }
  }
  AdedDrafter from_own(own), from_taught(taught);
  const std::vector<int32_t> tail(sequence.end() - 6, sequence.end());
  from_own.start(kSlot, tail, settings(0.0f));
  from_taught.start(kSlot, tail, settings(0.0f));
  const DraftTree draft = from_own.propose(kSlot, 4);
  EXPECT_FALSE(draft.tokens.empty());
  expect_same_draft(draft, from_taught.propose(kSlot, 4));
}

TEST(LessonTest, KindsWithoutGroupTablesHaveNothingToTeach) {
  const Lesson lesson = make_lesson(DrafterKind::kLookup, kGroup, kPrompt, {1, 2}, {});
  EXPECT_TRUE(lesson.context.empty());
  EXPECT_FALSE(teaches(DrafterKind::kLookup, lesson));
  EXPECT_FALSE(teaches(DrafterKind::kModel, make_lesson(DrafterKind::kModel, kGroup, kPrompt, {1}, {})));
  EXPECT_EQ(lesson_context(DrafterKind::kModel), 0u);
}

TEST(LessonTest, MoreDistributionsThanTokensIsRejected) {
  NgramTable table;
  std::vector<int32_t> sequence = {1, 2};
  EXPECT_TRUE(throws_error([&] { learn_verdict(table, sequence, {3}, {TopTokens{{3}, {1.0f}}, TopTokens{{4}, {1.0f}}}); },
                           ErrorKind::kInvalidArgument, {"2 target distributions for 1 tokens"}));
}

}  // namespace
}  // namespace seed::spec
