// ProcessRewardModel: a process reward model (PRM) read from a model folder.
// It scores each step of a solution from the final hidden state at the token
// that ends the step (the step tag), with a head of its kind:
//
//   step_tag     a causal LM read at a tag token after each step (Math-
//                Shepherd's "ки", RLHFlow's PRMs): the reward is P(good)
//                under a softmax over the logits of the good and bad tokens
//                there. Only the two LM-head rows are used.
//   classifier   Qwen2ForProcessRewardModel (Qwen2.5-Math-PRM): Linear(h, h),
//                ReLU, Linear(h, 2) (tensors score.0.*, score.2.*), reward
//                softmax(...)[1]; step tag "<extra_0>". The checkpoint has no
//                LM head.
//   value_head   Linear(h, 1) and a sigmoid (Skywork-PRM's v_head.summary.*).
//
// The kind comes from prm.json beside config.json:
//   {"kind": "step_tag", "step_tag": "ки", "good": "+", "bad": "-"}
//   {"kind": "value_head", "step_tag": "\n"}
//   {"kind": "classifier", "step_tag": "<extra_0>"}
// and optionally "tokenize": "whole" or "steps" (PrmTokenize).
// A folder whose config.json names Qwen2ForProcessRewardModel needs none
// (classifier with "<extra_0>"). Each of step_tag, good and bad must be one
// token of the folder's tokenizer.
//
// Immutable and thread-safe like CausalLM (each caller owns its KvCache).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "models/causal_lm.h"
#include "models/tokenizer.h"

namespace seed::models {

enum class PrmKind { kStepTag, kClassifier, kValueHead };

// How a request's text becomes tokens (prm.json "tokenize"): whole, as
// Math-Shepherd's and Qwen2.5-Math-PRM's references read it (the default;
// "<extra_0>" is a special token, which cannot merge), or each step's text
// before and after its tag apart, the tag's token between, as Skywork-PRM's
// reference reads its steps (the value_head default): its "\n" tag would
// merge with the text before it in a whole text (".\n" is one token of
// Qwen2's vocabulary).
enum class PrmTokenize { kWhole, kSteps };

struct PrmFormat {
  PrmKind kind = PrmKind::kClassifier;
  std::string step_tag = "<extra_0>";
  std::string good, bad;  // step_tag kind only
  PrmTokenize tokenize = PrmTokenize::kWhole;
};

class ProcessRewardModel {
 public:
  // Loads `model_dir` (config.json, weights, tokenizer, prm.json). Throws
  // seed::Error naming the file and field or tensor at fault: kNotFound
  // (no prm.json for a causal LM, a missing head tensor), kInvalidArgument
  // (an unknown kind, a tag or label that is not one token, a
  // tensor-parallel group: a PRM runs whole).
  static std::unique_ptr<ProcessRewardModel> load(const std::string& model_dir, const LoadOptions& options = {});

  // The same around the CausalLM `load_model` gives for `model_dir` (one
  // shared with other users of the folder's weights), called once prm.json
  // and the tokenizer have been read: what is wrong with them is told
  // before the weights load.
  using ModelLoader = std::function<std::shared_ptr<const CausalLM>()>;
  static std::unique_ptr<ProcessRewardModel> load(const std::string& model_dir, const ModelLoader& load_model);

  const PrmFormat& format() const { return format_; }
  const CausalLM& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  int32_t step_tag_token() const { return step_tag_token_; }

  // The reward of each row of `hidden` [rows, hidden_size] (float32 final
  // hidden states, CausalLM::forward_hidden): [rows] float32 in [0, 1].
  at::Tensor rewards(const at::Tensor& hidden) const;

  // The head's tensors by kind: step_tag: first [2, h] (the good and bad
  // LM-head rows); classifier: first [h, h] + first_bias, second [2, h] +
  // second_bias; value_head: first [1, h] + first_bias.
  struct Head {
    at::Tensor first, first_bias, second, second_bias;
  };
  ProcessRewardModel(std::shared_ptr<const CausalLM> model, std::unique_ptr<Tokenizer> tokenizer, PrmFormat format,
                     Head head);

 private:
  std::shared_ptr<const CausalLM> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  PrmFormat format_;
  Head head_;
  int32_t step_tag_token_ = -1;
};

// The one token `text` is after other text (where a step tag or label
// stands), else alone. Throws kInvalidArgument naming `field` when it is
// several tokens or none.
int32_t single_token(const Tokenizer& tokenizer, const std::string& text, const std::string& field);

}  // namespace seed::models
