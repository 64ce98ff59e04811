// LookaheadSettings: the shape of step-level speculation
// (spec/lookahead/lookahead_engine.h), as EngineOptions::lookahead asks
// make_engine for it. Torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace seed::spec {

struct LookaheadSettings {
  int gamma = 2;                 // drafted steps per round (adaptive: the first rounds')
  bool adaptive = false;         // choose gamma each round from what was measured
  int max_gamma = 8;             // adaptive: the largest gamma considered
  std::string delimiter = "\n";  // ends a step
  int64_t max_step_tokens = 64;  // a step longer than this is cut
  int width = 1;                 // drafted alternatives per step (sampled requests)
  bool async = false;            // draft on a thread of its own while the target works
  int draft_threads = 1;         // async: intra-op threads of the draft's thread
  // async: the draft model's device ("cpu", "cuda:N"; make_engine sets
  // EngineOptions::device); on a GPU the draft's thread queues its kernels
  // on a stream of its own, so they overlap the target's.
  std::string draft_device = "cpu";
};

}  // namespace seed::spec
