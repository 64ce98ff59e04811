// main of the tests that ctest runs under mpirun. Every rank runs every
// test (collectives need all of them); rank 0 prints gtest's report and the
// other ranks print only their failures, tagged with the rank. mpirun exits
// non-zero if any rank fails.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "tests/parallel/mpi_world.h"

namespace seed::parallel::testing {

namespace {

MpiSession* g_world = nullptr;  // set once in main, before any test

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::cerr << "[rank " << rank_ << "] " << (result.file_name() ? result.file_name() : "?") << ":"
              << result.line_number() << ": " << result.summary() << std::endl;
  }

 private:
  int rank_;
};

}  // namespace

MpiSession& mpi_world() { return *g_world; }

}  // namespace seed::parallel::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  seed::parallel::MpiSession world(&argc, &argv);
  seed::parallel::testing::g_world = &world;
  if (world.world_rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new seed::parallel::testing::RankFailurePrinter(world.world_rank()));
  }
  const int result = RUN_ALL_TESTS();
  if (::testing::GTEST_FLAG(also_run_disabled_tests)) {
    // The fault tests (the only ones ctest runs with disabled tests on) kill
    // a rank; Open MPI 4.1 cannot finalize a job that lost one (MPI_Finalize
    // waits for it), so the survivors leave without finalizing.
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(result);
  }
  return result;
}
