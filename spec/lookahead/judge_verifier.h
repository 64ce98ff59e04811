// JudgeVerifier: a model judges whether a drafted step means the same as the
// target's (Lookahead Reasoning's default verifier, an LLM as the judge).
//
// The task supplies the question, a template over {s1} (the target's step)
// and {s2} (the drafted step), both trimmed; the judge engine answers every
// pair of a round in one batched greedy call of a few tokens, and a reply
// that begins with "yes" (case and leading whitespace ignored) accepts.
// Steps equal after normalization (normalize_step) are accepted without
// asking, as in the paper's code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "spec/api/engine.h"
#include "spec/lookahead/step_verifier.h"

namespace seed::spec {

class JudgeVerifier : public StepVerifier {
 public:
  // The judge's prompt for a pair: the task's template filled in.
  using Render = std::function<std::string(const std::string& s1, const std::string& s2)>;

  // `judge`: the engine that answers, not owned (the target's engine, which
  // outlives the verifier); or `owned`, a judge of its own.
  JudgeVerifier(Engine* judge, Render render, std::unique_ptr<Engine> owned = nullptr);

  bool same(const std::string& target_step, const std::string& draft_step) const override;
  std::vector<bool> same_all(const std::vector<StepPair>& pairs) const override;
  std::string name() const override { return "judge"; }
  // Pairs the judge engine was asked about (the rest were equal).
  int64_t asked() const { return asked_; }

  static constexpr int64_t kReplyTokens = 4;

 private:
  std::unique_ptr<Engine> owned_;
  Engine* judge_;
  Render render_;
  mutable int64_t asked_ = 0;
};

// Whether a judge's reply accepts: it begins with "yes", ignoring case and
// leading whitespace.
bool judge_accepts(const std::string& reply);

}  // namespace seed::spec
