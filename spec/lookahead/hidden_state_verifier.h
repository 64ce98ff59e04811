// HiddenStateVerifier: two steps mean the same when the target model reads
// them alike. Each step is run through the model on its own; its vector is
// the mean of the last decoder layer's outputs over its tokens, and a drafted
// step is accepted when the cosine similarity of the two vectors is at
// least the threshold. It is the paper's embedding verifier with the target
// as the encoder: no second model, and the representation the target itself
// reasons in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "models/tokenizer.h"
#include "spec/lookahead/step_verifier.h"

namespace seed::spec {

class HiddenStateVerifier : public StepVerifier {
 public:
  static constexpr double kDefaultThreshold = 0.95;

  // `threshold` in [-1, 1].
  HiddenStateVerifier(std::shared_ptr<models::CausalLM> model, std::shared_ptr<const models::Tokenizer> tokenizer,
                      double threshold);

  bool same(const std::string& target_step, const std::string& draft_step) const override;
  // All pairs in one forward pass.
  std::vector<bool> same_all(const std::vector<StepPair>& pairs) const override;
  std::string name() const override { return "hidden"; }

  // The cosine similarity of each pair's vectors (an empty step: 1 beside
  // another empty step, else 0).
  std::vector<double> similarities(const std::vector<StepPair>& pairs) const;
  double threshold() const { return threshold_; }

 private:
  std::shared_ptr<models::CausalLM> model_;
  std::shared_ptr<const models::Tokenizer> tokenizer_;
  double threshold_;
};

}  // namespace seed::spec
