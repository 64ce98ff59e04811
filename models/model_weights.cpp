#include "models/model_weights.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "models/base/error.h"
#include "models/lazy_zeros.h"
#include "models/panel_gemm.h"

namespace seed::models {

namespace {

std::string layer_prefix(int64_t layer) { return "model.layers." + std::to_string(layer) + "."; }

constexpr double kInitStd = 0.02;  // GPT-2/Llama initializer range
constexpr int64_t kMinFmasPerThread = int64_t{1} << 16;  // ~10 us of memory-bound panel_gemm

// What is wrong with `tokens` as the tokens of an LM head's rows over a
// vocabulary of `vocab` (int64, distinct, ascending, in range), or "".
std::string head_tokens_fault(const at::Tensor& tokens, int64_t vocab) {
  if (tokens.dim() != 1 || tokens.numel() == 0) return "must be a non-empty list of token ids";
  const at::Tensor ids = tokens.to(torch::kCPU, torch::kLong).contiguous();
  const int64_t* id = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (id[i] < 0 || id[i] >= vocab) {
      return "names token " + std::to_string(id[i]) + ", outside the vocabulary of " + std::to_string(vocab);
    }
    if (i > 0 && id[i] <= id[i - 1]) {
      return "names token " + std::to_string(id[i]) + " after " + std::to_string(id[i - 1]) +
             ": the tokens must be distinct and ascending";
    }
  }
  return "";
}

}  // namespace

WeightDtype weight_dtype_of(c10::ScalarType type) {
  switch (type) {
    case torch::kFloat:
      return WeightDtype::kFloat32;
    case torch::kBFloat16:
      return WeightDtype::kBFloat16;
    case torch::kHalf:
      return WeightDtype::kFloat16;
    default:
      SEED_FAIL(kInvalidArgument) << "no CPU kernel for " << c10::toString(type) << " weights";
  }
}

c10::ScalarType scalar_type_of(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::kFloat32:
      return torch::kFloat;
    case WeightDtype::kBFloat16:
      return torch::kBFloat16;
    case WeightDtype::kFloat16:
      return torch::kHalf;
  }
  return torch::kFloat;
}

int64_t Linear::out_features() const { return weight.defined() ? weight.size(0) : packed_out; }
int64_t Linear::in_features() const { return weight.defined() ? weight.size(1) : packed_in; }
c10::ScalarType Linear::dtype() const { return weight.defined() ? weight.scalar_type() : panels.scalar_type(); }

at::Tensor Linear::unpacked() const {
  if (weight.defined()) return weight;
  return unpacked_rows(torch::arange(packed_out, torch::TensorOptions().dtype(torch::kLong)));
}

at::Tensor Linear::unpacked_rows(const at::Tensor& rows) const {
  if (weight.defined()) return weight.index_select(0, rows);
  const at::Tensor index = rows.to(torch::kCPU, torch::kLong).contiguous();
  at::Tensor out = torch::empty({index.size(0), packed_in}, panels.options());
  unpack_panel_rows(kernel, weight_dtype_of(panels.scalar_type()), panels.data_ptr(), packed_in,
                    index.data_ptr<int64_t>(), index.size(0), out.data_ptr());
  return out;
}

at::Tensor Linear::operator()(const at::Tensor& x) const {
  if (!panels.defined()) return torch::linear(x, weight, bias);
  const at::Tensor input = x.contiguous();
  at::Tensor y = torch::empty({x.size(0), out_features()}, x.options());
  apply(input.data_ptr<float>(), x.size(0), y.data_ptr<float>());
  return y;
}

