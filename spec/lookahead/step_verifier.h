// StepVerifier: does a drafted reasoning step mean the same as the target's
// step after the same text? Lookahead reasoning commits a drafted step only
// when its verifier says so (spec/lookahead/lookahead_engine.h).
//   exact       the same text;
//   normalized  the same after collapsing whitespace runs, trimming, and
//               writing every number in one form ("3.50" = "3.5",
//               "1,000" = "1000", "+2" = "2").
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace seed::spec {

// A target step and a drafted step after the same text, without their
// delimiter.
struct StepPair {
  std::string target_step;
  std::string draft_step;
};

class StepVerifier {
 public:
  virtual ~StepVerifier() = default;
  virtual bool same(const std::string& target_step, const std::string& draft_step) const = 0;
  // Several pairs at once (a model judge answers them in one batch).
  virtual std::vector<bool> same_all(const std::vector<StepPair>& pairs) const {
    std::vector<bool> out;
    for (const StepPair& pair : pairs) out.push_back(same(pair.target_step, pair.draft_step));
    return out;
  }
  virtual std::string name() const = 0;
};

// "exact" or "normalized"; throws seed::Error kInvalidArgument naming the
// known verifiers otherwise.
std::unique_ptr<StepVerifier> make_step_verifier(const std::string& name);

// What the normalized verifier compares.
std::string normalize_step(const std::string& step);

}  // namespace seed::spec
