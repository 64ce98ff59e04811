// The rank-to-rank messages: every type survives a round trip, a proposal
// carries exactly the q rows verification reads, and every damaged buffer
// (each truncation, another version, a bad count) is rejected naming the
// sender rank.
#include "parallel/wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/throws_error.h"

namespace seed::parallel::wire {
namespace {

using seed::testing::throws_error;

constexpr int kSender = 3;

// A tree of 4 nodes: 0 and 1 children of the prefix, 2 of node 0, 3 of node
// 2. Contexts 0, 1 (after node 0) and 3 (after node 2) have children;
// contexts 2 and 4 do not, so their (empty) rows do not travel.
spec::DraftTree sample_tree() {
  spec::DraftTree d;
  d.tokens = {4, 1, 3, 0};
  d.parents = {-1, -1, 0, 2};
  d.q = {{{4, 1, 2}, {0.5f, 0.25f, 0.25f}}, {{3, 0}, {0.75f, 0.25f}}, {}, {{0}, {1.0f}}, {}};
  return d;
}

// A proposal message of one slot's draft, and that draft back; the draft's
// bytes start at kDraftAt, after header 5, count 4, slot 8 and status 1.
ProposalMessage proposal(uint64_t slot, spec::DraftTree draft) {
  return ProposalMessage{{{slot, std::move(draft), std::nullopt}}};
}
spec::DraftTree draft_of(const Message& message) { return std::get<ProposalMessage>(message).items.at(0).draft; }
constexpr size_t kDraftAt = 5 + 4 + 8 + 1;

// Where a sample_tree proposal's first q row starts: after token count 4, 4
// tokens, 4 parents and the flags byte; its count, then 3 ids, then 3 probs.
constexpr size_t kRow0 = kDraftAt + 4 + 16 + 16 + 1;
constexpr size_t kRow0Ids = kRow0 + 4;
constexpr size_t kRow0Probs = kRow0Ids + 3 * 4;

// The sample tree's proposal with `value` written over the 4 bytes at `at`.
template <typename T>
std::vector<uint8_t> proposal_with(size_t at, T value) {
  static_assert(sizeof(T) == 4);
  std::vector<uint8_t> bytes = encode(proposal(7, sample_tree()));
  std::memcpy(bytes.data() + at, &value, sizeof(T));
  return bytes;
}

std::vector<Message> one_of_each() {
  StartMessage start{7, {1, 5, 9, 2}, {}};
  start.settings.sampling.temperature = 0.7f;
  start.settings.sampling.top_k = 20;
  start.settings.sampling.top_p = 0.9f;
  start.settings.seed = 1234567890123ull;
  start.settings.stream = 42;
  start.settings.k_config = {2, 2, 1};
  start.settings.group = 99;
  start.drafter = spec::DrafterKind::kAded;
  StartMessage pruned_start = start;
  pruned_start.settings.pruned = spec::PrunedTree{0.125f, 0.0625f};
  StartMessage drawing_start = start;
  drawing_start.settings.sample_drafts = true;
  spec::Verdict verdict;
  verdict.accepted = {0, 2};
  verdict.bonus = 17;
  verdict.tokens = {4, 3, 17};
  verdict.target_top = {{{4, 1}, {0.5f, 0.25f}}, {{3}, {0.875f}}, {{}, {}}};
  spec::Verdict edd_verdict = verdict;  // with the target's hidden states, two positions of width 3
  edd_verdict.hidden = {0.5f, -1.25f, 3.0f, 0.0f, 7.5f, -0.125f};
  edd_verdict.hidden_from = 41;
  spec::DraftTree chain;
  chain.tokens = {2, 2};
  chain.parents = {-1, 0};
  chain.deterministic = true;
  chain.confidence = {0.75f, 0.5f};
  return {start,
          pruned_start,
          drawing_start,
          DraftMessage{{{7, 4}, {9, 0}}},
          ProposalMessage{{{7, sample_tree(), std::nullopt}, {9, {}, "rank 2: slot 9 was not started"}, {8, chain, std::nullopt}},
                          3},
          VerdictMessage{7, verdict},
          VerdictMessage{8, edd_verdict},
          FinishMessage{7},
          ShutdownMessage{},
          ErrorMessage{"rank 2: out of memory"},
          VerifyMessage{{SlotDraft{7, sample_tree()}, SlotDraft{8, chain}}, 10},
          VerdictsMessage{{VerdictMessage{7, verdict}, VerdictMessage{8, spec::Verdict{{}, 5, {5}, {}}}},
                          {120, 40, 4096, 1024, 3, 9, 0.25, 0.125, 2}},
          UsageRequestMessage{},
          UsageMessage{{RankUsage{1, 2.5, 10.0, 3.25}, RankUsage{2, 0.5, 9.75, 0.125}}},
          LessonMessage{spec::DrafterKind::kStand, spec::Lesson{99, {8, 1, 5, 9}, {4, 3, 17}, verdict.target_top}},
          EndGroupMessage{0x8000000000000063ull}};
}

// A lesson whose fields a receiver must refuse once encoded: encode checks
// only the distributions, so these are made by hand-editing good bytes.
std::vector<uint8_t> lesson_bytes(spec::DrafterKind drafter, std::vector<int32_t> context) {
  return encode(LessonMessage{drafter, spec::Lesson{5, std::move(context), {2}, {}}});
}

TEST(Wire, EveryMessageTypeSurvivesARoundTrip) {
  for (const Message& sent : one_of_each()) {
    SCOPED_TRACE(message_name(sent));
    const Message got = decode(encode(sent), kSender);
    ASSERT_EQ(got.index(), sent.index());
    if (auto* m = std::get_if<StartMessage>(&sent)) {
      const auto& g = std::get<StartMessage>(got);
      EXPECT_EQ(g.slot, m->slot);
      EXPECT_EQ(g.tokens, m->tokens);
      EXPECT_EQ(g.settings.sampling.temperature, m->settings.sampling.temperature);
      EXPECT_EQ(g.settings.sampling.top_k, m->settings.sampling.top_k);
      EXPECT_EQ(g.settings.sampling.top_p, m->settings.sampling.top_p);
      EXPECT_EQ(g.settings.seed, m->settings.seed);
      EXPECT_EQ(g.settings.stream, m->settings.stream);
      EXPECT_EQ(g.settings.k_config, m->settings.k_config);
      EXPECT_EQ(g.settings.group, m->settings.group);
      ASSERT_EQ(g.settings.pruned.has_value(), m->settings.pruned.has_value());
      if (m->settings.pruned) {
        EXPECT_EQ(g.settings.pruned->expand, m->settings.pruned->expand);
        EXPECT_EQ(g.settings.pruned->prune, m->settings.pruned->prune);
      }
      EXPECT_EQ(g.settings.sample_drafts, m->settings.sample_drafts);
      EXPECT_EQ(g.drafter, m->drafter);
    } else if (auto* m = std::get_if<DraftMessage>(&sent)) {
      const auto& g = std::get<DraftMessage>(got);
      ASSERT_EQ(g.asks.size(), m->asks.size());
      for (size_t i = 0; i < g.asks.size(); ++i) {
        EXPECT_EQ(g.asks[i].slot, m->asks[i].slot);
        EXPECT_EQ(g.asks[i].max_depth, m->asks[i].max_depth);
      }
    } else if (auto* m = std::get_if<ProposalMessage>(&sent)) {
      const auto& g = std::get<ProposalMessage>(got);
      ASSERT_EQ(g.items.size(), m->items.size());
      for (size_t i = 0; i < g.items.size(); ++i) {
        EXPECT_EQ(g.items[i].slot, m->items[i].slot);
        EXPECT_EQ(g.items[i].error, m->items[i].error);
        EXPECT_EQ(g.items[i].draft.tokens, m->items[i].draft.tokens);
        EXPECT_EQ(g.items[i].draft.parents, m->items[i].draft.parents);
        EXPECT_EQ(g.items[i].draft.deterministic, m->items[i].draft.deterministic);
        EXPECT_EQ(g.items[i].draft.q, m->items[i].draft.q);
        EXPECT_EQ(g.items[i].draft.confidence, m->items[i].draft.confidence);
      }
      EXPECT_EQ(g.graph_warm_ups, m->graph_warm_ups);
    } else if (auto* m = std::get_if<VerdictMessage>(&sent)) {
      const auto& g = std::get<VerdictMessage>(got);
      EXPECT_EQ(g.slot, m->slot);
      EXPECT_EQ(g.verdict.accepted, m->verdict.accepted);
      EXPECT_EQ(g.verdict.bonus, m->verdict.bonus);
      EXPECT_EQ(g.verdict.tokens, m->verdict.tokens);
      EXPECT_EQ(g.verdict.hidden, m->verdict.hidden);
      EXPECT_EQ(g.verdict.hidden_from, m->verdict.hidden_from);
      ASSERT_EQ(g.verdict.target_top.size(), m->verdict.target_top.size());
      for (size_t i = 0; i < g.verdict.target_top.size(); ++i) {
        EXPECT_EQ(g.verdict.target_top[i].ids, m->verdict.target_top[i].ids);
        EXPECT_EQ(g.verdict.target_top[i].probs, m->verdict.target_top[i].probs);
      }
    } else if (auto* m = std::get_if<FinishMessage>(&sent)) {
      EXPECT_EQ(std::get<FinishMessage>(got).slot, m->slot);
    } else if (auto* m = std::get_if<ErrorMessage>(&sent)) {
      EXPECT_EQ(std::get<ErrorMessage>(got).text, m->text);
    } else if (auto* m = std::get_if<VerifyMessage>(&sent)) {
      const auto& g = std::get<VerifyMessage>(got);
      EXPECT_EQ(g.target_top_k, m->target_top_k);
      ASSERT_EQ(g.items.size(), m->items.size());
      for (size_t i = 0; i < g.items.size(); ++i) {
        EXPECT_EQ(g.items[i].slot, m->items[i].slot);
        EXPECT_EQ(g.items[i].draft.tokens, m->items[i].draft.tokens);
        EXPECT_EQ(g.items[i].draft.parents, m->items[i].draft.parents);
        EXPECT_EQ(g.items[i].draft.deterministic, m->items[i].draft.deterministic);
        EXPECT_EQ(g.items[i].draft.confidence, m->items[i].draft.confidence);
      }
    } else if (auto* m = std::get_if<VerdictsMessage>(&sent)) {
      const auto& g = std::get<VerdictsMessage>(got);
      ASSERT_EQ(g.items.size(), m->items.size());
      for (size_t i = 0; i < g.items.size(); ++i) {
        EXPECT_EQ(g.items[i].slot, m->items[i].slot);
        EXPECT_EQ(g.items[i].verdict.accepted, m->items[i].verdict.accepted);
        EXPECT_EQ(g.items[i].verdict.bonus, m->items[i].verdict.bonus);
        EXPECT_EQ(g.items[i].verdict.tokens, m->items[i].verdict.tokens);
      }
      EXPECT_EQ(g.prefill.prompt_tokens, m->prefill.prompt_tokens);
      EXPECT_EQ(g.prefill.computed_tokens, m->prefill.computed_tokens);
      EXPECT_EQ(g.prefill.kv_peak_bytes, m->prefill.kv_peak_bytes);
      EXPECT_EQ(g.prefill.kv_live_bytes, m->prefill.kv_live_bytes);
      EXPECT_EQ(g.prefill.evicted_blocks, m->prefill.evicted_blocks);
      EXPECT_EQ(g.prefill.verify_rounds, m->prefill.verify_rounds);
      EXPECT_EQ(g.prefill.forward_s, m->prefill.forward_s);
      EXPECT_EQ(g.prefill.host_verify_s, m->prefill.host_verify_s);
      EXPECT_EQ(g.prefill.graph_warm_ups, m->prefill.graph_warm_ups);
    } else if (auto* m = std::get_if<LessonMessage>(&sent)) {
      const auto& g = std::get<LessonMessage>(got);
      EXPECT_EQ(g.drafter, m->drafter);
      EXPECT_EQ(g.lesson.group, m->lesson.group);
      EXPECT_EQ(g.lesson.context, m->lesson.context);
      EXPECT_EQ(g.lesson.tokens, m->lesson.tokens);
      ASSERT_EQ(g.lesson.target_top.size(), m->lesson.target_top.size());
      for (size_t i = 0; i < g.lesson.target_top.size(); ++i) {
        EXPECT_EQ(g.lesson.target_top[i].ids, m->lesson.target_top[i].ids);
        EXPECT_EQ(g.lesson.target_top[i].probs, m->lesson.target_top[i].probs);
      }
    } else if (auto* m = std::get_if<EndGroupMessage>(&sent)) {
      EXPECT_EQ(std::get<EndGroupMessage>(got).group, m->group);
    } else if (auto* m = std::get_if<UsageMessage>(&sent)) {
      const auto& g = std::get<UsageMessage>(got);
      ASSERT_EQ(g.ranks.size(), m->ranks.size());
      for (size_t i = 0; i < g.ranks.size(); ++i) {
        EXPECT_EQ(g.ranks[i].rank, m->ranks[i].rank);
        EXPECT_EQ(g.ranks[i].busy_s, m->ranks[i].busy_s);
        EXPECT_EQ(g.ranks[i].wall_s, m->ranks[i].wall_s);
        EXPECT_EQ(g.ranks[i].cpu_s, m->ranks[i].cpu_s);
      }
    }
  }
}

TEST(Wire, ProposalCarriesExactlyTheRowsOfContextsWithChildren) {
  const spec::DraftTree sent = sample_tree();
  const std::vector<uint8_t> bytes = encode(proposal(7, sent));
  // tokens 4 + 16, parents 16, flags 1, then rows 0, 1 and 3 as (count 4,
  // ids, as many probs), confidences 4 (none): no vocabulary; then the
  // rank's graph warm-ups 8.
  EXPECT_EQ(bytes.size(), kDraftAt + 20 + 16 + 1 + (4 + 3 * 8) + (4 + 2 * 8) + (4 + 1 * 8) + 4 + 8);
  const auto got = std::get<ProposalMessage>(decode(bytes, kSender));
  ASSERT_EQ(got.items.size(), 1u);
  EXPECT_EQ(got.items[0].slot, 7u);
  EXPECT_FALSE(got.items[0].error);
  EXPECT_EQ(got.items[0].draft.tokens, sent.tokens);
  EXPECT_EQ(got.items[0].draft.parents, sent.parents);
  EXPECT_FALSE(got.items[0].draft.deterministic);
  EXPECT_FALSE(got.items[0].draft.without_replacement);
  EXPECT_EQ(got.items[0].draft.q, sent.q);
}

TEST(Wire, LargeIdsTravelWithTheWithoutReplacementFlag) {
  // STAND's draft over a 128K vocabulary: a few entries per row.
  spec::DraftTree sent;
  sent.tokens = {7, 128000, 3};
  sent.parents = {-1, -1, 0};
  sent.without_replacement = true;
  sent.q = {{{7, 128000, 11}, {0.5f, 0.25f, 0.25f}}, {{3}, {1.0f}}, {}, {}};
  const std::vector<uint8_t> bytes = encode(proposal(5, sent));
  EXPECT_EQ(bytes.size(), kDraftAt + 16 + 12 + 1 + (4 + 3 * 8) + (4 + 1 * 8) + 4 + 8);
  const spec::DraftTree got = draft_of(decode(bytes, kSender));
  EXPECT_TRUE(got.without_replacement);
  EXPECT_FALSE(got.deterministic);
  EXPECT_EQ(got.tokens, sent.tokens);
  EXPECT_EQ(got.q, sent.q);
}

TEST(Wire, BadQRowsAreRejectedNamingTheSender) {
  const auto rejected = [](const std::vector<uint8_t>& bytes, const std::string& what) {
    return throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                        {"proposal message from rank 3", what});
  };
  EXPECT_TRUE(rejected(proposal_with(kRow0Ids + 8, int32_t{-5}), "q row 0 names token -5"));
  EXPECT_TRUE(rejected(proposal_with(kRow0Ids + 8, int32_t{1} << 20), "q row 0 names token 1048576"));
  EXPECT_TRUE(rejected(proposal_with(kRow0Ids + 8, int32_t{4}), "q row 0 names token 4 twice"));
  EXPECT_TRUE(rejected(proposal_with(kRow0Probs + 8, 0.0f), "probability 0, outside (0, 1]"));
  EXPECT_TRUE(rejected(proposal_with(kRow0Probs + 8, 1.5f), "outside (0, 1]"));
  EXPECT_TRUE(rejected(proposal_with(kRow0Probs + 8, std::nanf("")), "outside (0, 1]"));
  EXPECT_TRUE(rejected(proposal_with(kRow0Probs + 8, 0.125f), "q row 0 sums to 0.875"));
  // Node 1's token 1 becomes token 3, which row 0 never offered.
  EXPECT_TRUE(rejected(proposal_with(kDraftAt + 4 + 4, int32_t{3}), "node 1's token 3 has no probability in q row 0"));
  // A count larger than the bytes left.
  EXPECT_TRUE(rejected(proposal_with(kRow0, uint32_t{1} << 30), "truncated"));
}

TEST(Wire, NegativeWarmUpCountsAreRejectedNamingTheSender) {
  // Both messages end with their graph warm-ups.
  const std::vector<Message> counted = {ProposalMessage{{{7, sample_tree(), std::nullopt}}, 2},
                                        VerdictsMessage{{}, {10, 10, 0, 0, 0, 1, 0.5, 0.25, 2}}};
  for (const Message& sent : counted) {
    std::vector<uint8_t> bytes = encode(sent);
    const int64_t negative = -2;
    std::memcpy(bytes.data() + bytes.size() - sizeof(negative), &negative, sizeof(negative));
    EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                             {std::string(message_name(sent)) + " message from rank 3",
                              "graph_warm_ups is -2, a negative count"}));
  }
}

