// ForwardGraphs: CausalLM's device forward replayed as CUDA graphs.
//
// A decode step of a small model on a GPU is a few hundred kernels whose
// launches cost more than their work; a captured graph launches them all
// at once. One graph per shape (key): the caller pads its batch to the
// shape (padded_batch.h) and buckets the key positions
// (graph_key_positions), so that a handful of graphs serve a whole run.
// A shape's first forward runs eagerly (warming up cuBLAS and the
// allocator on the graphs' stream), its second is captured, every later
// one copies the index data into the graph's static input and replays
// (CapturedShapes). Graphs share one memory pool; forwards through them
// are serialised on one stream, ordered after and before the caller's
// stream by events.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "models/padded_batch.h"

namespace seed::models {

class ForwardGraphs {
 public:
  // The shape and everything else a captured forward depends on: its
  // dimensions and the addresses of the tensors it writes (a KV pool that
  // moved makes a new key).
  using Key = std::vector<int64_t>;
  // The forward: from the index data on the device to its result. Captured
  // bodies must launch only device work (no reads back to the host).
  using Body = std::function<at::Tensor(const at::Tensor& index_on_device)>;
  // What the caller keeps of the body's result: a new tensor (the next
  // replay overwrites a graph's output), such as the rows it asked for.
  using Pick = std::function<at::Tensor(const at::Tensor& result)>;

  virtual ~ForwardGraphs() = default;
  // pick(body's result for `index`) (int64, on the host). Thread-safe.
  virtual at::Tensor run(const Key& key, const at::Tensor& index, const Body& body, const Pick& pick) = 0;
  // Graphs captured so far (tests and benchmarks read it).
  virtual int64_t captured() const = 0;
  // Forwards so far that did not replay a graph: each shape's first (run
  // eagerly) and second (captured). They cost many replays, so a forward
  // timed across one is no measure of the others. Thread-safe.
  virtual int64_t warm_ups() const = 0;
};

// Which shapes a ForwardGraphs holds graphs for, and what a shape's next
// forward does: its first runs eagerly, its second captures, later ones
// replay. Past `capacity` shapes the least recently used is forgotten, so
// that a run whose contexts cross into a new key bucket recaptures only
// the shapes it still uses, not every one. Not thread-safe.
class CapturedShapes {
 public:
  enum class Step { kEager, kCapture, kReplay };

  explicit CapturedShapes(size_t capacity);
  // What `key`'s next forward does; `key` becomes the most recently used.
  // A new key past capacity forgets the least recently used one and
  // returns it in `forgotten` (its graph is to be dropped).
  Step next(const ForwardGraphs::Key& key, std::optional<ForwardGraphs::Key>& forgotten);
  // `key`'s capture succeeded: its forwards replay from now on (one that
  // failed is captured again next time).
  void captured(const ForwardGraphs::Key& key);
  // kEager and kCapture steps so far (ForwardGraphs::warm_ups).
  int64_t warm_ups() const { return warm_ups_; }

 private:
  struct Shape {
    bool ran = false, has_graph = false;
    std::list<ForwardGraphs::Key>::iterator use;  // its place in uses_
  };
  const size_t capacity_;
  std::map<ForwardGraphs::Key, Shape> shapes_;
  std::list<ForwardGraphs::Key> uses_;  // most recently used first
  int64_t warm_ups_ = 0;
};

// Graphs on `device`; null where it is not a GPU or libtorch has no CUDA.
std::unique_ptr<ForwardGraphs> make_forward_graphs(const c10::Device& device);

// The shape a graph is captured for, for a plan of `batch` x `seq` rows
// needing `keys` key positions: B and S rounded up to powers of two, T by
// graph_key_positions with `key_step`; every row's logits out (the caller
// picks its own), so that a run's verification rounds share a handful of
// shapes. Unset where B*S passes kMaxGraphRows: such forwards (prompts) are
// compute-bound and run eagerly.
constexpr int64_t kMaxGraphRows = 256;
std::optional<PaddedShape> graph_shape(int64_t batch, int64_t seq, int64_t keys_needed_at_seq, int64_t key_step);

// The key positions a graph is captured for when a batch needs `keys`: a
// multiple of a quarter of the power of two below, and of `step`, so that
// a context growing one token a step is recaptured every 25% of its length
// (or every `step`) and at most that much padding is attended. The step is
// the padding that costs nothing: attention over gathered keys attends
// every padded position (kGatheredKeyStep); paged attention reads only a
// sequence's own keys, and padding costs it whole splits of keys
// (kPagedAttentionSplitKeys), each a thread block that finds nothing to read.
constexpr int64_t kGatheredKeyStep = 64;
int64_t graph_key_positions(int64_t keys, int64_t step);

}  // namespace seed::models
