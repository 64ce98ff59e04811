// make_forward_graphs for a libtorch with CUDA (at::cuda::CUDAGraph).
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <map>
#include <mutex>

#include "models/forward_graphs.h"

namespace seed::models {
namespace {

// Shapes past this many are dropped all at once. A run uses a handful at a
// time, but each graph keeps its logits output ([B*S, vocab] floats, 32 MB
// for 64 rows of a 128K vocabulary) and a KV pool that grew leaves its
// graphs behind.
constexpr size_t kMaxGraphs = 64;

class CudaForwardGraphs final : public ForwardGraphs {
 public:
  explicit CudaForwardGraphs(const c10::Device& device)
      : device_(device),
        stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())),
        pool_(at::cuda::graph_pool_handle()) {}

  at::Tensor run(const Key& key, const at::Tensor& index, const Body& body) override {
    std::lock_guard<std::mutex> lock(mutex_);
    c10::cuda::CUDAGuard on_device(device_);
    const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(device_.index());
    at::cuda::CUDAEvent inputs_ready;
    inputs_ready.record(caller);
    inputs_ready.block(stream_);
    if (entries_.size() >= kMaxGraphs && entries_.find(key) == entries_.end()) entries_.clear();
    at::Tensor result;
    {
      c10::cuda::CUDAStreamGuard on_stream(stream_);
      Entry& entry = entries_[key];
      if (entry.runs++ == 0) {
        ++warm_ups_;
        result = body(index.to(device_));
      } else {
        if (!entry.graph) {
          ++warm_ups_;
          capture(entry, index, body);
        }
        entry.input.copy_(index);
        entry.graph->replay();
        result = entry.output.clone();
      }
    }
    at::cuda::CUDAEvent done;
    done.record(stream_);
    done.block(caller);
    result.record_stream(caller);  // freed by the caller: not reused before its stream is past it
    return result;
  }

  int64_t captured() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    int64_t n = 0;
    for (const auto& [key, entry] : entries_) n += entry.graph != nullptr;
    return n;
  }

  int64_t warm_ups() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return warm_ups_;
  }

 private:
  struct Entry {
    int64_t runs = 0;
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    at::Tensor input, output;  // static: the graph reads and writes these addresses
  };

  void capture(Entry& entry, const at::Tensor& index, const Body& body) {
    entry.input = torch::empty(index.sizes(), index.options().device(device_));
    entry.input.copy_(index);
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    // Thread-local: drafters on other threads keep launching work meanwhile.
    graph->capture_begin(pool_, cudaStreamCaptureModeThreadLocal);
    try {
      entry.output = body(entry.input);
    } catch (...) {
      try {
        graph->capture_end();
      } catch (...) {
      }
      throw;
    }
    graph->capture_end();
    entry.graph = std::move(graph);
  }

  const c10::Device device_;
  const c10::cuda::CUDAStream stream_;
  const decltype(at::cuda::graph_pool_handle()) pool_;
  mutable std::mutex mutex_;
  std::map<Key, Entry> entries_;
  int64_t warm_ups_ = 0;
};

}  // namespace

std::unique_ptr<ForwardGraphs> make_forward_graphs(const c10::Device& device) {
  if (!device.is_cuda()) return nullptr;
  return std::make_unique<CudaForwardGraphs>(device);
}

}  // namespace seed::models
