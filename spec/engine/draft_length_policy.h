// DraftLengthPolicy: how many tokens a request drafts in its next
// round, chosen from what the engine measured, so that drafting happens
// where it pays and a round verifies no draft where none would (the
// engine then advances the request as plain batching would).
//
// The token model of speculative decoding (acceptance.h), with batching:
// each drafted token is accepted with probability alpha up to the first
// rejection, so a round of W requests drafting k tokens each gains
// W tau_max(alpha, k) tokens for one target forward over W (k + 1) rows
// and W drafts of k tokens shared by the drafter threads, where drafting
// nothing gains W tokens for a forward over W rows. W is what a forward
// takes when every request is ready (the engine's Scheduler). A forward's
// time is a line in its rows, fitted apart over the forwards on the
// target's own threads and over those that also ran on the idle drafters'
// cores (ScheduledEngine), with their ratio measured where both are seen;
// a line not yet fitted is the other through that ratio (before it is
// measured, a prior that favours the wider ones, so that rounds without
// drafts get timed). Rounds without drafts run wider, and once timed their
// own line gives their cost (a line through many drafting rounds misses
// them); rounds with drafts run wider as often as measured (the drafters
// are idle by then when the target drafted the round itself,
// DrafterPool::draft_here). On a CPU rows cost, so a wide batch makes
// drafts dear; on a GPU a step of a small draft costs about a step of the
// target (launches): both are where a fixed length loses to plain
// batching.
//
// A batch of drafts' time is a line in their tokens too, fitted over
// steady rounds only (Proposal::verdicts): what every draft costs whatever
// its length (a draft rank's round trip) and what each token adds; until
// drafts of different lengths are seen, all of it is taken as per token.
// A draft step's time is a line in the batch's width (on a CPU rows cost;
// on a GPU a small draft's step costs its launches whatever its width),
// and each draft costs its batch's time over its width. Until batches of
// different widths are timed, a narrower batch is taken to cost as much as
// those timed and a wider one as much per draft, so that drafting is not
// taken as cheaper than it is: with a draft as dear as its target, on a
// 2-core CPU, drafts timed in batches of three made a lone request's look
// three times as cheap as they were. (On a 2-core CPU the zoo draft's
// step for a lone request costs about half its step for six.)
//
// Measurements decay: alpha and the drafts within some tens, the forward
// line within a few hundred forwards (it moves with the contexts); drafts
// timed before drafting stopped give way to the next one timed, hundreds
// of forwards later (below). A forward or a draft timed over kOutlier
// times its line (the machine busy for a moment) counts as kOutlier times
// it: early in a run a few drafting
// forwards fix the line's slope, and one such forward could stop drafting
// that pays, after which only rounds without drafts are timed (on a 2-core
// CPU, 2 runs in 20 of a benchmark that drafting sped up 1.17x, and
// drafts timed while other work held the cores for 0.4 s stopped it for
// most of a run in 7 of 47); and one such round without drafts could keep
// drafting that does not pay (only explorations time such rounds again
// while drafting). Forwards and drafts that stay dear still move their lines, by
// up to that much each. Once a
// draft and a forward are measured, rounds draft nothing until one such
// round is timed, so that plain batching is measured before drafting is
// kept. While the best length is k > 0, the last forward of every
// kExploreEvery tries, in turn, none (the last two then), k / 2 and k + 1,
// so that the lines stay fitted where they are compared; while it is 0,
// one forward in kExploreIdleEvery (or the first after it with a request
// starting) and the next one draft one token for their requests whose
// drafters are caught up, so that acceptance and the drafts stay measured
// (a request's first draft also reads its prompt and is not timed, so a
// single forward would time no draft where only starting requests are
// caught up). Where drafting would not pay even were every token accepted
// (a draft as dear as its target: on a GPU a small model's step, bound by
// its launches), acceptance is not worth measuring, and only one forward
// in kExploreHopelessEvery explores, to time the drafts again: the catch-up
// of one exploration of six starting requests, each draft reading its
// prompt, had taken 11% of a benchmark's time. An exploration takes every
// request of its forward (the next() calls between two add_forward()s). A
// round without drafts right after one with drafts is no measure of plain
// batching (on a 2-core CPU it took 1.3-1.4x as long as the next, and
// rounds without drafts came back to their steady cost only over about
// seven; rounds with drafts after ones without show nothing of the kind.
// The machine's doing, not the engine's: a six-row forward after any
// heavier work, plain matrix products included, recovers the same way),
// so such a round is not timed as one; drafting nothing is explored two
// rounds at a time (timing the seventh instead stopped drafting that paid
// about as often as it stopped drafting that did not).
//
// The alpha bet on is the smoothed one plus one standard error of all the
// drafted tokens tested so far. A few rejections early in a run cannot
// tell an alpha that pays from one that does not, and once drafting stops
// drafts are tested only every kExploreIdleEvery forwards: on a 2-core
// CPU, 6 runs in 24 of a benchmark that drafting sped up 1.12x stopped
// for good that way, 1 in 24 with the bet. The error shrinks as tokens
// are tested, so rejections that go on stop drafting that does not pay.
//
// The drafted length never changes a request's tokens, greedy or sampled
// with top-token drafts (the verifier's matching rule); it does change
// those of a sampled request whose drafts are drawn from q, for which
// engines keep the fixed length. Not thread-safe (the engine's loop).
#pragma once