void Linear::apply(const float* x, int64_t rows, float* y) const {
  PanelGemmArgs args;
  args.x = x;
  args.panels = panels.data_ptr();
  args.dtype = weight_dtype_of(panels.scalar_type());
  args.bias = bias.defined() ? bias.data_ptr<float>() : nullptr;
  args.y = y;
  args.M = rows;
  args.K = in_features();
  args.N = out_features();
  // Split panels over the intra-op threads, each thread doing at least
  // kMinFmasPerThread of work (below that, waking threads costs more).
  const int64_t fmas_per_panel = rows * args.K * panels.size(2);
  const int64_t grain = std::max<int64_t>(1, kMinFmasPerThread / fmas_per_panel);
  at::parallel_for(0, panels.size(0), grain, [&](int64_t begin, int64_t end) {
    PanelGemmArgs part = args;
    part.panel_begin = begin;
    part.panel_end = end;
    panel_gemm(kernel, part);
  });
}

bool Linear::defined() const { return weight.defined() || panels.defined(); }

void Linear::prepare_for_inference(CpuKernel cpu_kernel, bool keep_parameter) {
  if (!defined()) return;
  if (!weight.defined()) {  // held only packed
    if (cpu_kernel == kernel) return;
    weight = unpacked();
  }
  panels = at::Tensor();
  kernel = cpu_kernel;
  if (!weight.is_cpu()) return;
  const at::Tensor w = weight.detach().contiguous();
  weight_dtype_of(w.scalar_type());  // a dtype the kernels read
  const int64_t out = w.size(0), in = w.size(1);
  const int64_t width = panel_width(kernel);
  const WeightDtype dtype = weight_dtype_of(w.scalar_type());
  panels = lazy_zeros({(out + width - 1) / width, panel_rows(kernel, dtype, in), width}, w.options(), Pages::kHuge);
  // Each panel holds `width` rows of w, so the intra-op threads pack
  // ranges of panels side by side: a model's load is mostly this.
  const int64_t bytes = w.element_size();
  const int64_t panel_bytes = panels.size(1) * width * bytes;
  const auto* rows = static_cast<const char*>(w.data_ptr());
  auto* packed = static_cast<char*>(panels.data_ptr());
  at::parallel_for(0, panels.size(0), 1, [&](int64_t begin, int64_t end) {
    const int64_t first = begin * width, last = std::min(out, end * width);
    pack_panels(kernel, dtype, rows + first * in * bytes, last - first, in, packed + begin * panel_bytes);
  });
  packed_out = out;
  packed_in = in;
  if (!keep_parameter) weight = at::Tensor();
}

void LlamaWeights::prepare_for_inference() {
  for (auto& layer : layers) {
    for (Linear* linear : {&layer.qkv, &layer.o, &layer.gate, &layer.up, &layer.down}) {
      linear->prepare_for_inference(cpu_kernel, keep_parameters);
    }
  }
  const bool tied = embed.defined() && lm_head.weight.is_same(embed);
  lm_head.prepare_for_inference(cpu_kernel, keep_parameters);
  // A tied embedding is then looked up in the LM head's packed copy.
  if (tied && !lm_head.weight.defined()) embed = at::Tensor();
}

at::Tensor LlamaWeights::lookup(const at::Tensor& tokens) const {
  return embed.defined() ? embed.index_select(0, tokens) : lm_head.unpacked_rows(tokens);
}

void LlamaWeights::convert_matrices(WeightDtype dtype) {
  SEED_CHECK(embed.defined() && (lm_head.weight.defined() || !lm_head.defined()), kInvalidArgument)
      << "convert_matrices needs the parameters; these weights are held only packed (keep_parameters)";
  const c10::ScalarType type = scalar_type_of(dtype);
  const bool tied = lm_head.weight.is_same(embed);
  embed = embed.to(type);
  for (auto& layer : layers) {
    for (Linear* linear : {&layer.qkv, &layer.o, &layer.gate, &layer.up, &layer.down}) {
      linear->weight = linear->weight.to(type);
    }
  }
  if (lm_head.defined()) lm_head.weight = tied ? embed : lm_head.weight.to(type);
}

