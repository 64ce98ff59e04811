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

// Shapes past this many forget the least recently used. A run uses a
// handful at a time, but each graph keeps its logits output ([B*S, vocab]
// floats, 32 MB for 64 rows of a 128K vocabulary) and a KV pool that grew
// leaves its graphs behind.
constexpr size_t kMaxGraphs = 64;

class CudaForwardGraphs final : public ForwardGraphs {
 public:
  explicit CudaForwardGraphs(const c10::Device& device)
      : device_(device),
        stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())),
        pool_(at::cuda::graph_pool_handle()),
        shapes_(kMaxGraphs) {}

  at::Tensor run(const Key& key, const at::Tensor& index, const Body& body, const Pick& pick) override {
    std::lock_guard<std::mutex> lock(mutex_);
    c10::cuda::CUDAGuard on_device(device_);
    const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(device_.index());
    at::cuda::CUDAEvent inputs_ready;
    inputs_ready.record(caller);
    inputs_ready.block(stream_);
    std::optional<Key> forgotten;
    const CapturedShapes::Step step = shapes_.next(key, forgotten);
    if (forgotten) graphs_.erase(*forgotten);
    at::Tensor result;
    {
      c10::cuda::CUDAStreamGuard on_stream(stream_);
      if (step == CapturedShapes::Step::kEager) {
        result = pick(body(index.to(device_)));
      } else {
        if (step == CapturedShapes::Step::kCapture) {
          graphs_[key] = capture(index, body);
          shapes_.captured(key);
        }
        Graph& graph = graphs_.at(key);
        graph.input.copy_(index);
        graph.graph->replay();
        result = pick(graph.output);
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
    return static_cast<int64_t>(graphs_.size());
  }

  int64_t warm_ups() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return shapes_.warm_ups();
  }

 private:
  struct Graph {
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    at::Tensor input, output;  // static: the graph reads and writes these addresses
  };

  Graph capture(const at::Tensor& index, const Body& body) {
    Graph captured;
    captured.input = torch::empty(index.sizes(), index.options().device(device_));
    captured.input.copy_(index);
    captured.graph = std::make_unique<at::cuda::CUDAGraph>();
    // Thread-local: drafters on other threads keep launching work meanwhile.
    captured.graph->capture_begin(pool_, cudaStreamCaptureModeThreadLocal);
    try {
      captured.output = body(captured.input);
    } catch (...) {
      try {
        captured.graph->capture_end();
      } catch (...) {
      }
      throw;
    }
    captured.graph->capture_end();
    return captured;
  }

  const c10::Device device_;
  const c10::cuda::CUDAStream stream_;
  const decltype(at::cuda::graph_pool_handle()) pool_;
  mutable std::mutex mutex_;
  CapturedShapes shapes_;
  std::map<Key, Graph> graphs_;
};

}  // namespace

std::unique_ptr<ForwardGraphs> make_forward_graphs(const c10::Device& device) {
  if (!device.is_cuda()) return nullptr;
  return std::make_unique<CudaForwardGraphs>(device);
}

}  // namespace seed::models
