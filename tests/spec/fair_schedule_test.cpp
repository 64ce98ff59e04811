// Fairness across callers on a scripted target: one caller keeps sending
// levels of 40 requests while another sends single requests; each single
// request is verified within a bounded number of forwards, because the
// scheduler serves callers round-robin (scheduler.h).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "spec/engine/scheduled_engine.h"
#include "spec/engine/scheduler.h"

namespace seed::spec {
namespace {

// A target that decodes token 1 after anything. It counts its forwards
// and, for each single request (prompt kSingle), the forwards from its
// start to its last verification and whether a wide level was live then.
const std::vector<int32_t> kSingle = {4, 5};

class ScriptedTarget : public Target {
 public:
  struct Single {
    int64_t started_at = 0;   // forwards done when the engine started it
    int64_t last_forward = 0;  // the forward that verified it last
    bool beside_wide = false;  // a wide level's requests were live then
  };

  int64_t vocab_size() const override { return 8; }
  int64_t max_positions() const override { return 1 << 20; }
  void start(uint64_t slot, const std::vector<int32_t>& prompt, const TargetSettings&) override {
    if (prompt == kSingle) {
      singles_[slot] = {forwards_, 0, live_wide_ > 0};
    } else {
      ++live_wide_;
    }
  }
  int64_t room(uint64_t) const override { return 1 << 10; }
  std::vector<Verdict> verify(const std::vector<VerifyItem>& items) override {
    ++forwards_;
    std::vector<Verdict> out(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      out[i].bonus = 1;
      out[i].tokens = {1};
      const auto single = singles_.find(items[i].slot);
      if (single != singles_.end()) single->second.last_forward = forwards_;
    }
    return out;
  }
  void finish(uint64_t slot) override {
    const auto single = singles_.find(slot);
    if (single == singles_.end()) {
      --live_wide_;
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.push_back(single->second);
      singles_.erase(single);
    }
  }
  PrefillStats prefill_stats() const override { return {}; }
  bool wide_live() const { return live_wide_ > 0; }
  std::vector<Single> done() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }

 private:
  // Called from the thread that runs the engine's loop only, but that
  // thread changes from call to call (the engine hands the loop over
  // under its lock); done_ is read by the test's thread.
  int64_t forwards_ = 0;
  std::atomic<int64_t> live_wide_{0};  // also read by the test's thread
  std::map<uint64_t, Single> singles_;
  mutable std::mutex mutex_;
  std::vector<Single> done_;
};

std::vector<GenRequest> level(size_t count, int64_t tokens, const std::vector<int32_t>& prompt) {
  GenRequest r;
  r.prompt_tokens = prompt;
  r.max_new_tokens = tokens;
  return std::vector<GenRequest>(count, r);
}

TEST(FairScheduleTest, OneCallersSingleRequestsAreServedBesideAnotherCallersWideLevels) {
  constexpr size_t kMaxBatch = 4;
  constexpr int64_t kTokens = 2;
  auto owned = std::make_unique<ScriptedTarget>();
  const ScriptedTarget& target = *owned;
  auto engine = ScheduledEngine::lockstep(std::move(owned), RunSettings{}, Scheduler(SchedulePolicy::kBatch, kMaxBatch));
  std::atomic<bool> stop{false};
  std::thread wide([&] {
    while (!stop) engine->generate(level(40, 3, {2, 3}));
  });
  // Counted from when the engine started each single request, so that the
  // time its thread waited to reach the engine does not count.
  int64_t worst = 0, beside = 0;
  for (int i = 0; i < 1000 && beside < 10; ++i) {
    while (!target.wide_live()) std::this_thread::yield();
    const std::vector<Completion> out = engine->generate(level(1, kTokens, kSingle));
    ASSERT_EQ(out[0].tokens.size(), static_cast<size_t>(kTokens));
    const ScriptedTarget::Single single = target.done().back();
    if (!single.beside_wide) continue;
    ++beside;
    worst = std::max(worst, single.last_forward - single.started_at);
  }
  stop = true;
  wide.join();
  ASSERT_GE(beside, 3) << "the single requests never ran beside a wide level";
  // Each of its tokens takes one forward, the first one after it started;
  // first come first served would queue it behind the wide level's 40 (10
  // forwards of 4).
  EXPECT_LE(worst, kTokens);
}

}  // namespace
}  // namespace seed::spec
