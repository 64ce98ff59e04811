#include "parallel/nccl_communicator.h"

#include <ATen/ATen.h>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>

#include "models/base/error.h"
#include "parallel/collective_layout.h"

namespace seed::parallel {

namespace {

constexpr const char* kBackend = "nccl";
// The legacy default stream: libtorch's current stream unless a caller
// changes it (nccl_communicator.h).
const cudaStream_t kStream = nullptr;

void check_cuda(cudaError_t code, const char* call) {
  SEED_CHECK(code == cudaSuccess, kInternal) << call << " failed: " << cudaGetErrorString(code);
}

void check_nccl(ncclResult_t code, const char* call) {
  SEED_CHECK(code == ncclSuccess, kInternal) << call << " failed: " << ncclGetErrorString(code);
}

ncclDataType_t nccl_type(c10::ScalarType type) {
  switch (type) {
    case at::kFloat: return ncclFloat32;
    case at::kHalf: return ncclFloat16;
    case at::kBFloat16: return ncclBfloat16;
    case at::kDouble: return ncclFloat64;
    case at::kInt: return ncclInt32;
    case at::kLong: return ncclInt64;
    case at::kByte: return ncclUint8;
    default:
      SEED_FAIL(kInvalidArgument) << "the nccl communicator does not support dtype " << c10::toString(type)
                                  << "; use float32, float16, bfloat16, float64, int32, int64 or uint8";
  }
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, int device, int rank, int size, float* barrier_word)
      : comm_(comm), device_(device), rank_(rank), size_(size), barrier_word_(barrier_word) {}
  ~NcclCommunicator() override {
    ncclCommDestroy(comm_);
    cudaFree(barrier_word_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return kBackend; }

  void all_reduce_sum(at::Tensor& tensor) override {
    check(tensor, "all_reduce_sum");
    check_nccl(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), nccl_type(tensor.scalar_type()),
                             ncclSum, comm_, kStream),
               "ncclAllReduce");
  }

  at::Tensor all_gather(const at::Tensor& tensor, int64_t dim) override {
    check(tensor, "all_gather");
    dim = detail::normalize_dim(dim, tensor.dim(), kBackend);
    std::vector<int64_t> stacked_shape = {size_};
    stacked_shape.insert(stacked_shape.end(), tensor.sizes().begin(), tensor.sizes().end());
    at::Tensor stacked = at::empty(stacked_shape, tensor.options());
    check_nccl(ncclAllGather(tensor.data_ptr(), stacked.data_ptr(), tensor.numel(), nccl_type(tensor.scalar_type()),
                             comm_, kStream),
               "ncclAllGather");
    return detail::concat_gathered(stacked, dim);
  }

  void broadcast(at::Tensor& tensor, int root) override {
    check(tensor, "broadcast");
    detail::check_root(root, size_, kBackend);
    check_nccl(ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), nccl_type(tensor.scalar_type()),
                             root, comm_, kStream),
               "ncclBroadcast");
  }

  // An all-reduce of one word, waited for on the host.
  void barrier() override {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_nccl(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclFloat32, ncclSum, comm_, kStream), "ncclAllReduce");
    check_cuda(cudaStreamSynchronize(kStream), "cudaStreamSynchronize");
  }

 private:
  void check(const at::Tensor& tensor, const char* op) const {
    detail::check_tensor(tensor, kBackend, op);
    SEED_CHECK(tensor.is_cuda() && tensor.get_device() == device_, kInvalidArgument)
        << "nccl " << op << " needs CUDA tensors on cuda:" << device_ << ", got one on " << tensor.device()
        << "; CPU tensors use the mpi backend";
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  }

  ncclComm_t comm_;
  int device_;
  int rank_;
  int size_;
  float* barrier_word_;  // one float on `device_`, owned
};

}  // namespace

bool nccl_backend_built() { return true; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int device) {
  int devices = 0;
  const cudaError_t counted = cudaGetDeviceCount(&devices);
  SEED_CHECK(counted == cudaSuccess && device >= 0 && device < devices, kInvalidArgument)
      << "the nccl communicator needs CUDA device " << device << ", but "
      << (counted == cudaSuccess ? std::to_string(devices) + " devices are visible"
                                 : std::string("CUDA reports: ") + cudaGetErrorString(counted));
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  at::Tensor id_bytes = at::empty({static_cast<int64_t>(sizeof(id))}, at::kByte);
  std::memcpy(id_bytes.data_ptr(), &id, sizeof(id));
  bootstrap.broadcast(id_bytes, 0);
  std::memcpy(&id, id_bytes.data_ptr(), sizeof(id));

  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank");
  float* barrier_word = nullptr;
  cudaError_t allocated = cudaMalloc(&barrier_word, sizeof(float));
  if (allocated == cudaSuccess) allocated = cudaMemset(barrier_word, 0, sizeof(float));
  if (allocated != cudaSuccess) {
    ncclCommDestroy(comm);
    cudaFree(barrier_word);
  }
  check_cuda(allocated, "cudaMalloc");
  return std::make_unique<NcclCommunicator>(comm, device, bootstrap.rank(), bootstrap.size(), barrier_word);
}

}  // namespace seed::parallel
