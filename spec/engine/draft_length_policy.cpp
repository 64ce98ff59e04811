#include "spec/engine/draft_length_policy.h"

#include <algorithm>
#include <cmath>

#include "models/base/error.h"
#include "spec/api/acceptance.h"

namespace seed::spec {

namespace {

// Adds a forward to `fit`, at most kOutlier times its line once the line
// stands on its own (DraftLengthPolicy's header says why).
void add_clamped(LineFit& fit, double rows, double seconds) {
  fit.scale(DraftLengthPolicy::kLineDecay);
  const bool stands = fit.weight() >= DraftLengthPolicy::kMinLineWeight;
  const double most = stands ? DraftLengthPolicy::kOutlier * fit.cost_at(rows, DraftLengthPolicy::kMinRowVariance)
                             : seconds;
  fit.add(rows, std::min(seconds, most));
}

}  // namespace

DraftLengthPolicy::DraftLengthPolicy(int longest, int drafters, double wider_prior)
    : longest_(longest), drafters_(drafters), wider_prior_(wider_prior) {
  SEED_CHECK(longest >= 1, kInvalidArgument) << "draft length policy: longest draft " << longest << " < 1";
  SEED_CHECK(drafters >= 1, kInvalidArgument) << "draft length policy: " << drafters << " drafters";
}

void DraftLengthPolicy::add_draft(int64_t tokens, double seconds, int64_t batch) {
  if (tokens <= 0) return;
  if (drafts_stale_) drafts_ = LineFit{}, draft_steps_ = LineFit{};
  drafts_stale_ = false;
  const double width = static_cast<double>(batch);
  const double most = drafts_.weight() >= kMinLineWeight ? kOutlier * draft_s(static_cast<int>(tokens), width) : seconds;
  const double batch_s = std::min(seconds, most) * width;
  drafts_.scale(kDecay);
  draft_steps_.scale(kDecay);
  drafts_.add(double(tokens), batch_s);
  draft_steps_.add(width, batch_s / double(tokens));
}

void DraftLengthPolicy::add_forward(int64_t sequences, int64_t drafted, std::optional<double> seconds, bool wider) {
  if (sequences <= 0) return;
  ++forward_count_;
  if (drafted > 0) {
    drafting_forwards_ = drafting_forwards_ * kDecay + 1;
    drafting_wider_ = drafting_wider_ * kDecay + (wider ? 1 : 0);
  }
  const bool steady_undrafted = drafted == 0 && !last_drafted_;
  last_drafted_ = drafted > 0;
  if (!seconds) return;
  const double rows = double(sequences + drafted);
  if (wider && own_forwards_.weight() >= kMinLineWeight) {
    wider_s_ = wider_s_ * kDecay + *seconds;
    wider_line_s_ = wider_line_s_ * kDecay + own_forwards_.cost_at(rows, kMinRowVariance);
  }
  if (steady_undrafted) ++undrafted_timed_;
  if (steady_undrafted && wider) add_clamped(undrafted_forwards_, rows, *seconds);
  add_clamped(wider ? wider_forwards_ : own_forwards_, rows, *seconds);
}

void DraftLengthPolicy::add_verdict(int64_t accepted, bool rejected) {
  accepted_ = accepted_ * kDecay + double(accepted);
  tested_ = tested_ * kDecay + double(accepted) + (rejected ? 1 : 0);
  tested_in_all_ += double(accepted) + (rejected ? 1 : 0);
}

double DraftLengthPolicy::acceptance() const { return smoothed_acceptance_rate(accepted_, tested_); }

double DraftLengthPolicy::hopeful_acceptance() const {
  const double alpha = acceptance();
  return std::min(1.0, alpha + std::sqrt(alpha * (1 - alpha) / (tested_in_all_ + 2)));
}

bool DraftLengthPolicy::measured() const {
  return drafts_.weight() > 0 && own_forwards_.weight() + wider_forwards_.weight() > 0;
}

double DraftLengthPolicy::wider_ratio() const { return wider_line_s_ > 0 ? wider_s_ / wider_line_s_ : wider_prior_; }

double DraftLengthPolicy::own_s(double rows) const {
  if (own_forwards_.weight() >= kMinLineWeight || wider_forwards_.weight() == 0) {
    return own_forwards_.cost_at(rows, kMinRowVariance);
  }
  return wider_forwards_.cost_at(rows, kMinRowVariance) / wider_ratio();
}

double DraftLengthPolicy::wider_s(double rows) const {
  if (wider_forwards_.weight() >= kMinLineWeight || own_forwards_.weight() == 0) {
    return wider_forwards_.cost_at(rows, kMinRowVariance);
  }
  return own_s(rows) * wider_ratio();
}

double DraftLengthPolicy::draft_s(int k, double batch) const {
  const double per_token = drafts_.mean_y() / drafts_.mean_x();
  const double slope =
      drafts_.x_variance() < kMinRowVariance ? per_token : std::clamp(drafts_.slope(), 0.0, per_token);
  const double batch_s = drafts_.mean_y() + slope * (k - drafts_.mean_x());
  return batch_s * draft_step_scale(batch) / batch;
}

double DraftLengthPolicy::draft_step_scale(double batch) const {
  if (draft_steps_.x_variance() < kMinRowVariance) return std::max(1.0, batch / draft_steps_.mean_x());
  return draft_steps_.cost_at(batch, kMinRowVariance) / draft_steps_.mean_y();
}

double DraftLengthPolicy::speedup(int k, double width) const {
  return speedup_at(k, width, hopeful_acceptance());
}

double DraftLengthPolicy::speedup_at(int k, double width, double alpha) const {
  if (!measured()) return 0;
  const double drafting = std::min<double>(drafters_, width);  // drafter threads busy at once
  const double draft_s = k > 0 ? width * this->draft_s(k, width / drafting) / drafting : 0.0;
  // Rounds without drafts run on the drafters' cores too (timed apart
  // once seen); the others as measured.
  const double plain_s = undrafted_forwards_.weight() > 0 ? undrafted_forwards_.cost_at(width, kMinRowVariance)
                                                          : wider_s(width);
  const double wide = drafting_forwards_ > 0 ? drafting_wider_ / drafting_forwards_ : 0.0;
  const double rows = width * (k + 1);
  const double round_s = wide * wider_s(rows) + (1 - wide) * own_s(rows) + draft_s;
  return tau_max(alpha, k) * plain_s / round_s;
}

bool DraftLengthPolicy::pays_all_accepted(double width) const {
  for (int k = 1; k <= longest_; ++k) {
    if (speedup_at(k, width, 1) > 1) return true;
  }
  return false;
}

int DraftLengthPolicy::best(double width) const { return best_at(width, hopeful_acceptance()); }

int DraftLengthPolicy::best_at(double width, double alpha) const {
  if (!measured()) return longest_;
  int best = 0;
  double best_speedup = 1;  // drafting nothing
  for (int k = 1; k <= longest_; ++k) {
    const double s = speedup_at(k, width, alpha);
    if (s > best_speedup) best = k, best_speedup = s;
  }
  return best;
}

int DraftLengthPolicy::next(double width, bool caught_up, const RequestAcceptance& own) {
  // Explorations take whole forwards (every request verified in one), so
  // that each length's rows are timed together, at the width they run at.
  const double engine_alpha = hopeful_acceptance();
  const int engine_length = best_at(width, engine_alpha);
  if (engine_length == 0) {
    // Two forwards: a request starting also reads its prompt in its first
    // draft, so the second is the one timed.
    drafts_stale_ = true;
    if (!caught_up) return 0;
    const int64_t since = forward_count_ - explored_at_;
    if (since >= kExploreHopelessEvery || (since >= kExploreIdleEvery && pays_all_accepted(width))) {
      explored_at_ = forward_count_;
    }
    return forward_count_ - explored_at_ < 2 ? 1 : 0;
  }
  if (measured() && undrafted_timed_ == 0) return 0;
  const double own_alpha = own.bet(engine_alpha);
  const int length = own_alpha < engine_alpha ? best_at(width, own_alpha) : engine_length;
  const int64_t phase = forward_count_ % kExploreEvery;
  switch ((forward_count_ / kExploreEvery) % 3) {
    case 0: return phase >= kExploreEvery - 2 ? 0 : length;
    case 1: return phase == kExploreEvery - 1 ? length / 2 : length;
    default: return phase == kExploreEvery - 1 ? std::min(length + 1, longest_) : length;
  }
}

}  // namespace seed::spec
