#include "launch/thread_plan.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>

#include "launch/counted.h"

namespace seed::launch {
namespace {

// A drafter per this many cores when the user names neither: the target is
// the bottleneck (a draft forward costs ~0.1 of a target one), so it keeps
// most cores, and one drafter keeps up with it on small machines.
constexpr int kCoresPerDrafter = 4;

ThreadPlan automatic(const ThreadRequest& r) {
  ThreadPlan plan;
  plan.cores = r.cores;
  if (!r.drafter_threads) {
    plan.target_threads = r.cores;
    return plan;
  }
  plan.drafters = std::max(1, r.cores / kCoresPerDrafter);
  if (r.max_useful_drafters > 0) plan.drafters = std::min(plan.drafters, r.max_useful_drafters);
  plan.target_threads = std::max(1, r.cores - plan.drafters);
  return plan;
}

}  // namespace

std::string ThreadPlan::describe() const {
  std::string line = counted(cores, "core") + ": target " + counted(target_threads, "thread");
  if (drafters > 0) line += ", " + counted(drafters, "drafter") + " x " + counted(draft_threads, "thread");
  return line;
}

ThreadPlan plan_threads(const ThreadRequest& r) {
  const ThreadPlan best = automatic(r);
  ThreadPlan plan = best;
  if (r.threads > 0) plan.target_threads = r.threads;
  if (r.drafter_threads && r.drafters > 0) plan.drafters = r.drafters;
  if (r.drafter_threads && r.threads > 0 && r.drafters == 0) {
    // The user fixed the target: the drafters get what is left, at least one.
    plan.drafters = std::max(1, r.cores - r.threads);
    if (r.max_useful_drafters > 0) plan.drafters = std::min(plan.drafters, r.max_useful_drafters);
  }
  if (r.drafter_threads && r.drafters > 0 && r.threads == 0) {
    plan.target_threads = std::max(1, r.cores - plan.drafters * plan.draft_threads);
  }
  // One core cannot run the target and a drafter at once; the automatic
  // plan still drafts there (they mostly alternate), so only flags warn.
  const bool flags_given = r.threads > 0 || (r.drafter_threads && r.drafters > 0);
  if (flags_given && plan.busy_threads() > std::max(r.cores, best.busy_threads())) {
    plan.oversubscribed = fmt::format("{} on {}; without thread flags seed would run {}",
                                      counted(plan.busy_threads(), "busy thread"), counted(r.cores, "core"),
                                      best.describe());
  }
  return plan;
}

int omp_num_threads(const char* value) {
  if (value == nullptr) return 0;
  const char* p = value;
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  if (!std::isdigit(static_cast<unsigned char>(*p))) return 0;
  char* end = nullptr;
  const long count = std::strtol(p, &end, 10);
  while (std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (*end != '\0' && *end != ',') return 0;
  return count > 0 && count <= std::numeric_limits<int>::max() ? static_cast<int>(count) : 0;
}

int usable_cores(int local_ranks) {
  if (const int asked = omp_num_threads(std::getenv("OMP_NUM_THREADS")); asked > 0) return asked;
  cpu_set_t set;
  CPU_ZERO(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int machine = online > 0 ? static_cast<int>(online) : 1;
  const int allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : machine;
  if (allowed < machine) return std::max(1, allowed);  // bound by the launcher
  return std::max(1, allowed / std::max(1, local_ranks));
}

}  // namespace seed::launch
