#include "parallel/mpi_communicator.h"

#include <ATen/ATen.h>
#include <cstdint>
#include <mpi.h>

#include <climits>

#include "models/base/error.h"
#include "parallel/collective_layout.h"
#include "parallel/mpi_session.h"
#include "parallel/mpi_wait.h"

namespace seed::parallel {

namespace {

constexpr const char* kBackend = "mpi";
// MPI_Comm_create_group's messages on MPI_COMM_WORLD pass between the
// group's ranks only, which exchange nothing else there meanwhile.
constexpr int kCreateGroupTag = 0;

MPI_Datatype mpi_type(c10::ScalarType type) {
  switch (type) {
    case at::kFloat: return MPI_FLOAT;
    case at::kDouble: return MPI_DOUBLE;
    case at::kInt: return MPI_INT32_T;
    case at::kLong: return MPI_INT64_T;
    case at::kByte: return MPI_UINT8_T;
    case at::kChar: return MPI_INT8_T;
    default:
      SEED_FAIL(kInvalidArgument) << "the mpi communicator does not support dtype " << c10::toString(type)
                                  << "; use float32, float64, int32, int64, uint8 or int8";
  }
}

// The count MPI takes (an int) for a checked CPU tensor.
int checked_count(const at::Tensor& tensor, const char* op) {
  detail::check_tensor(tensor, kBackend, op);
  SEED_CHECK(tensor.is_cpu(), kInvalidArgument)
      << "mpi " << op << " needs CPU tensors, got one on " << tensor.device()
      << "; CUDA tensors use the nccl backend";
  SEED_CHECK(tensor.numel() <= INT_MAX, kInvalidArgument)
      << "mpi " << op << ": " << tensor.numel() << " elements exceed MPI's int count";
  return static_cast<int>(tensor.numel());
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override { MPI_Comm_free(&comm_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return kBackend; }

  void all_reduce_sum(at::Tensor& tensor) override {
    const int count = checked_count(tensor, "all_reduce_sum");
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, tensor.data_ptr(), count, mpi_type(tensor.scalar_type()), MPI_SUM, comm_),
              "MPI_Allreduce");
  }

  at::Tensor all_gather(const at::Tensor& tensor, int64_t dim) override {
    const int count = checked_count(tensor, "all_gather");
    dim = detail::normalize_dim(dim, tensor.dim(), kBackend);
    std::vector<int64_t> stacked_shape = {size_};
    stacked_shape.insert(stacked_shape.end(), tensor.sizes().begin(), tensor.sizes().end());
    at::Tensor stacked = at::empty(stacked_shape, tensor.options());
    const MPI_Datatype type = mpi_type(tensor.scalar_type());
    check_mpi(MPI_Allgather(tensor.data_ptr(), count, type, stacked.data_ptr(), count, type, comm_), "MPI_Allgather");
    return detail::concat_gathered(stacked, dim);
  }

  void broadcast(at::Tensor& tensor, int root) override {
    const int count = checked_count(tensor, "broadcast");
    detail::check_root(root, size_, kBackend);
    check_mpi(MPI_Bcast(tensor.data_ptr(), count, mpi_type(tensor.scalar_type()), root, comm_), "MPI_Bcast");
  }

  void broadcast_idle(at::Tensor& tensor, int root) override {
    const int count = checked_count(tensor, "broadcast_idle");
    detail::check_root(root, size_, kBackend);
    MPI_Request request;
    check_mpi(MPI_Ibcast(tensor.data_ptr(), count, mpi_type(tensor.scalar_type()), root, comm_, &request),
              "MPI_Ibcast");
    wait_without_spinning(&request);
  }

  void barrier() override { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(int first_world_rank, int count) {
  int world_rank = 0, world_size = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &world_size), "MPI_Comm_size");
  SEED_CHECK(count >= 1 && first_world_rank >= 0 && first_world_rank + count <= world_size, kInvalidArgument)
      << "an MPI group of world ranks [" << first_world_rank << ", " << first_world_rank + count
      << ") does not fit a world of " << world_size << " ranks";
  if (world_rank < first_world_rank || world_rank >= first_world_rank + count) return nullptr;
  // MPI_Comm_create_group, not MPI_Comm_split: only the group's ranks take
  // part, so a rank outside it never waits on one inside that has stopped.
  MPI_Group world_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(MPI_COMM_WORLD, &world_group), "MPI_Comm_group");
  int range[1][3] = {{first_world_rank, first_world_rank + count - 1, 1}};
  const int included = MPI_Group_range_incl(world_group, 1, range, &group);
  MPI_Group_free(&world_group);
  check_mpi(included, "MPI_Group_range_incl");
  MPI_Comm comm = MPI_COMM_NULL;
  const int created = MPI_Comm_create_group(MPI_COMM_WORLD, group, kCreateGroupTag, &comm);
  MPI_Group_free(&group);
  check_mpi(created, "MPI_Comm_create_group");
  return std::make_unique<MpiCommunicator>(comm);
}

}  // namespace seed::parallel
