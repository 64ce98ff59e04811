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

}  // namespace seed::spec
