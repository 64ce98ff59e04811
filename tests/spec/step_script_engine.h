// Scripted engines for the lookahead tests: a tokenizer of one token per
// byte, and a real Engine that writes the steps of a script for each request
// (through RequestOutput, as every engine does). A StepScriptEngine is
// called from one thread at a time; its counters are read after the calls.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "models/tokenizer.h"
#include "spec/api/engine.h"
#include "spec/engine/request_output.h"

namespace seed::spec {

// One token per byte, plus one multi-character token ("!\nZ", holding the
// delimiter) and EOS.
class ByteTokenizer : public models::Tokenizer {
 public:
  static constexpr int32_t kPiece = 256, kEos = 257;
  static constexpr const char* kPieceText = "!\nZ";
  std::vector<int32_t> encode(std::string_view text, bool) const override {
    std::vector<int32_t> out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.substr(i, 3) == kPieceText) {
        out.push_back(kPiece);
        i += 2;
      } else {
        out.push_back(static_cast<unsigned char>(text[i]));
      }
    }
    return out;
  }
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string out;
    for (const int32_t id : ids) {
      if (id == kPiece) out += kPieceText;
      else if (id < 256) out += static_cast<char>(id);
    }
    return out;
  }
  int64_t vocab_size() const override { return 258; }
  int32_t bos_id() const override { return -1; }
  int32_t eos_id() const override { return kEos; }
};

// A real Engine that replays a script of steps: after a prompt whose
// generated part holds k delimiters it writes step k (then EOS if that step
// has no delimiter, or if the script has run out), through RequestOutput,
// so stop strings and max_new_tokens behave as in every engine. Given
// several scripts, the i-th request of a call with the same prompt follows
// script i (the last one beyond): how alternatives drafted for one step
// differ.
class StepScriptEngine : public Engine {
 public:
  // `delay`: how long each call takes (what the adaptive lookahead weighs);
  // `prefill_delay`: how much longer a call takes when it holds a request
  // with nothing generated yet (as a model reads its prompt).
  StepScriptEngine(std::shared_ptr<const models::Tokenizer> tokenizer, size_t prompt_length,
                   std::vector<std::vector<std::string>> scripts, std::chrono::microseconds delay = {},
                   std::chrono::microseconds prefill_delay = {})
      : tokenizer_(std::move(tokenizer)),
        prompt_length_(prompt_length),
        scripts_(std::move(scripts)),
        delay_(delay),
        prefill_delay_(prefill_delay) {}

  using Engine::generate;
  std::vector<Completion> generate(const std::vector<GenRequest>& requests, const CompletionCallback&) override {
    calls += 1;
    std::this_thread::sleep_for(delay_);
    if (std::any_of(requests.begin(), requests.end(),
                    [&](const GenRequest& r) { return r.prompt_tokens.size() == prompt_length_; })) {
      std::this_thread::sleep_for(prefill_delay_);
    }
    for (const GenRequest& r : requests) {
      draft_lengths.push_back(r.draft_length);
      temperatures.push_back(r.sampling.temperature);
    }
    if (on_call) on_call(reported, requests.front().draft_length);
    std::vector<Completion> out;
    std::map<std::vector<int32_t>, size_t> seen;
    for (const GenRequest& r : requests) {
      const std::vector<std::string>& steps = scripts_[std::min(seen[r.prompt_tokens]++, scripts_.size() - 1)];
      const std::vector<int32_t> generated(r.prompt_tokens.begin() + static_cast<long>(prompt_length_),
                                           r.prompt_tokens.end());
      const std::string text = tokenizer_->decode(generated);
      const size_t k = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
      RequestOutput output(tokenizer_.get(), {ByteTokenizer::kEos}, r.max_new_tokens, r.stop);
      std::vector<int32_t> tokens = k < steps.size() ? tokenizer_->encode(steps[k], false) : std::vector<int32_t>{};
      if (k >= steps.size() || steps[k].find('\n') == std::string::npos) tokens.push_back(ByteTokenizer::kEos);
      for (const int32_t t : tokens) {
        if (output.push(t)) break;
      }
      if (!output.finished()) output.end(FinishReason::kLength);
      out.push_back(output.take());
    }
    return out;
  }
  std::string name() const override { return "script"; }
  EngineStats stats() const override { return reported; }
  void reset_stats() override {}

  int calls = 0;
  std::vector<int> draft_lengths;  // each request's GenRequest::draft_length
  std::vector<float> temperatures;  // each request's sampling temperature
  EngineStats reported;            // what stats() says (token acceptance and costs)
  // Called with `reported` and the first request's draft length at each call.
  std::function<void(EngineStats&, int)> on_call;

 private:
  std::shared_ptr<const models::Tokenizer> tokenizer_;
  size_t prompt_length_;
  std::vector<std::vector<std::string>> scripts_;
  std::chrono::microseconds delay_;
  std::chrono::microseconds prefill_delay_;
};

}  // namespace seed::spec