int64_t LlamaWeights::parameter_bytes() const {
  const auto matrix_bytes = [](const Linear& l) {
    return l.out_features() * l.in_features() * static_cast<int64_t>(c10::elementSize(l.dtype())) +
           (l.bias.defined() ? static_cast<int64_t>(l.bias.nbytes()) : 0);
  };
  int64_t bytes = (embed.defined() ? embed.nbytes() : 0) + norm.nbytes();
  for (const auto& layer : layers) {
    bytes += layer.input_norm.nbytes() + layer.post_norm.nbytes();
    for (const Linear* linear : {&layer.qkv, &layer.o, &layer.gate, &layer.up, &layer.down}) {
      bytes += matrix_bytes(*linear);
    }
  }
  if (lm_head.defined() && (!embed.defined() || !lm_head.weight.is_same(embed))) bytes += matrix_bytes(lm_head);
  return bytes;
}

int64_t LlamaWeights::bytes_read_per_token() const {
  const bool untied = embed.defined() && !(lm_head.defined() && lm_head.weight.is_same(embed));
  return parameter_bytes() - (untied ? static_cast<int64_t>(embed.nbytes()) : 0);
}

std::vector<at::Tensor> LlamaWeights::parameters() const {
  SEED_CHECK(keep_parameters && embed.defined(), kInvalidArgument)
      << "the parameters were dropped for their packed copy; load with keep_parameters to train";
  std::vector<at::Tensor> out = {embed};
  for (const auto& layer : layers) {
    out.insert(out.end(), {layer.input_norm, layer.qkv.weight, layer.o.weight, layer.post_norm,
                           layer.gate.weight, layer.up.weight, layer.down.weight});
    if (layer.qkv.bias.defined()) out.push_back(layer.qkv.bias);
    if (layer.q_norm.defined()) out.insert(out.end(), {layer.q_norm, layer.k_norm});
  }
  out.push_back(norm);
  if (lm_head.defined() && !lm_head.weight.is_same(embed)) out.push_back(lm_head.weight);
  return out;
}

