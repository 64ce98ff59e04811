// Targets and drafters that hand every call to another one, for tests that
// change one call (wait in it, note what it saw) and keep the rest.
// ForwardingDrafter forwards the per-slot calls; its propose_batch is
// Drafter's own (one propose() after another).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "spec/api/drafter.h"
#include "spec/api/target.h"

namespace seed::testing {

class ForwardingTarget : public spec::Target {
 public:
  explicit ForwardingTarget(std::unique_ptr<spec::Target> inner) : owned_(std::move(inner)), inner_(*owned_) {}
  int64_t vocab_size() const override { return inner_.vocab_size(); }
  int64_t max_positions() const override { return inner_.max_positions(); }
  void start(uint64_t slot, const std::vector<int32_t>& prompt, const spec::TargetSettings& settings) override {
    inner_.start(slot, prompt, settings);
  }
  int64_t room(uint64_t slot) const override { return inner_.room(slot); }
  std::vector<spec::Verdict> verify(const std::vector<spec::VerifyItem>& items) override {
    return inner_.verify(items);
  }
  void prefill(const std::vector<uint64_t>& slots) override { inner_.prefill(slots); }
  void finish(uint64_t slot) override { inner_.finish(slot); }
  spec::PrefillStats prefill_stats() const override { return inner_.prefill_stats(); }
  int64_t kv_token_capacity() const override { return inner_.kv_token_capacity(); }

 private:
  std::unique_ptr<spec::Target> owned_;
  spec::Target& inner_;
};

class ForwardingDrafter : public spec::Drafter {
 public:
  explicit ForwardingDrafter(std::unique_ptr<spec::Drafter> inner) : owned_(std::move(inner)), inner_(*owned_) {}
  explicit ForwardingDrafter(spec::Drafter& inner) : inner_(inner) {}  // borrowed: outlives this
  void start(uint64_t slot, const std::vector<int32_t>& tokens, const spec::DraftSettings& settings) override {
    inner_.start(slot, tokens, settings);
  }
  spec::DraftTree propose(uint64_t slot, int max_depth) override { return inner_.propose(slot, max_depth); }
  void advance(uint64_t slot, const spec::Verdict& verdict) override { inner_.advance(slot, verdict); }
  void finish(uint64_t slot) override { inner_.finish(slot); }

 private:
  std::unique_ptr<spec::Drafter> owned_;
  spec::Drafter& inner_;
};

}  // namespace seed::testing
