// RequestOutput: what one request has generated so far, and whether it is
// done. Every engine feeds accepted tokens through push() one at a time, so
// all engines stop a request at the same token (EOS, a stop string,
// max_new_tokens) however many tokens a verification accepted at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/tokenizer.h"
#include "spec/api/engine.h"

namespace seed::spec {

class RequestOutput {
 public:
  // `tokenizer` may be null (token-only requests: no text, no stop strings).
  // `stop_tokens`: the tokens that end the request with kEos (the model's
  // EOS and its generation config's list; none: never).
  RequestOutput(const models::Tokenizer* tokenizer, std::vector<int32_t> stop_tokens, int64_t max_new_tokens,
                std::vector<std::string> stop);

  // Adds a generated token; returns true once the request is finished (then
  // further pushes are not allowed).
  bool push(int32_t token);
  // Ends the request for a reason found outside the tokens (context full,
  // an error). No effect if already finished.
  void end(FinishReason reason, std::string error = {});

  bool finished() const { return finish_.has_value(); }
  int64_t generated() const { return static_cast<int64_t>(tokens_.size()); }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // Tokens still allowed by max_new_tokens.
  int64_t remaining() const { return max_new_tokens_ - generated(); }
  // REQUIRES finished(). Moves the tokens and text out.
  Completion take();

 private:
  bool cut_at_stop();  // true if a stop string occurs; cuts text_ before it

  std::optional<models::TextStream> stream_;
  std::vector<int32_t> stop_tokens_;
  int64_t max_new_tokens_;
  std::vector<std::string> stop_;
  size_t longest_stop_ = 0;
  std::vector<int32_t> tokens_;
  std::string text_;
  size_t checked_ = 0;  // text_ before this offset holds no stop string start
  std::optional<FinishReason> finish_;
  std::string error_;
};

}  // namespace seed::spec
