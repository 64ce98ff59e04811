// A device stream of one's own, for a model that runs on its own thread
// beside other models on the same device (drafters beside the target).
//
// Kernels queued on one CUDA stream run one after another, whichever thread
// queues them; on different streams they may overlap. Every thread starts on
// the device's default stream, so drafters that share a GPU with the target
// would otherwise wait behind each other's kernels. Nothing changes on the
// CPU. Device-agnostic (c10's stream interface), so it builds against a CPU
// libtorch too.
//
// Safe only where the threads exchange host data (tokens, logits copied to
// the host, hidden states as host vectors): a tensor handed from one stream
// to another would need the caller to order the two.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>

#include <optional>

namespace seed::models {

class DeviceStream {
 public:
  // A stream from the device's pool (CUDA), after waiting for the work
  // queued so far on the calling thread's current stream; none on the CPU.
  explicit DeviceStream(const c10::Device& device);

  // Makes the stream current on the calling thread for the guard's life.
  class Scope {
   public:
    explicit Scope(const DeviceStream& stream) {
      if (stream.stream_) guard_.emplace(*stream.stream_);
    }

   private:
    std::optional<c10::StreamGuard> guard_;
  };

 private:
  std::optional<c10::Stream> stream_;
};

}  // namespace seed::models
