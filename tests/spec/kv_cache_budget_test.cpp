// The KV caches' budget: --kv-cache-mb as given, or half the device's
// available memory shared among the process's caches and, on the CPU, the
// job's processes on the host.
#include <gtest/gtest.h>

#include <c10/core/Device.h>

#include "models/device_memory.h"
#include "models/kv_cache.h"
#include "spec/engine/engine_factory.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(KvCacheBudgetTest, AGivenBudgetIsEachCachesWhateverShareIt) {
  EngineOptions o;
  o.kv_cache_mb = 100;
  o.host_processes = 4;
  EXPECT_EQ(kv_cache_options(o, 3).max_bytes, 100 * kMiB);
  o.kv_cache_mb = -1;
  EXPECT_TRUE(::seed::testing::throws_error([&] { kv_cache_options(o, 1); }, ErrorKind::kInvalidArgument,
                                            {"--kv-cache-mb"}));
}

// Available memory moves a little between readings: the shares are compared
// to within 5% of the whole.
TEST(KvCacheBudgetTest, TheDefaultIsHalfTheAvailableMemorySharedByCachesAndHostProcesses) {
  EngineOptions o;
  const double half = double(models::available_memory_bytes(c10::Device(c10::kCPU))) / 2;
  const auto budget = [&](int caches, int host_processes) {
    o.host_processes = host_processes;
    return double(kv_cache_options(o, caches).max_bytes);
  };
  ASSERT_GT(half / 4, double(64 * kMiB)) << "this machine's memory is below the budget's floor";
  EXPECT_NEAR(budget(1, 1), half, 0.05 * half);
  EXPECT_NEAR(budget(2, 1), half / 2, 0.05 * half);
  EXPECT_NEAR(budget(1, 4), half / 4, 0.05 * half);
  EXPECT_NEAR(budget(2, 2), half / 4, 0.05 * half);
}

}  // namespace
}  // namespace seed::spec
