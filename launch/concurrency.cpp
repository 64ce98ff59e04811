#include "launch/concurrency.h"

#include <fmt/format.h>

#include <algorithm>

#include "launch/counted.h"

namespace seed::launch {
namespace {

constexpr int kGpuMostInFlight = 64;
constexpr int kCpuInFlightPerCore = 4;
constexpr int kFewestInFlightOnAGpu = 2;  // one problem's stragglers beside another's level

}  // namespace

std::string ConcurrencyPlan::describe() const {
  return fmt::format("{} in flight ({})", counted(problems_in_flight, "problem"), reason);
}

ConcurrencyPlan plan_concurrency(const ConcurrencyRequest& r) {
  const int left = static_cast<int>(std::min<size_t>(std::max<size_t>(r.problems, 1), 1 << 20));
  ConcurrencyPlan plan;
  if (r.requested > 0) {
    plan.problems_in_flight = std::min(r.requested, left);
    plan.reason = "--concurrency";
    return plan;
  }
  if (!r.engine_shares || !r.engine_batches) {
    plan.reason = r.engine_shares ? "auto: the engine verifies one request at a time" : "auto: the engine serves one call at a time";
    return plan;
  }
  const int fill = (r.gpu ? 2 : 1) * std::max(1, r.max_batch);
  const int per_step = std::max(1, r.requests_per_step);
  const int cap = r.gpu ? kGpuMostInFlight : kCpuInFlightPerCore * std::max(1, r.cores);
  const int filling = std::max(r.gpu ? kFewestInFlightOnAGpu : 1, (fill + per_step - 1) / per_step);
  plan.problems_in_flight = std::max(1, std::min({filling, cap, left}));
  plan.reason = fmt::format("auto: {} per step, a forward full at {}, at most {} on {}", counted(per_step, "request"),
                            counted(fill, "row"), cap, r.gpu ? "a GPU" : counted(r.cores, "CPU core"));
  return plan;
}

}  // namespace seed::launch
