// ScriptedEngine: a real Engine that replays fixed completions, for testing
// search algorithms deterministically.
//
// Completions come from a table, prompt -> completions: the k-th request
// with a prompt gets completions[k % size]. A prompt missing from the table
// is a test bug, reported as seed::Error kNotFound naming the prompt. Every
// batch is recorded, so tests can assert what was asked, in which order and
// how it was batched, and every group ended (Engine::end_group). Token
// counts are one per character of the completion.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/base/error.h"
#include "spec/api/engine.h"

namespace seed::testing {

class ScriptedEngine : public spec::Engine {
 public:
  explicit ScriptedEngine(std::map<std::string, std::vector<std::string>> script) : script_(std::move(script)) {}

  using spec::Engine::generate;
  // Completes the requests in order; the ones on_complete cancels complete
  // empty, with kCancelled, when their turn comes.
  std::vector<spec::Completion> generate(const std::vector<spec::GenRequest>& requests,
                                         const spec::CompletionCallback& on_complete) override {
    batches_.push_back(requests);
    std::vector<spec::Completion> out;
    std::vector<bool> cancelled(requests.size(), false);
    for (const spec::GenRequest& r : requests) {
      if (cancelled[out.size()]) {
        spec::Completion c;
        c.finish = spec::FinishReason::kCancelled;
        out.push_back(std::move(c));
        continue;
      }
      const auto it = script_.find(r.prompt);
      SEED_CHECK(it != script_.end() && !it->second.empty(), kNotFound)
          << "scripted engine: no completion for prompt '" << r.prompt << "'";
      spec::Completion c;
      c.text = it->second[used_[r.prompt]++ % it->second.size()];
      c.tokens.assign(c.text.size(), 0);
      c.finish = spec::FinishReason::kEos;
      c.stats.generated_tokens = static_cast<int64_t>(c.text.size());
      c.stats.target_forwards = c.stats.generated_tokens;
      stats_.requests += 1;
      stats_.generated_tokens += c.stats.generated_tokens;
      stats_.target_forwards += c.stats.generated_tokens;
      if (on_complete) {
        for (const size_t index : on_complete(out.size(), c)) {
          if (index > out.size()) cancelled.at(index) = true;  // done ones stay done
        }
      }
      out.push_back(std::move(c));
    }
    return out;
  }
  void end_group(uint64_t group) noexcept override { ended_.push_back({group, batches_.size()}); }
  std::string name() const override { return "scripted"; }
  spec::EngineStats stats() const override { return stats_; }
  void reset_stats() override { stats_ = {}; }

  const std::vector<std::vector<spec::GenRequest>>& batches() const { return batches_; }
  // A group ended, after how many batches.
  struct Ended {
    uint64_t group;
    size_t after_batches;
    bool operator==(const Ended& o) const { return group == o.group && after_batches == o.after_batches; }
  };
  const std::vector<Ended>& ended() const { return ended_; }
  // The prompts of batch `b`, in order.
  std::vector<std::string> prompts(size_t b) const {
    std::vector<std::string> out;
    for (const spec::GenRequest& r : batches_.at(b)) out.push_back(r.prompt);
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>> script_;
  std::map<std::string, size_t> used_;
  std::vector<std::vector<spec::GenRequest>> batches_;
  std::vector<Ended> ended_;
  spec::EngineStats stats_;
};

}  // namespace seed::testing
