#include "models/device_stream.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace seed::models {

DeviceStream::DeviceStream(const c10::Device& device) {
  if (!device.is_cuda()) return;
  const c10::impl::DeviceGuardImplInterface* impl = c10::impl::getDeviceGuardImpl(device.type());
  // What the owner queued on the thread's current stream before (filling a
  // new KV cache, say) must be done before its own stream touches it.
  impl->getStream(device).synchronize();
  stream_ = impl->getStreamFromGlobalPool(device);
}

}  // namespace seed::models
