// The NCCL backend's entry points in a build without NCCL (SEED_WITH_NCCL off).
#include "models/base/error.h"
#include "parallel/nccl_communicator.h"

namespace seed::parallel {

bool nccl_backend_built() { return false; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator&, int) {
  SEED_FAIL(kInvalidArgument) << "this seed was built without the NCCL backend; reconfigure with "
                                 "-DSEED_WITH_NCCL=ON on a machine with the CUDA toolkit and NCCL";
}

}  // namespace seed::parallel
