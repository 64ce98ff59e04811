// LoopSettings: how a ScheduledEngine's loop runs its requests
// (spec/engine/scheduled_engine.h): how many are in flight at once, and
// whether each drafter drafts on a thread of its own.
//
// A plain value.
#pragma once

#include <cstddef>

namespace seed::spec {

struct LoopSettings {
  size_t in_flight = 0;   // requests started at once; 0: the whole batch
  bool threaded = false;  // each drafter on its own thread
  int draft_threads = 1;  // intra-op threads per drafter thread
};

}  // namespace seed::spec
