#include "spec/engine/request_output.h"

#include <algorithm>
#include <cstdint>

#include "models/base/error.h"

namespace seed::spec {

RequestOutput::RequestOutput(const models::Tokenizer* tokenizer, std::vector<int32_t> stop_tokens,
                             int64_t max_new_tokens, std::vector<std::string> stop)
    : stop_tokens_(std::move(stop_tokens)), max_new_tokens_(max_new_tokens), stop_(std::move(stop)) {
  if (tokenizer != nullptr) stream_.emplace(*tokenizer);
  for (const std::string& s : stop_) longest_stop_ = std::max(longest_stop_, s.size());
  if (max_new_tokens_ <= 0) finish_ = FinishReason::kLength;
}

bool RequestOutput::push(int32_t token) {
  SEED_CHECK(!finished(), kInternal) << "RequestOutput: token pushed after the request finished";
  if (std::find(stop_tokens_.begin(), stop_tokens_.end(), token) != stop_tokens_.end()) {
    end(FinishReason::kEos);
    return true;
  }
  tokens_.push_back(token);
  if (stream_) text_ += stream_->push(token);
  if (cut_at_stop()) {
    finish_ = FinishReason::kStop;
  } else if (generated() >= max_new_tokens_) {
    finish_ = FinishReason::kLength;
  }
  return finished();
}

void RequestOutput::end(FinishReason reason, std::string error) {
  if (finished()) return;
  finish_ = reason;
  error_ = std::move(error);
}

bool RequestOutput::cut_at_stop() {
  if (stop_.empty()) return false;
  // A stop string may straddle what was checked before: rescan its overlap.
  const size_t from = checked_ > longest_stop_ ? checked_ - longest_stop_ : 0;
  size_t first = std::string::npos;
  for (const std::string& s : stop_) first = std::min(first, text_.find(s, from));
  checked_ = text_.size();
  if (first == std::string::npos) return false;
  text_.resize(first);
  return true;
}

Completion RequestOutput::take() {
  SEED_CHECK(finished(), kInternal) << "RequestOutput::take before the request finished";
  // The stream holds back text later tokens could change; none will come.
  if (stream_ && *finish_ != FinishReason::kStop) {
    text_ += stream_->finish();
    if (cut_at_stop()) finish_ = FinishReason::kStop;
  }
  Completion c;
  c.text = std::move(text_);
  c.tokens = std::move(tokens_);
  c.finish = *finish_;
  c.error = std::move(error_);
  c.stats.generated_tokens = static_cast<int64_t>(c.tokens.size());
  return c;
}

}  // namespace seed::spec