TEST(Wire, DeterministicAndEmptyDraftsRoundTrip) {
  spec::DraftTree deterministic;
  deterministic.tokens = {3, 3};
  deterministic.parents = {-1, 0};
  deterministic.deterministic = true;
  const spec::DraftTree got = draft_of(decode(encode(proposal(1, deterministic)), kSender));
  EXPECT_TRUE(got.deterministic);
  EXPECT_EQ(got.tokens, deterministic.tokens);
  EXPECT_TRUE(got.q.empty());

  spec::DraftTree empty;  // a sampled draft with no nodes sends no rows
  empty.q = {{{0, 1}, {0.5f, 0.5f}}};
  const spec::DraftTree got_empty = draft_of(decode(encode(proposal(2, empty)), kSender));
  EXPECT_TRUE(got_empty.tokens.empty());
  EXPECT_TRUE(got_empty.q.empty());
}

TEST(Wire, EveryTruncationIsRejectedNamingTheSender) {
  for (const Message& sent : one_of_each()) {
    const std::vector<uint8_t> bytes = encode(sent);
    for (size_t length = 0; length < bytes.size(); ++length) {
      const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + length);
      EXPECT_TRUE(throws_error([&] { decode(cut, kSender); }, ErrorKind::kCorruption, {"from rank 3", "truncated"}))
          << message_name(sent) << " cut to " << length << " of " << bytes.size() << " bytes";
    }
  }
}

