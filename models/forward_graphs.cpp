#include "models/forward_graphs.h"

#include <algorithm>

namespace seed::models {

namespace {

int64_t power_of_two_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace

CapturedShapes::CapturedShapes(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {}

CapturedShapes::Step CapturedShapes::next(const ForwardGraphs::Key& key,
                                          std::optional<ForwardGraphs::Key>& forgotten) {
  forgotten.reset();
  auto it = shapes_.find(key);
  if (it == shapes_.end()) {
    if (shapes_.size() >= capacity_) {
      forgotten = std::move(uses_.back());
      uses_.pop_back();
      shapes_.erase(*forgotten);
    }
    uses_.push_front(key);
    it = shapes_.emplace(key, Shape{false, false, uses_.begin()}).first;
  } else {
    uses_.splice(uses_.begin(), uses_, it->second.use);
  }
  Shape& shape = it->second;
  if (shape.has_graph) return Step::kReplay;
  ++warm_ups_;
  if (!shape.ran) {
    shape.ran = true;
    return Step::kEager;
  }
  return Step::kCapture;
}

void CapturedShapes::captured(const ForwardGraphs::Key& key) { shapes_.at(key).has_graph = true; }

std::optional<PaddedShape> graph_shape(int64_t batch, int64_t seq, int64_t keys_needed_at_seq, int64_t key_step) {
  const int64_t B = power_of_two_at_least(batch), S = power_of_two_at_least(seq);
  if (B * S > kMaxGraphRows) return std::nullopt;
  return PaddedShape{B, S, graph_key_positions(keys_needed_at_seq + S - seq, key_step), /*every_row=*/true};
}

int64_t graph_key_positions(int64_t keys, int64_t step) {
  int64_t power = 1;
  while (power * 2 <= keys) power *= 2;
  const int64_t multiple = std::max(step, power / 4);
  return (keys + multiple - 1) / multiple * multiple;
}

}  // namespace seed::models