#include <cstdint>
#include <optional>

#include "spec/engine/line_fit.h"
#include "spec/engine/request_acceptance.h"

namespace seed::spec {

class DraftLengthPolicy {
 public:
  // `longest`: the engine's draft length (the most a round drafts);
  // `drafters`: threads drafting side by side (1 when drafting inline);
  // `wider_prior`: what a forward on the drafters' cores too is taken to
  // cost against the line until one is measured (the target's threads over
  // both: optimistic, so that rounds without drafts get tried and timed).
  DraftLengthPolicy(int longest, int drafters, double wider_prior = 1);

  // A proposal of `tokens` drafted tokens took `seconds` to draft (a
  // steady round's share of its batch of `batch` sequences).
  void add_draft(int64_t tokens, double seconds, int64_t batch);
  // A target forward verified `sequences` drafts holding `drafted` tokens
  // in `seconds` (no prompt computed in it; unset where its time is no
  // measure of the others: it warmed up a CUDA graph); `wider`: on the idle
  // drafter threads' cores too.
  void add_forward(int64_t sequences, int64_t drafted, std::optional<double> seconds, bool wider);
  // A chain's verdict: `accepted` of its drafted tokens, and
  // whether a drafted token was rejected.
  void add_verdict(int64_t accepted, bool rejected);

  // The length the model makes best for forwards of `width` requests (0:
  // drafting does not pay), the longest until a draft and a forward are
  // measured.
  int best(double width) const;
  // The next request's length: best(width), or in an exploring forward a
  // neighbour of it (above). `caught_up`: the request's drafter has read
  // all its tokens but the last round's (a request starting, or one that
  // drafted last round). While the best is 0, only such requests explore:
  // catching a drafter up on a long context would cost many forwards.
  // `own`: the request's verdicts, which shorten its drafts where the alpha
  // they bet on is below the engine's (RequestAcceptance).
  int next(double width, bool caught_up, const RequestAcceptance& own = {});

  // What the model expects a round drafting k tokens for each of `width`
  // requests to gain over one drafting none, in tokens per second, at the
  // alpha it bets on; 0 until measured.
  double speedup(int k, double width) const;
  double acceptance() const;  // smoothed alpha (the bet adds its standard error)

  static constexpr int kExploreEvery = 16;
  static constexpr int kExploreIdleEvery = 256;
  static constexpr int kExploreHopelessEvery = 2048;
  static constexpr double kDecay = 0.97;      // per draft, verdict or wider forward
  static constexpr double kLineDecay = 0.995;  // per forward on the line
  static constexpr double kMinLineWeight = 4;    // forwards (decayed) before a line stands on its own
  static constexpr double kMinRowVariance = 0.25;  // spread of rows (or tokens) before a slope is fitted
  static constexpr double kOutlier = 1.5;  // a forward or draft over this times its line counts as this much

 private:
  bool measured() const;
  double hopeful_acceptance() const;  // the alpha bet on
  // speedup() and best() at acceptance `alpha`.
  double speedup_at(int k, double width, double alpha) const;
  int best_at(double width, double alpha) const;
  // Some length would pay for forwards of `width` requests were every
  // drafted token accepted.
  bool pays_all_accepted(double width) const;

  // Seconds of a forward of `rows` rows on the target's threads, and on
  // the drafters' cores too: each line where it has forwards, else the
  // other one through the ratio. REQUIRES a forward measured.
  double own_s(double rows) const;
  double wider_s(double rows) const;
  // Wider forwards over the target's own line: measured, else the prior.
  double wider_ratio() const;
  // Seconds of one draft of k > 0 tokens in a batch of `batch` (its share).
  double draft_s(int k, double batch) const;
  // What a draft step of `batch` sequences costs over one at the widths
  // timed (the steps line; before it spreads, above).
  double draft_step_scale(double batch) const;

  int longest_;
  int drafters_;
  double wider_prior_;
  LineFit own_forwards_, wider_forwards_;  // seconds by rows, on the target's threads or wider
  LineFit undrafted_forwards_;             // the wider ones without drafts, after one without
  bool last_drafted_ = false;              // the last forward verified drafts
  int64_t undrafted_timed_ = 0;            // forwards without drafts after one without
  double wider_s_ = 0, wider_line_s_ = 0;  // wider forwards: measured, and the line's
  double drafting_forwards_ = 0, drafting_wider_ = 0;  // forwards of drafts, and those that ran wider
  LineFit drafts_;       // a batch's seconds by the tokens of its draft
  LineFit draft_steps_;  // a batch's seconds per drafted token by its width
  bool drafts_stale_ = false;  // timed before drafting stopped: the next draft timed replaces them
  double accepted_ = 0, tested_ = 0;  // decayed
  double tested_in_all_ = 0;          // not decayed: the bet's evidence
  int64_t forward_count_ = 0, explored_at_ = 0;
};

}  // namespace seed::spec
