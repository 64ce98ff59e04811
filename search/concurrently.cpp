#include "search/concurrently.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace seed::search {

void run_concurrently(size_t count, int threads, const std::function<void(size_t)>& job) {
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) job(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex mutex;
  const auto work = [&] {
    while (!failed) {
      const size_t i = next++;
      if (i >= count) return;
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!first) first = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace seed::search