TEST(Wire, AProposalCannotAskForMoreThanItsBytes) {
  // magic, version, type 3 (proposal), one item: slot 5, status 0 (a
  // draft), 4096 tokens (all 0, every parent -1), flags 0 (sampled), then
  // row 0 claiming 2^31 entries: what a row holds is bounded by the bytes
  // that carry it, checked before allocating.
  std::vector<uint8_t> bytes = {'S', 'D', uint8_t(kVersion & 0xff), uint8_t(kVersion >> 8), 3, 1, 0, 0, 0};
  for (int i = 0; i < 8; ++i) bytes.push_back(i == 0 ? 5 : 0);
  bytes.push_back(0);
  for (uint8_t b : {0, 0x10, 0, 0}) bytes.push_back(b);
  bytes.resize(bytes.size() + 4096 * 4, 0);
  bytes.resize(bytes.size() + 4096 * 4, 0xff);
  for (uint8_t b : {0, /*ids*/ 0, 0, 0, 0x80}) bytes.push_back(b);
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"proposal message from rank 3", "reading q ids", "8589934592 bytes needed"}));
  // The dense rows of earlier versions are gone with their flag.
  bytes[kDraftAt + 4 + 4096 * 8] = 4;
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption, {"unknown proposal flags 4"}));
}

