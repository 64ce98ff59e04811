#include "spec/engine/team_width_policy.h"

#include <algorithm>

namespace seed::spec {

void TeamWidthPolicy::add(int64_t rows, double seconds, bool on_a_team) {
  const double x = static_cast<double>(rows);
  const bool stands = line_.weight() >= kMinWeight;
  const double expected = stands ? line_.cost_at(x, kMinRowVariance) : seconds;
  ++since_switch_;
  if (probe_left_ > 0) {
    if (--probe_left_ > 0) return;  // the team's first forward wakes it: not compared
    since_probe_ = 0;
    if (stands && seconds < kSwitch * probe_against_ * expected) {
      single_ = !single_;
      line_ = LineFit{};
      line_.add(x, seconds);
      if (single_) {
        // Back on one thread soon after the team came back: the machine is
        // still busy, and the team's probe was a lucky forward.
        single_every_ = since_switch_ < kProbeEvery ? std::min(2 * single_every_, kLastProbe) : kFirstProbe;
      }
      probe_every_ = single_ ? single_every_ : kProbeEvery;
      since_switch_ = 0;
    } else if (single_) {
      single_every_ = std::min(2 * single_every_, kLastProbe);
      probe_every_ = single_every_;
    } else {
      probe_every_ = kProbeEvery;
    }
    return;
  }
  line_.scale(kDecay);
  line_.add(x, std::min(seconds, kOutlier * expected));
  ++since_probe_;
  const double ratio = seconds / expected;
  if (on_a_team) {
    stalls_ *= kStallDecay;
    if (stands && !single_ && ratio > kSlow) {
      stall_ratio_ = stalls_ < 0.1 ? ratio : std::min(stall_ratio_, ratio);
      stalls_ += 1;
    }
  }
  const bool stalled = stalls_ >= kStalls;
  const bool narrow = x <= line_.mean_x();
  if (stalled || (since_probe_ >= probe_every_ && narrow)) {
    probe_left_ = single_ ? 2 : 1;
    probe_against_ = stalled ? stall_ratio_ : 1;
    stalls_ = 0;
  }
}

}  // namespace seed::spec
