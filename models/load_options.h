// LoadOptions: how CausalLM::load and CausalLM::random build a model: the
// device, the tensor-parallel group, the weights' dtype, and the CPU and
// CUDA paths its forwards take. A plain aggregate, copied by value; the
// group it names is borrowed.
#pragma once

#include <optional>
#include <string>

#include "models/cpu_kernel.h"
#include "models/tp_collectives.h"

namespace seed::models {

struct LoadOptions {
  // Where the model computes. The launcher decides this (under mpirun each
  // rank's GPU: parallel::rank_device), never the library: "cpu" or "cuda:N".
  std::string device = "cpu";
  // The tensor-parallel group of this rank: the model loads only the rank's
  // shard. Borrowed: must outlive the model. Null, or a group of one rank:
  // the whole model.
  TpCollectives* tp_group = nullptr;
  // The dtype of the weights. Unset keeps a folder's bfloat16/float16 as
  // stored (config.json's torch_dtype) and widens anything else to float32;
  // half-size weights halve the bytes a decoded token reads.
  // CPU: the matrices (embedding, projections, LM head) keep this dtype;
  // products and sums are float32 either way.
  // CUDA: weights, activations and the KV cache take it; norms, softmax and
  // the logits are computed in float32.
  std::optional<WeightDtype> weights_dtype = std::nullopt;
  // CPU: the matrix kernel (cpu_kernel.h); the best this CPU runs by default.
  CpuKernel cpu_kernel = best_cpu_kernel();
  // CPU: forward() runs its layers as plain loops (causal_lm_cpu.cpp);
  // false runs them as ATen ops, the path CUDA takes (tests compare the two).
  bool fused_cpu_layers = true;
  // CPU: keep each matrix's [out, in] parameter beside its packed copy, as
  // training needs (weights().parameters(), gradients through forward_full).
  // false holds the weights once: each matrix is packed as it is read and
  // replaces its parameter; forward_full and save unpack what they read.
  bool keep_parameters = false;
  // CUDA: forward() replays CUDA graphs captured per shape
  // (forward_graphs.h); false runs every forward eagerly (tests compare
  // the two). Tensor-parallel groups and soft prompts always run eagerly.
  bool cuda_graphs = true;
  // CUDA: forwards of few rows a sequence (decode steps, verification)
  // read the KV cache in place (paged_attention.h); false gathers each
  // sequence's keys beside a mask, as prompts do (tests and benchmarks
  // compare the two).
  bool paged_attention = true;
};

// Every field equal: the same model would load. A new field joins this.
inline bool operator==(const LoadOptions& a, const LoadOptions& b) {
  return a.device == b.device && a.tp_group == b.tp_group && a.weights_dtype == b.weights_dtype &&
         a.cpu_kernel == b.cpu_kernel && a.fused_cpu_layers == b.fused_cpu_layers &&
         a.keep_parameters == b.keep_parameters && a.cuda_graphs == b.cuda_graphs &&
         a.paged_attention == b.paged_attention;
}

}  // namespace seed::models
