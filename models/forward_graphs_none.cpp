// make_forward_graphs for a libtorch without CUDA: forwards run eagerly.
#include "models/forward_graphs.h"

namespace seed::models {

std::unique_ptr<ForwardGraphs> make_forward_graphs(const c10::Device&) { return nullptr; }

}  // namespace seed::models
