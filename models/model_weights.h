// LlamaWeights: the parameters of a Llama-family decoder, and their files.
//
// In memory, q/k/v are fused into one [q + 2 kv, hidden] projection (one
// GEMM instead of three; its outputs are used as views). gate and up stay
// apart: SwiGLU reads them element-wise, and halves of a fused output would
// be strided, which made silu and mul 3x slower (measured). On disk the
// weights keep Hugging Face's names and shapes, so
// load and save map one to one onto model folders users download. Under
// tensor parallelism the struct holds one rank's shard (tp_shard.h): the
// same fields with fewer rows or columns.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "models/cpu_kernel.h"
#include "models/model_config.h"
#include "models/safetensors.h"
#include "models/tp_shard.h"

namespace seed::models {

// y = x W^T + b over rows x [M, in] -> [M, out].
struct Linear {
  // [out, in], the parameter (Hugging Face layout): float32, or on CPU for
  // inference bfloat16/float16 (LoadOptions::weights_dtype). Undefined when
  // only the packed copy is held (prepare_for_inference without keeping it).
  at::Tensor weight;
  at::Tensor bias;    // [out] float32, or undefined
  // CPU inference only (prepare_for_inference): the weight packed for
  // panel_gemm as [panels, panel_rows(kernel, dtype, in), panel_width(kernel)]
  // in the weight's dtype (pack_panels), and the kernel that multiplies it.
  at::Tensor panels;
  CpuKernel kernel = CpuKernel::kPortable;
  int64_t packed_out = 0, packed_in = 0;  // the parameter's [out, in], set when packed

  // Whether it holds a matrix (the parameter or its packed copy).
  bool defined() const;
  // The parameter's shape and dtype, whether it is held or only packed.
  int64_t out_features() const;
  int64_t in_features() const;
  c10::ScalarType dtype() const;
  // The parameter: `weight`, or a copy unpacked from `panels` when only they
  // are held (no autograd then).
  at::Tensor unpacked() const;
  // Rows `rows` [n] (int64, CPU) of the parameter, [n, in] in its dtype.
  at::Tensor unpacked_rows(const at::Tensor& rows) const;

  at::Tensor operator()(const at::Tensor& x) const;
  // y [rows, out] = x [rows, in] W^T + b on raw float32 rows (the CPU
  // forward's buffers). REQUIRES prepare_for_inference on a CPU weight.
  void apply(const float* x, int64_t rows, float* y) const;
  // CPU: packs the weight for panel_gemm, which beats every BLAS call at the
  // 1-16 rows decoding and verification multiply and reads half-size weights
  // as they are. With `keep_parameter` the packed copy sits beside the
  // parameter (training reads the parameter; call again after it changes);
  // without, it replaces it, so the weights are held once. Packed already
  // for `kernel` with the parameter dropped: nothing to do.
  // REQUIRES cpu_kernel_supported(kernel).
  void prepare_for_inference(CpuKernel kernel, bool keep_parameter = true);
};

struct DecoderLayerWeights {
  at::Tensor input_norm;  // [hidden]
  Linear qkv;             // [q + 2 kv, hidden], bias for Qwen2
  at::Tensor q_norm;      // [head_dim], applied to every query head (Qwen3; else undefined)
  at::Tensor k_norm;      // [head_dim], applied to every key head (Qwen3; else undefined)
  Linear o;               // [hidden, q]
  at::Tensor post_norm;   // [hidden]
  Linear gate;            // [intermediate, hidden]
  Linear up;              // [intermediate, hidden]
  Linear down;            // [hidden, intermediate]
};

struct LlamaWeights {
  at::Tensor embed;  // [vocab, hidden]; undefined when tied and only the LM head's packed copy is held
  std::vector<DecoderLayerWeights> layers;
  at::Tensor norm;   // [hidden]
  Linear lm_head;    // [vocab, hidden]; shares `embed` when tied; none (!defined()) without an LM head
  // The token each row of the LM head scores ([draft_vocab_size] int64,
  // ascending, on the weights' device) when it scores a part of the
  // vocabulary (ModelConfig::draft_vocab_size); undefined otherwise.
  at::Tensor head_tokens;

