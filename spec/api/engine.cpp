#include "spec/api/engine.h"

namespace seed::spec {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kLength: return "length";
    case FinishReason::kEos: return "eos";
    case FinishReason::kStop: return "stop";
    case FinishReason::kContext: return "context";
    case FinishReason::kError: return "error";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "unknown";
}

void add_completion(EngineStats& stats, RequestKind kind, const RequestStats& s) {
  stats.requests += 1;
  stats.generated_tokens += s.generated_tokens;
  stats.drafted_tokens += s.drafted_tokens;
  stats.accepted_tokens += s.accepted_tokens;
  stats.rejections += s.rejections;
  stats.draft_s += s.draft_s;
  RequestStats& total = kind == RequestKind::kThought ? stats.thought : stats.evaluation;
  total.prompt_tokens += s.prompt_tokens;
  total.generated_tokens += s.generated_tokens;
  total.round_tokens += s.round_tokens;
  total.target_forwards += s.target_forwards;
  total.drafted_tokens += s.drafted_tokens;
  total.accepted_tokens += s.accepted_tokens;
  total.rejections += s.rejections;
  total.draft_s += s.draft_s;
  total.verify_s += s.verify_s;
  total.wall_s += s.wall_s;
  total.target_share += s.target_share;
  total.prefill_share += s.prefill_share;
}

}  // namespace seed::spec