namespace {

// A whole tensor of the model by Hugging Face name, checked against
// `shape`; `borrowed`: it may be the checkpoint's own bytes
// (Checkpoint::borrow), as it is used up before the checkpoint closes.
using FullTensorReader =
    std::function<at::Tensor(const std::string& name, const std::vector<int64_t>& shape, bool borrowed)>;

// The dtype a matrix stored as `stored` keeps on CPU: `wanted`, or else
// half-size as stored, or else float32.
c10::ScalarType cpu_matrix_dtype(c10::ScalarType stored, std::optional<WeightDtype> wanted) {
  if (wanted) return scalar_type_of(*wanted);
  return stored == torch::kBFloat16 || stored == torch::kHalf ? stored : torch::kFloat;
}

LlamaWeights load_shard(const FullTensorReader& read_full, const ModelConfig& c, const TpShard& s,
                        at::TensorOptions options, std::optional<WeightDtype> matrix_dtype,
                        std::optional<CpuKernel> pack_for) {
  const auto pack = [&](Linear& linear) {
    if (pack_for) linear.prepare_for_inference(*pack_for, /*keep_parameter=*/false);
  };
  // Keeps entries [begin, begin + count) of `dim`; a part is copied out so
  // that the whole tensor is freed. Matrices (`matrix`) may keep a
  // half-size dtype on CPU; everything else computes in options' dtype.
  // `packed`: a matrix packed right away, so it may be borrowed.
  auto read_as = [&](bool matrix, const std::string& name, const std::vector<int64_t>& shape, int64_t dim,
                     int64_t begin, int64_t count, bool packed = false) {
    at::Tensor full = read_full(name, shape, packed && pack_for.has_value());
    const at::TensorOptions to = matrix && options.device().is_cpu()
                                     ? options.dtype(cpu_matrix_dtype(full.scalar_type(), matrix_dtype))
                                     : options;
    if (count == full.size(dim)) return full.to(to);
    return full.narrow(dim, begin, count).to(to, /*non_blocking=*/false, /*copy=*/true, at::MemoryFormat::Contiguous);
  };
  auto read = [&](const std::string& name, const std::vector<int64_t>& shape, int64_t dim, int64_t begin,
                  int64_t count) { return read_as(true, name, shape, dim, begin, count, /*packed=*/true); };
  auto replicated = [&](const std::string& name, int64_t size) { return read_as(false, name, {size}, 0, 0, size); };
  const int64_t hidden = c.hidden_size, D = c.head_dim;
  const int64_t q_begin = s.head_begin * D, q_rows = s.heads * D;
  const int64_t kv_begin = s.kv_head_begin * D, kv_rows = s.kv_heads * D;
  const int64_t i_begin = s.intermediate_begin, i_rows = s.intermediate;
  LlamaWeights w;
  w.keep_parameters = !pack_for;
  if (pack_for) w.cpu_kernel = *pack_for;
  // An untied embedding is kept beyond the checkpoint: a copy.
  w.embed = read_as(true, "model.embed_tokens.weight", {c.vocab_size, hidden}, 0, s.vocab_begin, s.vocab,
                    /*packed=*/c.tie_word_embeddings);
  // Tied models may still store lm_head.weight; the embedding is the truth.
  // Packed first, while nothing else is held: the largest matrix.
  if (c.tie_word_embeddings) {
    w.lm_head.weight = w.embed;
    pack(w.lm_head);
    if (pack_for) w.embed = at::Tensor();
  }
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = layer_prefix(l);
    DecoderLayerWeights layer;
    layer.input_norm = replicated(p + "input_layernorm.weight", hidden);
    layer.qkv.weight = torch::cat({read(p + "self_attn.q_proj.weight", {c.q_size(), hidden}, 0, q_begin, q_rows),
                                   read(p + "self_attn.k_proj.weight", {c.kv_size(), hidden}, 0, kv_begin, kv_rows),
                                   read(p + "self_attn.v_proj.weight", {c.kv_size(), hidden}, 0, kv_begin, kv_rows)});
    if (c.attention_bias) {
      auto bias = [&](const std::string& name, int64_t size, int64_t begin, int64_t count) {
        return read_as(false, p + "self_attn." + name + "_proj.bias", {size}, 0, begin, count);
      };
      layer.qkv.bias = torch::cat({bias("q", c.q_size(), q_begin, q_rows), bias("k", c.kv_size(), kv_begin, kv_rows),
                                   bias("v", c.kv_size(), kv_begin, kv_rows)});
    }
    if (c.has_qk_norm()) {  // per head, so every rank holds them whole
      layer.q_norm = replicated(p + "self_attn.q_norm.weight", D);
      layer.k_norm = replicated(p + "self_attn.k_norm.weight", D);
    }
    layer.o.weight = read(p + "self_attn.o_proj.weight", {hidden, c.q_size()}, 1, q_begin, q_rows);
    layer.post_norm = replicated(p + "post_attention_layernorm.weight", hidden);
    layer.gate.weight = read(p + "mlp.gate_proj.weight", {c.intermediate_size, hidden}, 0, i_begin, i_rows);
    layer.up.weight = read(p + "mlp.up_proj.weight", {c.intermediate_size, hidden}, 0, i_begin, i_rows);
    layer.down.weight = read(p + "mlp.down_proj.weight", {hidden, c.intermediate_size}, 1, i_begin, i_rows);
    for (Linear* linear : {&layer.qkv, &layer.o, &layer.gate, &layer.up, &layer.down}) pack(*linear);
    w.layers.push_back(std::move(layer));
  }
  w.norm = replicated("model.norm.weight", hidden);
  if (c.draft_vocab_size > 0) {
    // EAGLE-3's layout: row i scores token i + d2t[i]. TpShard::of keeps
    // such a head whole.
    const at::Tensor d2t = read_full("d2t", {c.draft_vocab_size}, false);
    SEED_CHECK(!at::isFloatingType(d2t.scalar_type()), kCorruption)
        << "tensor 'd2t' holds " << d2t.scalar_type() << "; it must hold integer offsets";
    const at::Tensor tokens = torch::arange(c.draft_vocab_size, torch::kLong) + d2t.to(torch::kLong);
    const std::string fault = head_tokens_fault(tokens, c.vocab_size);
    SEED_CHECK(fault.empty(), kCorruption) << "tensor 'd2t' (row i scores token i + d2t[i]) " << fault;
    w.head_tokens = tokens.to(options.device());
  }
  if (!c.tie_word_embeddings && c.has_lm_head()) {
    const bool whole_vocab = c.draft_vocab_size == 0;
    w.lm_head.weight = read("lm_head.weight", {c.head_rows(), hidden}, 0, whole_vocab ? s.vocab_begin : 0,
                            whole_vocab ? s.vocab : c.draft_vocab_size);
    pack(w.lm_head);
  }
  return w;
}

}  // namespace