TEST(Wire, ASlotAskedTwiceAndAnUnknownStatusAreRejected) {
  EXPECT_TRUE(throws_error([&] { decode(encode(DraftMessage{{{7, 4}, {8, 2}, {7, 1}}}), kSender); },
                           ErrorKind::kCorruption, {"draft message from rank 3", "slot 7 asked twice"}));
  std::vector<uint8_t> bytes = encode(proposal(7, sample_tree()));
  bytes[kDraftAt - 1] = 2;  // the status byte
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"proposal message from rank 3", "slot 7 has unknown status 2"}));
}

TEST(Wire, TrailingBytesAreRejected) {
  std::vector<uint8_t> bytes = encode(FinishMessage{9});
  bytes.push_back(0);
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"finish message from rank 3", "1 bytes follow"}));
}

TEST(Wire, AnotherVersionIsRejectedNamingBoth) {
  std::vector<uint8_t> bytes = encode(ShutdownMessage{});
  bytes[2] = kVersion + 1;  // the u16 version follows the 2-byte magic
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"from rank 3", "wire version " + std::to_string(kVersion + 1),
                            "speaks version " + std::to_string(kVersion)}));
}

TEST(Wire, BadMagicAndUnknownTypeAreRejected) {
  std::vector<uint8_t> bytes = encode(ShutdownMessage{});
  bytes[0] = 'X';
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption, {"from rank 3", "bad magic"}));
  bytes = encode(ShutdownMessage{});
  bytes[4] = 99;  // the type byte
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"from rank 3", "unknown message type 99"}));
}

