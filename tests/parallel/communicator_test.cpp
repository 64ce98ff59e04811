// The single-process communicator, and the NCCL backend as far as the
// machine allows: built or not, GPU or not, CUDA libtorch or not, each
// case asserts what it can and says what it skipped.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "parallel/communicator.h"
#include "parallel/nccl_communicator.h"
#include "tests/throws_error.h"

namespace seed::parallel {
namespace {

using seed::testing::throws_error;

TEST(LocalCommunicator, IsOneRankWhoseCollectivesKeepValues) {
  auto comm = make_local_communicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_STREQ(comm->backend(), "local");
  const at::Tensor expected = at::arange(6, at::kFloat).view({2, 3});
  at::Tensor t = expected.clone();
  comm->all_reduce_sum(t);
  EXPECT_TRUE(t.equal(expected));
  comm->broadcast(t, 0);
  EXPECT_TRUE(t.equal(expected));
  EXPECT_TRUE(comm->all_gather(t, 1).equal(expected));
  comm->barrier();
  EXPECT_TRUE(throws_error([&] { comm->broadcast(t, 1); }, ErrorKind::kInvalidArgument, {"root 1"}));
}

// A NCCL group of one rank on GPU 0; what runs depends on the machine.
TEST(NcclCommunicator, RunsWhereAGpuIsAndFailsClearlyElsewhere) {
  auto bootstrap = make_local_communicator();
  if (!nccl_backend_built()) {
    EXPECT_TRUE(throws_error([&] { make_nccl_communicator(*bootstrap, 0); }, ErrorKind::kInvalidArgument,
                             {"without the NCCL backend", "SEED_WITH_NCCL"}));
    GTEST_SKIP() << "NCCL backend not built (SEED_WITH_NCCL off or CUDA/NCCL not found): checked the error only";
  }
  std::unique_ptr<Communicator> comm;
  try {
    comm = make_nccl_communicator(*bootstrap, 0);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs CUDA device 0"), std::string::npos) << e.what();
    GTEST_SKIP() << "NCCL backend built, but no GPU here (" << e.what() << "): checked the error only";
  }
  EXPECT_EQ(comm->size(), 1);
  EXPECT_STREQ(comm->backend(), "nccl");
  at::Tensor cpu = at::ones({4}, at::kFloat);
  EXPECT_TRUE(throws_error([&] { comm->all_reduce_sum(cpu); }, ErrorKind::kInvalidArgument,
                           {"needs CUDA tensors on cuda:0", "mpi backend"}));
  comm->barrier();
  if (!at::hasCUDA()) GTEST_SKIP() << "GPU and NCCL present, but this libtorch is CPU-only: checked the CPU-tensor error and barrier";
  const at::Tensor expected = at::arange(6, at::kFloat).view({2, 3});
  at::Tensor t = expected.to(at::Device(at::kCUDA, 0));
  comm->all_reduce_sum(t);
  comm->broadcast(t, 0);
  EXPECT_TRUE(t.cpu().equal(expected));
  EXPECT_TRUE(comm->all_gather(t, 1).cpu().equal(expected));
}

}  // namespace
}  // namespace seed::parallel
