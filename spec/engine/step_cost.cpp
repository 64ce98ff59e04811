#include "spec/engine/step_cost.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "models/base/median.h"
#include "spec/engine/forward_cost.h"

namespace seed::spec {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kSlot = std::numeric_limits<uint64_t>::max();  // no engine's
constexpr uint64_t kDraftSlot = kSlot - 1;
constexpr int kWarmup = 3;        // caches and allocators settle
constexpr int kRounds = 15;
constexpr int kVerifyNodes = 16;  // about the size of a pruned tree
constexpr int kDraftChain = 8;    // levels of the longer proposal

template <typename Call>
double seconds(Call call) {
  const Clock::time_point t0 = Clock::now();
  call();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

StepCost measure_step_cost(Target& target, Drafter& drafter) {
  const int32_t vocab = static_cast<int32_t>(target.vocab_size());
  std::vector<int32_t> prompt(16);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i + 1) % vocab);

  const DraftTree empty;
  DraftTree chain;
  chain.deterministic = true;
  const int64_t room = std::max<int64_t>(0, target.max_positions() - static_cast<int64_t>(prompt.size()) - 2);
  for (int i = 0; i < std::min<int64_t>(kVerifyNodes, room); ++i) {
    chain.tokens.push_back(static_cast<int32_t>((3 * i + 1) % vocab));
    chain.parents.push_back(i - 1);
  }
  // A verify on a fresh slot right after the prompt, so that none runs past
  // a short context.
  const auto verify_after_prompt = [&](const DraftTree& draft) {
    target.start(kSlot, prompt, TargetSettings{});
    target.verify({{kSlot, &empty}});  // the prompt
    const double s = seconds([&] { target.verify({{kSlot, &draft}}); });
    target.finish(kSlot);
    return s;
  };
  // A draft step is what one more level of a chain costs: a proposal of
  // depth kDraftChain less one of depth 1, over the levels between, so
  // that what a proposal costs whatever its depth (a draft rank's message
  // round trip) is not counted as drafting. The drafter drafts for its own
  // target slot, started afresh each round, and gets the target's real
  // verdicts (a drafter may read them: an EDD the hidden states), so every
  // proposal after the first feeds the token or two the last verdict added.
  DraftSettings settings;
  settings.k_config.assign(kDraftChain, 1);
  const auto propose_and_advance = [&](int max_depth) {
    DraftTree draft;
    const int depth = static_cast<int>(std::min<int64_t>(max_depth, std::max<int64_t>(0, target.room(kDraftSlot))));
    const double s = seconds([&] { draft = drafter.propose(kDraftSlot, depth); });
    drafter.advance(kDraftSlot, target.verify({{kDraftSlot, &draft}}).front());
    return std::make_pair(s, static_cast<int>(draft.tokens.size()));
  };
  const auto draft_step = [&] {
    target.start(kDraftSlot, prompt, TargetSettings{});
    drafter.start(kDraftSlot, prompt, settings);
    propose_and_advance(1);  // the prompt
    const auto [one, one_depth] = propose_and_advance(1);
    const auto [chain_s, chain_depth] = propose_and_advance(kDraftChain);
    drafter.finish(kDraftSlot);
    target.finish(kDraftSlot);
    if (chain_depth <= one_depth) return one;  // no room for a chain
    return std::max(0.0, chain_s - one) / static_cast<double>(chain_depth - one_depth);
  };
  // The three side by side each round, and the ratios per round, so that
  // a machine busy with other work for a while shifts all of them alike.
  std::vector<double> target_s, draft_s, verify_token_s, draft_ratio, verify_token_ratio;
  for (int round = 0; round < kWarmup + kRounds; ++round) {
    const double t = verify_after_prompt(empty);
    const double c = chain.tokens.empty() ? t : verify_after_prompt(chain);
    const double d = draft_step();
    if (round < kWarmup) continue;
    ForwardCost forward;  // the line through this round's two forwards
    forward.add(1, 0, t);
    forward.add(1, static_cast<int64_t>(chain.tokens.size()), c);
    target_s.push_back(t);
    draft_s.push_back(d);
    verify_token_s.push_back(forward.per_token_s());
    draft_ratio.push_back(d / t);
    verify_token_ratio.push_back(forward.verify_token_ratio());
  }
  return {median(draft_s), median(target_s), median(verify_token_s), median(draft_ratio), median(verify_token_ratio)};
}

}  // namespace seed::spec