TEST(Wire, CountPastTheBufferIsRejectedBeforeAllocating) {
  std::vector<uint8_t> bytes = encode(FinishMessage{0});
  bytes[4] = 1;  // now a start message: slot, then a token count
  const std::vector<uint8_t> huge_count = {0xff, 0xff, 0xff, 0xff};
  bytes.insert(bytes.end(), huge_count.begin(), huge_count.end());
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"start message from rank 3", "reading tokens", "17179869180 bytes needed"}));
}

TEST(Wire, ParentThatIsNotAnEarlierNodeIsRejected) {
  spec::DraftTree d = sample_tree();
  std::vector<uint8_t> bytes = encode(proposal(7, d));
  // parents start after the token count 4 and 4 tokens.
  const size_t parent2 = kDraftAt + 4 + 16 + 2 * 4;
  bytes[parent2] = 3;  // node 2's parent becomes node 3
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"proposal message from rank 3", "node 2 has parent 3"}));
}

TEST(Wire, EncodingAMalformedProposalThrows) {
  spec::DraftTree d = sample_tree();
  d.q.pop_back();
  EXPECT_TRUE(throws_error([&] { encode(proposal(7, d)); }, ErrorKind::kInvalidArgument,
                           {"q has 4 rows", "n + 1 = 5"}));
  d = sample_tree();
  d.q[0].probs.pop_back();
  EXPECT_TRUE(throws_error([&] { encode(proposal(7, d)); }, ErrorKind::kInvalidArgument,
                           {"3 ids but 2 probs"}));
  d = sample_tree();
  d.parents[1] = 1;
  EXPECT_TRUE(throws_error([&] { encode(proposal(7, d)); }, ErrorKind::kInvalidArgument,
                           {"node 1 has parent 1"}));
}

