// Several problems solved at once: each search is today's synchronous
// code on a thread of its own, and the engine they share batches their
// requests (spec/engine/scheduled_engine.h).
#pragma once

#include <cstddef>
#include <functional>

namespace seed::search {

// Runs job(i) for every i in [0, count) on `threads` threads (inline when
// 1), each taking the next index as it finishes one. The first exception
// stops handing out indices; the jobs running finish, then it is rethrown.
void run_concurrently(size_t count, int threads, const std::function<void(size_t)>& job);

}  // namespace seed::search
