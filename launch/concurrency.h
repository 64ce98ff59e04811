// How many problems `seed run` solves at once against its one engine
// (--concurrency N|auto), and the threads that solve them.
//
// Several searches, each solving one problem with today's synchronous
// code, call the engine's generate() from their own threads; the engine
// batches their requests into shared target forwards (spec/engine/
// scheduled_engine.h). plan_concurrency is a pure function (tested
// table-driven); the launcher logs its describe() like the thread plan.
#pragma once

#include <cstddef>
#include <string>

namespace seed::launch {

struct ConcurrencyRequest {
  int requested = 0;           // --concurrency N; 0: auto
  bool engine_shares = false;  // the engine serves concurrent generate() calls
  bool engine_batches = false;  // it verifies requests of several calls in one forward (not ar, sd, mcsd)
  bool gpu = false;            // the target runs on a CUDA device
  int cores = 1;               // cores this process may use
  int max_batch = 16;          // sequences one target forward verifies at most
  int requests_per_step = 1;   // what one search step of one problem sends (cot 1, bfs n x b)
  size_t problems = 0;         // problems left to solve
};

struct ConcurrencyPlan {
  int problems_in_flight = 1;
  std::string reason;  // why, for the log line
  std::string describe() const;  // "3 problems in flight (...)"
};

// The rule for auto, per engine and device:
//   - an engine that cannot share (or runs one request at a time: ar, sd,
//     mcsd) gets 1: more problems would only wait for each other;
//   - otherwise enough problems that their steps fill a target forward,
//     ceil(fill / requests_per_step). On a GPU, where a wider forward is
//     nearly free, fill is 2 x max_batch (a level drains to a few
//     stragglers, so twice a forward's width keeps one full), at least 2
//     (one problem's stragglers share forwards with another's level,
//     however wide a step is) and at most 64. On a CPU fill is max_batch
//     and at most 4 per core: 16 rows cost about 3.5 one-row forwards on
//     two cores, so single chains gain from sharing, but a step that
//     already fills a forward (BFS's 25 requests) gains nothing measurable
//     from a second problem beside it;
//   - never more than the problems left, never less than 1.
// An explicit N is kept (at least 1, at most the problems left).
ConcurrencyPlan plan_concurrency(const ConcurrencyRequest& request);

}  // namespace seed::launch