  // The kernel prepare_for_inference packs for (CausalLM's constructor
  // calls it); LoadOptions::cpu_kernel sets it.
  CpuKernel cpu_kernel = best_cpu_kernel();
  bool fused_cpu_layers = true;  // LoadOptions::fused_cpu_layers
  bool cuda_graphs = true;       // LoadOptions::cuda_graphs
  bool paged_attention = true;   // LoadOptions::paged_attention
  bool keep_parameters = true;   // LoadOptions::keep_parameters

  void prepare_for_inference();
  // Converts the matrices (embedding, projections, LM head; tied stays
  // tied) to `dtype`. Call prepare_for_inference after. REQUIRES the
  // parameters held.
  void convert_matrices(WeightDtype dtype);
  // The embedding rows of `tokens` [n] (int64, on the weights' device):
  // [n, hidden] in the embedding's dtype, with autograd when it is held.
  at::Tensor lookup(const at::Tensor& tokens) const;
  int64_t parameter_bytes() const;  // bytes of the parameters (tied once), held or only packed
  // The bytes a decoded token reads: the parameters, less an untied
  // embedding (a token looks up one row of it).
  int64_t bytes_read_per_token() const;
  // One tensor per distinct parameter. REQUIRES keep_parameters (training).
  std::vector<at::Tensor> parameters() const;
};

// Reads every tensor of `config` from `checkpoint`, checking each shape,
// keeps the rows/columns of `shard` (TpShard::whole(config): all of them)
// and converts to `options` (dtype, device). On CPU the matrices (embedding,
// projections, LM head) go to `matrix_dtype` instead, or when it is unset
// stay bfloat16/float16 if stored so. Tensors are read, cut and dropped one
// at a time, so a rank holds at most its shard plus one whole tensor.
// `pack_for` (CPU): each matrix is packed for that kernel as soon as it is
// read and its parameter dropped (keep_parameters false), the embedding
// first, so loading never holds the weights twice.
// kNotFound/kCorruption name the tensor.
LlamaWeights load_weights(const Checkpoint& checkpoint, const ModelConfig& config,
                          at::TensorOptions options, const TpShard& shard,
                          std::optional<WeightDtype> matrix_dtype = std::nullopt,
                          std::optional<CpuKernel> pack_for = std::nullopt);

// What load_weights will hold, from the config and the headers alone: the
// dtype it keeps the matrices in (from the dtype `checkpoint` stores the
// embedding in), and the bytes of `shard`'s weights held in `matrix_dtype`
// (what a load needs on its device).
c10::ScalarType held_matrix_dtype(const Checkpoint& checkpoint, at::TensorOptions options,
                                  std::optional<WeightDtype> matrix_dtype = std::nullopt);
int64_t held_weight_bytes(const ModelConfig& config, const TpShard& shard, c10::ScalarType matrix_dtype);

// The whole model's weights `full` cut down to `shard`, on `options`: a
// tensor-parallel rank's share of weights built in memory (random ones).
LlamaWeights shard_weights(const LlamaWeights& full, const ModelConfig& config, const TpShard& shard,
                           at::TensorOptions options);

// The torch dtype of a weight dtype, and back (kInvalidArgument for a dtype
// the CPU kernels do not read).
c10::ScalarType scalar_type_of(WeightDtype dtype);
WeightDtype weight_dtype_of(c10::ScalarType type);

// Random weights, N(0, 0.02) projections and norms near 1, deterministic
// in `seed`: for tests and as the trainer's initialisation.
LlamaWeights random_weights(const ModelConfig& config, uint64_t seed, at::TensorOptions options);

// Keeps the LM head's rows of `tokens` alone (distinct ids of `config`'s
// vocabulary, ascending; int64 on the CPU): the head then scores those
// tokens only, and `config` says so (draft_vocab_size; a tied embedding is
// untied, keeping every row). The caller builds its CausalLM from them
// after. kInvalidArgument for tokens out of order or range, or a head that
// scores a part of the vocabulary already.
void keep_head_rows(LlamaWeights& weights, ModelConfig& config, const at::Tensor& tokens);

// The weights under Hugging Face names and shapes, as CPU tensors in
// `dtype`, or each in the dtype it is held in when unset.
NamedTensors to_named_tensors(const LlamaWeights& weights, const ModelConfig& config,
                              std::optional<c10::ScalarType> dtype);

}  // namespace seed::models
