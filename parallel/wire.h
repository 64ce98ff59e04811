// Wire: the binary messages ranks exchange under mpirun (README.md, "Running
// under mpirun").
//
// The coordinator (rank 0) drives drafters and the target group with these;
// they answer with proposals, verdicts or an error. One message per MPI
// message, so no framing beyond the header:
//
//   magic "SD" (2 bytes) | version u16 | type u8 | body
//
// All integers and floats are little-endian, counts are u32 followed by
// their elements. Bodies, by type:
//   start      slot u64, tokens [i32], settings (temperature f32, top_k i32,
//              top_p f32, seed u64, stream u64, k_config [i32], group u64,
//              pruned u8 (1: a pruned candidate tree), expand f32, prune f32),
//              drafter u8 (spec::DrafterKind: what drafts for the slot)
//   draft      count u32, then count x (slot u64, max_depth i32): propose
//              these slots' drafts now, side by side
//   proposal   count u32, then count x (slot u64, status u8, then status 0:
//              a draft; 1: error text [u8], why the slot's drafter failed):
//              a draft message's answer, ask for ask; then graph_warm_ups
//              i64 (the rank's draft forwards that warmed up a CUDA graph
//              while drafting them)
//   a draft    tokens [i32], parents [i32], flags u8 (1 deterministic,
//              2 without replacement), then q rows as (ids [i32], probs
//              [f32]) pairs, confidence [f32]
//   verdict    slot u64, accepted [i32], bonus i32, tokens [i32],
//              target_top count u32, then count x (ids [i32], probs [f32])
//   verify     count u32, then count x (slot u64, a draft): one target
//              forward over these drafts
//   verdicts   count u32, then count x (slot u64, verdict body): a verify
//              message's answer, in its item order, then the target's
//              counters since the last (prompt_tokens, computed_tokens,
//              kv_peak_bytes, kv_live_bytes, evicted_blocks, verify_rounds:
//              i64; forward_s, host_verify_s: f64; graph_warm_ups: i64)
//   finish     slot u64                          (finished or cancelled)
//   shutdown   (empty)
//   error      text [u8]                         (a rank's fatal error)
//   usage request  (empty)                       (rank 0 asks a worker rank)
//   usage      count u32, then count x (rank i32, busy_s f64, wall_s f64,
//              cpu_s f64): a draft rank's own, or every target group rank's
//   lesson     drafter u8, group u64, context [i32], tokens [i32],
//              target_top as in verdict: what another draft rank's table of
//              the group learned from a verdict (spec/drafters/lesson.h)
//   end group  group u64: no request of the group follows; the rank drops
//              its tables of the group (spec::Engine::end_group)
// Proposals carry q exactly (lossless verification needs the very
// probabilities the draft was drawn from) as they hold it, by support
// (spec::DraftRow: a draft model's truncated q', STAND's table entries),
// never as vocabulary rows, and only the rows of contexts that have
// children, in context order: a chain of k sends k rows, not k + 1;
// deterministic and empty drafts send none. Decoding gives the n + 1 rows
// with empty unused ones. The target's distributions with a verdict
// (Verdict::target_top) travel the same way, as their top entries.
//
// Decoding validates everything before returning: a truncated or oversized
// buffer, bad magic, another version, an unknown type, a count past the
// buffer, a slot asked for twice in one draft message, a parent that is not an earlier node, a q row with an id
// repeated or outside [0, 2^20), a probability outside (0, 1], a mass not
// 1, or no mass at a node's token, or a lesson for a drafter
// with no tables or with more context or distributions than it reads
// throws seed::Error (kCorruption) naming the sender rank and what is wrong.
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "parallel/rank_usage.h"
#include "spec/api/drafter.h"
#include "spec/api/drafter_kind.h"
#include "spec/drafters/lesson.h"
#include "spec/api/target.h"
#include "spec/api/verifier.h"

namespace seed::parallel::wire {

// 2: verdicts; 3: usage; 4: model-free drafters; 5: a target group's top
// entries on request; 6: lessons (tables shared across draft ranks); 7:
// pruned trees in start messages, the target's hidden states in verdicts,
// the draft's confidences in proposals; 8: q rows only by their support;
// 9: draft and proposal messages for several slots; 10: whether sampled
// requests draw their drafts (DraftSettings::sample_drafts); 11: the
// forwards that warmed up a CUDA graph, in verdicts and proposals; 12:
// end group
constexpr uint16_t kVersion = 12;

struct StartMessage {
  uint64_t slot = 0;
  std::vector<int32_t> tokens;  // the slot's accepted tokens (the prompt)
  spec::DraftSettings settings;
  spec::DrafterKind drafter = spec::DrafterKind::kModel;
};
// One slot's draft.
struct SlotDraft {
  uint64_t slot = 0;
  spec::DraftTree draft;
};
struct DraftMessage {
  std::vector<spec::DraftAsk> asks;  // each slot at most once
};
struct ProposalMessage {
  struct Item {
    uint64_t slot = 0;
    spec::DraftTree draft;             // without an error
    std::optional<std::string> error;  // why the slot's drafter failed
  };
  std::vector<Item> items;  // a draft message's asks, in order
  // The rank's draft forwards that warmed up a CUDA graph while drafting
  // these (spec::Drafter::graph_warm_ups): their time is no measure of a
  // draft's.
  int64_t graph_warm_ups = 0;
};
struct VerdictMessage {
  uint64_t slot = 0;
  spec::Verdict verdict;
};
struct VerifyMessage {
  std::vector<SlotDraft> items;  // each slot at most once
  int32_t target_top_k = 0;  // > 0: each verdict carries the target's top entries (Verdict::target_top)
};
struct VerdictsMessage {
  std::vector<VerdictMessage> items;
  // The prompt, computed and evicted counts, the verify rounds, their
  // times and graph warm-ups added since the last VerdictsMessage; the KV
  // cache's bytes now.
  spec::PrefillStats prefill;
};
struct FinishMessage {
  uint64_t slot = 0;
};
struct ShutdownMessage {};
struct ErrorMessage {
  std::string text;
};
struct UsageRequestMessage {};
struct UsageMessage {
  std::vector<RankUsage> ranks;
};
struct LessonMessage {
  spec::DrafterKind drafter = spec::DrafterKind::kStand;  // whose tables learn it: stand or aded
  spec::Lesson lesson;
};
struct EndGroupMessage {
  uint64_t group = 0;
};

using Message = std::variant<StartMessage, DraftMessage, ProposalMessage, VerdictMessage, FinishMessage,
                             ShutdownMessage, ErrorMessage, VerifyMessage, VerdictsMessage, UsageRequestMessage,
                             UsageMessage, LessonMessage, EndGroupMessage>;

// "start", "draft", ... as in the table above.
const char* message_name(const Message& message);

// The bytes of `message`. Throws kInvalidArgument if a count exceeds u32 or
// a proposal's q is neither empty (deterministic, or no nodes) nor n + 1
// rows, or a row's ids and probs differ in size.
std::vector<uint8_t> encode(const Message& message);

// The message in `bytes`, received from world rank `sender`. Throws
// kCorruption naming `sender` if the bytes are not one valid message.
Message decode(const std::vector<uint8_t>& bytes, int sender);

}  // namespace seed::parallel::wire
