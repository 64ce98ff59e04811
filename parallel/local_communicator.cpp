#include "parallel/communicator.h"

#include <cstdint>

#include "models/base/error.h"

namespace seed::parallel {

namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* backend() const override { return "local"; }
  void all_reduce_sum(at::Tensor&) override {}
  // The tensor itself: a gather over one rank copies nothing.
  at::Tensor all_gather(const at::Tensor& tensor, int64_t) override { return tensor; }
  void broadcast(at::Tensor&, int root) override {
    SEED_CHECK(root == 0, kInvalidArgument) << "broadcast root " << root << " is not a rank of a group of 1";
  }
  void barrier() override {}
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() { return std::make_unique<LocalCommunicator>(); }

}  // namespace seed::parallel