TEST(Wire, LessonsForDraftersWithoutTablesOrWithTooMuchAreRejected) {
  // The drafter byte follows the 5-byte header.
  std::vector<uint8_t> bytes = lesson_bytes(spec::DrafterKind::kStand, {1});
  bytes[5] = static_cast<uint8_t>(spec::DrafterKind::kLookup);
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"lesson message from rank 3", "'lookup' keeps no group table"}));
  EXPECT_TRUE(throws_error([&] { decode(lesson_bytes(spec::DrafterKind::kStand, {1, 2, 3, 4, 5}), kSender); },
                           ErrorKind::kCorruption, {"lesson message from rank 3", "5 context tokens", "the 4"}));
  EXPECT_NO_THROW(decode(lesson_bytes(spec::DrafterKind::kAded, std::vector<int32_t>(16, 1)), kSender));
  // More distributions than tokens: refused when encoding, and when
  // decoding (the token count, after header 5, drafter 1, group 8 and
  // the context, cut from 1 to 0).
  const spec::Lesson two_tops{5, {}, {2}, {spec::TopTokens{{2}, {1.0f}}}};
  EXPECT_TRUE(throws_error([&] { encode(LessonMessage{spec::DrafterKind::kStand, {5, {}, {}, two_tops.target_top}}); },
                           ErrorKind::kInvalidArgument, {"1 target distributions for 0 tokens"}));
  bytes = encode(LessonMessage{spec::DrafterKind::kStand, two_tops});
  const size_t tokens_at = 5 + 1 + 8 + 4;
  bytes[tokens_at] = 0;
  bytes.erase(bytes.begin() + tokens_at + 4, bytes.begin() + tokens_at + 8);
  EXPECT_TRUE(throws_error([&] { decode(bytes, kSender); }, ErrorKind::kCorruption,
                           {"lesson message from rank 3", "1 target distributions for 0 tokens"}));
}

}  // namespace
}  // namespace seed::parallel::wire