LlamaWeights load_weights(const Checkpoint& checkpoint, const ModelConfig& c, at::TensorOptions options,
                          const TpShard& shard, std::optional<WeightDtype> matrix_dtype,
                          std::optional<CpuKernel> pack_for) {
  auto read = [&](const std::string& name, const std::vector<int64_t>& shape, bool borrowed) {
    return borrowed ? checkpoint.borrow(name, shape) : checkpoint.read(name, shape);
  };
  return load_shard(read, c, shard, options, matrix_dtype, options.device().is_cpu() ? pack_for : std::nullopt);
}

c10::ScalarType held_matrix_dtype(const Checkpoint& checkpoint, at::TensorOptions options,
                                  std::optional<WeightDtype> matrix_dtype) {
  if (!options.device().is_cpu()) return options.dtype().toScalarType();
  return cpu_matrix_dtype(scalar_type_of_dtype(checkpoint.info("model.embed_tokens.weight").dtype), matrix_dtype);
}

int64_t held_weight_bytes(const ModelConfig& config, const TpShard& shard, c10::ScalarType matrix_dtype) {
  // The norms are counted at the matrices' width: a rounding error.
  ModelConfig local = shard.local_config(config);
  local.vocab_size = shard.vocab;
  return local.num_parameters() * static_cast<int64_t>(c10::elementSize(matrix_dtype));
}

LlamaWeights shard_weights(const LlamaWeights& full, const ModelConfig& c, const TpShard& shard,
                           at::TensorOptions options) {
  std::map<std::string, at::Tensor> named;
  for (auto& [name, tensor] : to_named_tensors(full, c, options.dtype().toScalarType())) named.emplace(name, tensor);
  auto read = [&](const std::string& name, const std::vector<int64_t>&, bool) { return named.at(name); };
  return load_shard(read, c, shard, options, WeightDtype::kFloat32, std::nullopt);
}

LlamaWeights random_weights(const ModelConfig& c, uint64_t seed, at::TensorOptions options) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const auto cpu = torch::TensorOptions().dtype(torch::kFloat);
  auto normal = [&](std::vector<int64_t> shape, double std) {
    return (torch::randn(shape, gen, cpu) * std).to(options);
  };
  auto norm_weight = [&](int64_t size) { return (1.0 + normal({size}, 0.1).cpu()).to(options); };
  const int64_t hidden = c.hidden_size;
  LlamaWeights w;
  w.embed = normal({c.vocab_size, hidden}, kInitStd);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    DecoderLayerWeights layer;
    layer.input_norm = norm_weight(hidden);
    layer.qkv.weight = normal({c.q_size() + 2 * c.kv_size(), hidden}, kInitStd);
    if (c.attention_bias) layer.qkv.bias = normal({c.q_size() + 2 * c.kv_size()}, kInitStd);
    if (c.has_qk_norm()) {
      layer.q_norm = norm_weight(c.head_dim);
      layer.k_norm = norm_weight(c.head_dim);
    }
    layer.o.weight = normal({hidden, c.q_size()}, kInitStd);
    layer.post_norm = norm_weight(hidden);
    layer.gate.weight = normal({c.intermediate_size, hidden}, kInitStd);
    layer.up.weight = normal({c.intermediate_size, hidden}, kInitStd);
    layer.down.weight = normal({hidden, c.intermediate_size}, kInitStd);
    w.layers.push_back(std::move(layer));
  }
  w.norm = norm_weight(hidden);
  if (c.tie_word_embeddings) {
    w.lm_head.weight = w.embed;
  } else if (c.has_lm_head()) {
    w.lm_head.weight = normal({c.head_rows(), hidden}, kInitStd);
  }
  if (c.draft_vocab_size > 0) w.head_tokens = torch::arange(c.draft_vocab_size, options.dtype(torch::kLong));
  return w;
}

