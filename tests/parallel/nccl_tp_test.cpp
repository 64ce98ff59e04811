// NCCL between two ranks, each on a GPU of its own: the collectives on known
// values, and a model split over the two GPUs giving the whole model's
// logits. Run under mpirun -np 2 with the MPI tests; where the build has no
// NCCL backend, libtorch has no CUDA, or fewer than two GPUs are visible,
// each test is skipped, saying which. (A group of one rank, where every
// collective keeps its input, is communicator_test's.)
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <memory>
#include <string>
#include <vector>

#include "models/causal_lm.h"
#include "parallel/mpi_communicator.h"
#include "parallel/nccl_communicator.h"
#include "tests/models/tiny_models.h"
#include "tests/parallel/mpi_world.h"
#include "tests/parallel/tp_logits.h"
#include "tests/throws_error.h"

namespace seed::parallel {
namespace {

using seed::testing::throws_error;
using testing::mpi_world;

constexpr int kRanks = 2;
constexpr double kTolerance = 1e-3;  // fp32 on the GPU; the all-reduce sums the halves in another order
constexpr uint64_t kSeed = 11;

class NcclTpTest : public ::testing::Test {
 protected:
  // Every rank of a node sees the same build and GPUs, so all skip alike
  // and none is left waiting in a collective.
  void SetUp() override {
    ASSERT_GE(mpi_world().world_size(), kRanks) << "run under mpirun -np 2 or more";
    if (!nccl_backend_built()) GTEST_SKIP() << "NCCL backend not built (SEED_WITH_NCCL off or CUDA/NCCL not found)";
    if (!torch::cuda::is_available()) GTEST_SKIP() << "this libtorch sees no CUDA device";
    const int64_t gpus = static_cast<int64_t>(torch::cuda::device_count());
    if (gpus < kRanks) GTEST_SKIP() << "two ranks need a GPU each; " << gpus << " visible";
    bootstrap_ = make_mpi_communicator(0, kRanks);
    if (!bootstrap_) GTEST_SKIP() << "world rank outside the pair";
    // One node, a GPU per rank: what a launcher assigns there.
    device_ = bootstrap_->rank();
    comm_ = make_nccl_communicator(*bootstrap_, device_);
  }
  at::TensorOptions on_gpu(at::ScalarType type) const {
    return at::TensorOptions().dtype(type).device(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device_)));
  }
  std::unique_ptr<Communicator> bootstrap_;
  int device_ = 0;
  std::unique_ptr<Communicator> comm_;
};

TEST_F(NcclTpTest, AllReduceSumsBothRanksValuesInEveryDtype) {
  EXPECT_EQ(comm_->rank(), bootstrap_->rank());
  EXPECT_EQ(comm_->size(), kRanks);
  EXPECT_STREQ(comm_->backend(), "nccl");
  const int rank = comm_->rank();
  // Small integers, exact in each dtype: rank 0 holds x, rank 1 2x.
  for (const at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf, at::kLong, at::kInt}) {
    at::Tensor t = at::arange(5, on_gpu(type)) * (rank + 1);
    comm_->all_reduce_sum(t);
    EXPECT_TRUE(t.cpu().equal(at::arange(5, at::TensorOptions().dtype(type)) * 3)) << type << ": " << t;
  }
}

TEST_F(NcclTpTest, AllGatherConcatenatesInRankOrderAlongAnyDim) {
  const at::Tensor mine = at::arange(6, on_gpu(at::kFloat)).view({2, 3}) + 100 * comm_->rank();
  const at::Tensor first = at::arange(6, at::kFloat).view({2, 3});
  const at::Tensor second = first + 100;
  EXPECT_TRUE(comm_->all_gather(mine, 0).cpu().equal(at::cat({first, second}, 0)));
  EXPECT_TRUE(comm_->all_gather(mine, 1).cpu().equal(at::cat({first, second}, 1)));
  EXPECT_TRUE(comm_->all_gather(mine, -1).cpu().equal(at::cat({first, second}, 1)));
}

TEST_F(NcclTpTest, BroadcastCopiesTheRootsTensor) {
  for (const int root : {0, 1}) {
    at::Tensor t = at::full({4}, static_cast<float>(comm_->rank() + 10), on_gpu(at::kFloat));
    comm_->broadcast(t, root);
    EXPECT_TRUE(t.cpu().equal(at::full({4}, static_cast<float>(root + 10), at::kFloat))) << "root " << root << ": " << t;
  }
  comm_->barrier();
}

// Refused on each rank before any collective starts, so neither waits.
TEST_F(NcclTpTest, BadArgumentsAreRefusedNamingTheProblem) {
  const int other = 1 - device_;
  at::Tensor elsewhere = at::ones({3}, at::TensorOptions().device(at::kCUDA, static_cast<c10::DeviceIndex>(other)));
  EXPECT_TRUE(throws_error([&] { comm_->all_reduce_sum(elsewhere); }, ErrorKind::kInvalidArgument,
                           {"needs CUDA tensors on cuda:" + std::to_string(device_), "cuda:" + std::to_string(other)}));
  at::Tensor mine = at::ones({3}, on_gpu(at::kFloat));
  EXPECT_TRUE(throws_error([&] { comm_->broadcast(mine, kRanks); }, ErrorKind::kInvalidArgument,
                           {"nccl broadcast root 2", "group of 2"}));
  comm_->barrier();
}

// Megatron's split over the two GPUs: attention by heads, the MLP by its
// intermediate columns, the LM head by vocabulary rows, each all-reduce and
// all-gather through NCCL.
TEST_F(NcclTpTest, EveryVariantSplitOverTwoGpusMatchesTheWholeModel) {
  models::LoadOptions whole_options;
  whole_options.device = "cuda:" + std::to_string(device_);
  models::LoadOptions tp_options = whole_options;
  tp_options.tp_group = comm_.get();
  for (const std::string& variant : models::testing::all_variants()) {
    const models::ModelConfig config = models::testing::tiny_config(variant);
    auto whole = models::CausalLM::random(config, kSeed, whole_options);
    auto tp = models::CausalLM::random(config, kSeed, tp_options);
    EXPECT_EQ(tp->shard().size, kRanks);
    EXPECT_EQ(tp->shard().rank, comm_->rank());
    models::testing::expect_same_logits(*tp, *whole, kTolerance, variant);
  }
}

}  // namespace
}  // namespace seed::parallel