NamedTensors to_named_tensors(const LlamaWeights& w, const ModelConfig& c, std::optional<c10::ScalarType> dtype) {
  NamedTensors out;
  auto add = [&](const std::string& name, const at::Tensor& t) {
    out.emplace_back(name, t.detach().to(torch::kCPU, dtype.value_or(t.scalar_type())).contiguous());
  };
  const std::vector<int64_t> qkv_sizes = {c.q_size(), c.kv_size(), c.kv_size()};
  add("model.embed_tokens.weight", w.embed.defined() ? w.embed : w.lm_head.unpacked());
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = layer_prefix(l);
    const DecoderLayerWeights& layer = w.layers[l];
    add(p + "input_layernorm.weight", layer.input_norm);
    const auto qkv = layer.qkv.unpacked().split_with_sizes(qkv_sizes);
    add(p + "self_attn.q_proj.weight", qkv[0]);
    add(p + "self_attn.k_proj.weight", qkv[1]);
    add(p + "self_attn.v_proj.weight", qkv[2]);
    if (layer.qkv.bias.defined()) {
      const auto bias = layer.qkv.bias.split_with_sizes(qkv_sizes);
      add(p + "self_attn.q_proj.bias", bias[0]);
      add(p + "self_attn.k_proj.bias", bias[1]);
      add(p + "self_attn.v_proj.bias", bias[2]);
    }
    if (layer.q_norm.defined()) {
      add(p + "self_attn.q_norm.weight", layer.q_norm);
      add(p + "self_attn.k_norm.weight", layer.k_norm);
    }
    add(p + "self_attn.o_proj.weight", layer.o.unpacked());
    add(p + "post_attention_layernorm.weight", layer.post_norm);
    add(p + "mlp.gate_proj.weight", layer.gate.unpacked());
    add(p + "mlp.up_proj.weight", layer.up.unpacked());
    add(p + "mlp.down_proj.weight", layer.down.unpacked());
  }
  add("model.norm.weight", w.norm);
  if (!c.tie_word_embeddings && w.lm_head.defined()) add("lm_head.weight", w.lm_head.unpacked());
  if (w.head_tokens.defined()) {
    const at::Tensor tokens = w.head_tokens.to(torch::kCPU);
    out.emplace_back("d2t", (tokens - torch::arange(tokens.numel(), tokens.options())).contiguous());
  }
  return out;
}

void keep_head_rows(LlamaWeights& w, ModelConfig& c, const at::Tensor& tokens) {
  SEED_CHECK(w.lm_head.defined(), kInvalidArgument) << "the model has no LM head whose rows to keep";
  SEED_CHECK(!w.head_tokens.defined(), kInvalidArgument)
      << "the LM head scores " << w.head_tokens.numel() << " of the " << c.vocab_size
      << " tokens already; keep rows of a model whose head scores every token";
  const std::string fault = head_tokens_fault(tokens, c.vocab_size);
  SEED_CHECK(fault.empty(), kInvalidArgument) << "the LM head's tokens: the list " << fault;
  const at::Tensor rows = tokens.to(torch::kCPU, torch::kLong).contiguous();
  // A tied embedding held only in the head's packed copy is unpacked
  // first: the embedding keeps every token.
  if (!w.embed.defined()) w.embed = w.lm_head.unpacked();
  Linear head;
  head.weight = w.lm_head.unpacked_rows(rows.to(w.embed.device())).contiguous();
  w.lm_head = std::move(head);
  w.head_tokens = rows.to(w.embed.device());
  c.tie_word_embeddings = false;
  c.draft_vocab_size = rows.numel();
}

}  // namespace seed::models
