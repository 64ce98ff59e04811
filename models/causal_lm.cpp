#include "models/causal_lm.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>

#include "models/base/error.h"
#include "models/device_memory.h"
#include "models/forward_graphs.h"
#include "models/forward_plan.h"
#include "models/fused_ops.h"
#include "models/grouped_query_attention.h"
#include "models/padded_batch.h"
#include "models/paged_attention.h"
#include "models/rope.h"

namespace seed::models {

c10::Device parse_device(const std::string& device) {
  std::optional<c10::Device> parsed;
  try {
    parsed.emplace(device);
  } catch (const c10::Error&) {
    SEED_FAIL(kInvalidArgument) << "unknown device '" << device << "'; use cpu or cuda:N";
  }
  SEED_CHECK(parsed->is_cpu() || parsed->is_cuda(), kInvalidArgument)
      << "device " << device << " is not supported; use cpu or cuda:N";
  return *parsed;
}

namespace {

// The tensor options a model computes with on `device` ("cpu", "cuda:N"):
// float32 on CPU (half-size matrices are the weights' own business); on a
// GPU the weights' dtype, `wanted` or else the folder's half-size dtype.
at::TensorOptions compute_options(const std::string& device, const ModelConfig& config,
                                  std::optional<WeightDtype> wanted) {
  const c10::Device parsed = parse_device(device);
  SEED_CHECK(!parsed.is_cuda() || torch::cuda::is_available(), kInvalidArgument)
      << "device " << device << " requested, but this libtorch build has no CUDA or sees no GPU; use --device cpu";
  c10::ScalarType dtype = torch::kFloat;
  if (parsed.is_cuda()) {
    if (wanted) {
      dtype = scalar_type_of(*wanted);
    } else if (config.torch_dtype == "bfloat16") {
      dtype = torch::kBFloat16;
    } else if (config.torch_dtype == "float16") {
      dtype = torch::kHalf;
    }
  }
  return torch::TensorOptions().dtype(dtype).device(parsed);
}

// The shard this process holds: the whole model without a group.
TpShard shard_of(const ModelConfig& config, const TpCollectives* group) {
  return group ? TpShard::of(config, group->rank(), group->size()) : TpShard::whole(config);
}

// Throws kOutOfRange unless `bytes` of weights fit in what the device has
// available: a model too large would otherwise be killed by the kernel
// midway through its load (or fail in the CUDA allocator), saying nothing.
void check_weights_fit(const std::string& model_dir, int64_t bytes, c10::ScalarType held, const c10::Device& device) {
  const int64_t available = available_memory_bytes(device);
  constexpr double kGiB = double(int64_t{1} << 30);
  SEED_CHECK(bytes <= available, kOutOfRange)
      << "model " << model_dir << ": its weights take " << fmt::format("{:.1f}", bytes / kGiB) << " GiB in "
      << c10::toString(held) << " on " << device << ", which has " << fmt::format("{:.1f}", available / kGiB)
      << " GiB available: split it over ranks (launch/mpirun.sh -n N+1 -- seed --tp N ...)"
      << (held == c10::kFloat ? ", hold it in bfloat16 (--weights-dtype bfloat16)" : "")
      << " or use a machine with more memory";
}

}  // namespace

// The RoPE tables, grown on demand and shared by concurrent forwards (the
// drafters of one draft model): growing replaces the tensors, never writes
// into them, so a caller keeps reading the handles it was given.
struct CausalLM::Rope {
  struct Tables {
    at::Tensor cos, sin;  // [positions, head_dim / 2] in compute dtype, on device
  };
  at::Tensor inv_freq;  // [head_dim / 2], float32 CPU; set once, then read-only
  std::mutex mutex;
  Tables tables;  // guarded by mutex

  // Tables covering at least positions [0, positions).
  Tables at_least(int64_t positions, at::TensorOptions options) {
    std::lock_guard<std::mutex> lock(mutex);
    if (tables.cos.defined() && tables.cos.size(0) >= positions) return tables;
    // Grow geometrically so that decoding does not rebuild the table per token.
    const int64_t n = std::max<int64_t>(positions, tables.cos.defined() ? 2 * tables.cos.size(0) : 256);
    at::Tensor angles = torch::outer(torch::arange(n, torch::kFloat), inv_freq);
    tables = {angles.cos().to(options), angles.sin().to(options)};
    return tables;
  }
};

std::unique_ptr<CausalLM> CausalLM::load(const std::string& model_dir, const LoadOptions& options) {
  ModelConfig config = ModelConfig::from_file(model_dir + "/config.json");
  const at::TensorOptions tensor_options = compute_options(options.device, config, options.weights_dtype);
  const TpShard shard = shard_of(config, options.tp_group);  // before reading any weights
  const std::optional<CpuKernel> pack_for =
      options.keep_parameters ? std::nullopt : std::optional<CpuKernel>(options.cpu_kernel);
  const Checkpoint checkpoint = Checkpoint::open(model_dir);
  const c10::ScalarType held = held_matrix_dtype(checkpoint, tensor_options, options.weights_dtype);
  check_weights_fit(model_dir, held_weight_bytes(config, shard, held), held, tensor_options.device());
  LlamaWeights weights = load_weights(checkpoint, config, tensor_options, shard, options.weights_dtype, pack_for);
  weights.cpu_kernel = options.cpu_kernel;
  weights.fused_cpu_layers = options.fused_cpu_layers;
  weights.cuda_graphs = options.cuda_graphs;
  weights.paged_attention = options.paged_attention;
  return std::make_unique<CausalLM>(std::move(config), std::move(weights), tensor_options, options.tp_group);
}

std::unique_ptr<CausalLM> CausalLM::random(const ModelConfig& config, uint64_t seed, const LoadOptions& options) {
  config.validate();
  const at::TensorOptions tensor_options = compute_options(options.device, config, options.weights_dtype);
  const TpShard shard = shard_of(config, options.tp_group);
  LlamaWeights weights = random_weights(config, seed, tensor_options);
  if (!shard.is_whole()) weights = shard_weights(weights, config, shard, tensor_options);
  if (options.weights_dtype && tensor_options.device().is_cpu()) weights.convert_matrices(*options.weights_dtype);
  weights.cpu_kernel = options.cpu_kernel;
  weights.keep_parameters = options.keep_parameters;
  weights.fused_cpu_layers = options.fused_cpu_layers;
  weights.cuda_graphs = options.cuda_graphs;
  weights.paged_attention = options.paged_attention;
  return std::make_unique<CausalLM>(config, std::move(weights), tensor_options, options.tp_group);
}

CausalLM::CausalLM(ModelConfig config, LlamaWeights weights, at::TensorOptions options,
                   TpCollectives* tp_group)
    : config_(std::move(config)),
      shard_(shard_of(config_, tp_group)),
      tp_(shard_.is_whole() ? nullptr : tp_group),
      weights_(std::move(weights)),
      options_(options),
      rope_(std::make_unique<Rope>()) {
  const int64_t qkv_rows = (shard_.heads + 2 * shard_.kv_heads) * config_.head_dim;
  SEED_CHECK(weights_.layers.empty() || weights_.layers[0].qkv.out_features() == qkv_rows, kInvalidArgument)
      << "the weights have " << weights_.layers[0].qkv.out_features() << " q/k/v rows, but tp rank " << shard_.rank
      << " of " << shard_.size << " holds " << qkv_rows << "; pass the rank's shard (shard_weights)";
  rope_->inv_freq = rope_inverse_frequencies(config_);
  weights_.prepare_for_inference();
  if (weights_.head_tokens.defined()) head_tokens_host_ = weights_.head_tokens.to(torch::kCPU).contiguous();
  cpu_layers_ = options_.device().is_cpu() && weights_.fused_cpu_layers;
  if (weights_.cuda_graphs && !tp_) graphs_ = make_forward_graphs(options_.device());
  // A captured graph reads the RoPE tables where they were: never regrown.
  if (graphs_) rope_->at_least(config_.max_position_embeddings, options_);
}

CausalLM::~CausalLM() = default;

int64_t CausalLM::captured_graphs() const { return graphs_ ? graphs_->captured() : 0; }
int64_t CausalLM::graph_warm_ups() const { return graphs_ ? graphs_->warm_ups() : 0; }

KvCache CausalLM::make_cache(KvCacheOptions cache_options) const {
  const bool bfloat16_kv = cpu_layers_ && !weights_.layers.empty() && weights_.layers[0].qkv.dtype() == torch::kBFloat16;
  return KvCache(shard_.local_config(config_), bfloat16_kv ? options_.dtype(torch::kBFloat16) : options_, cache_options);
}

at::Tensor CausalLM::embed(const at::Tensor& tokens) const {
  // Half-size embeddings widen only the rows looked up.
  if (!tp_) return weights_.lookup(tokens).to(options_.dtype());
  // Vocabulary-parallel: each rank looks up the tokens in its rows, zeros
  // the others, and the sum over ranks has every row exactly once.
  const at::Tensor local = tokens - shard_.vocab_begin;
  const at::Tensor mine = (local >= 0) & (local < shard_.vocab);
  at::Tensor x = weights_.lookup(local.clamp(0, shard_.vocab - 1)).to(options_.dtype());
  x.masked_fill_(mine.logical_not().unsqueeze(1), 0);
  tp_->all_reduce_sum(x);
  return x;
}

at::Tensor CausalLM::sum_partial(at::Tensor partial) const {
  if (tp_) tp_->all_reduce_sum(partial);
  return partial;
}

at::Tensor CausalLM::lm_head(const at::Tensor& hidden) const {
  at::Tensor logits = weights_.lm_head(hidden);  // [M, this rank's head rows]
  if (!tp_) return logits;
  // Every rank's columns padded to vocab_stride, gathered in rank order:
  // only the last rank can be short, so the padding sits past column V.
  // (A head over a part of the vocabulary is never split: TpShard::of.)
  if (shard_.vocab < shard_.vocab_stride) {
    logits = torch::constant_pad_nd(logits, {0, shard_.vocab_stride - shard_.vocab});
  }
  return tp_->all_gather(logits, 1).narrow(1, 0, config_.vocab_size);
}

int64_t CausalLM::head_row(int64_t token) const {
  if (token < 0 || token >= config_.vocab_size) return -1;
  if (!weights_.head_tokens.defined()) return token;
  const int64_t* begin = head_tokens_host_.data_ptr<int64_t>();
  const int64_t* end = begin + head_tokens_host_.numel();
  const int64_t* at = std::lower_bound(begin, end, token);
  return at != end && *at == token ? at - begin : -1;
}

at::Tensor CausalLM::vocabulary_logits(const at::Tensor& head_logits) const {
  if (!weights_.head_tokens.defined()) return head_logits;
  return torch::full({head_logits.size(0), config_.vocab_size}, -std::numeric_limits<float>::infinity(),
                     head_logits.options())
      .index_copy_(1, weights_.head_tokens, head_logits);
}

void CausalLM::check_whole(const char* what) const {
  SEED_CHECK(!tp_, kInvalidArgument) << what << " needs the whole model; this is tp rank " << shard_.rank << " of "
                                     << shard_.size << " (tensor parallelism is for inference via forward)";
}

at::Tensor CausalLM::forward(const std::vector<SequenceInput>& batch, KvCache& cache, LogitsFor which) const {
  SEED_CHECK(weights_.lm_head.defined(), kInvalidArgument)
      << "the model (" << config_.architecture << ") has no LM head to give logits; its head reads forward_hidden()";
  c10::InferenceMode inference;
  const ForwardPlan plan = plan_forward(config_, batch, cache, which);
  const ModelConfig& c = config_;
  at::Tensor logits = vocabulary_logits(head_forward(batch, plan, cache));
  if (which != LogitsFor::kAll) return logits;
  const int64_t B = plan.batch, S = plan.seq;
  if (plan.rows != B * S) {
    const auto index = torch::TensorOptions().dtype(torch::kLong);
    logits = torch::zeros({B * S, c.vocab_size}, logits.options())
                 .index_copy_(0, torch::tensor(padded_rows(plan), index).to(options_.device()), logits);
  }
  return logits.view({B, S, c.vocab_size});
}

at::Tensor CausalLM::forward_head(const std::vector<SequenceInput>& batch, KvCache& cache, LogitsFor which) const {
  SEED_CHECK(weights_.lm_head.defined(), kInvalidArgument)
      << "the model (" << config_.architecture << ") has no LM head to give logits; its head reads forward_hidden()";
  SEED_CHECK(which != LogitsFor::kAll, kInvalidArgument) << "forward_head returns packed rows: kLast or kTail";
  c10::InferenceMode inference;
  return head_forward(batch, plan_forward(config_, batch, cache, which), cache);
}

at::Tensor CausalLM::head_forward(const std::vector<SequenceInput>& batch, const ForwardPlan& plan,
                                  KvCache& cache) const {
  at::Tensor logits = cpu_layers_ ? lm_head(cpu_final_hidden(batch, plan, cache)).to(torch::kFloat)
                                  : padded_forward(batch, plan, cache, /*logits=*/true);
  for (const SequenceInput& in : batch) cache.publish(in.sequence);
  return logits;
}

at::Tensor CausalLM::forward_hidden(const std::vector<SequenceInput>& batch, KvCache& cache, LogitsFor which) const {
  SEED_CHECK(which != LogitsFor::kAll, kInvalidArgument) << "forward_hidden returns packed rows: kLast or kTail";
  c10::InferenceMode inference;
  const ForwardPlan plan = plan_forward(config_, batch, cache, which);
  at::Tensor hidden = cpu_layers_ ? cpu_final_hidden(batch, plan, cache).to(torch::kFloat)
                                  : padded_forward(batch, plan, cache, /*logits=*/false);
  for (const SequenceInput& in : batch) cache.publish(in.sequence);
  return hidden;
}

at::Tensor CausalLM::cpu_final_hidden(const std::vector<SequenceInput>& batch, const ForwardPlan& plan,
                                      KvCache& cache) const {
  const ModelConfig& c = config_;
  const auto index = torch::TensorOptions().dtype(torch::kLong);
  at::Tensor x = embed(torch::tensor(plan.tokens, index));  // [M, hidden]
  for (int64_t b = 0; b < plan.batch; ++b) {
    const at::Tensor& soft = batch[b].soft_prompt;
    if (soft.defined() && soft.size(0) > 0) x.narrow(0, plan.first_row[b], soft.size(0)).copy_(soft);
  }
  const int64_t max_position = *std::max_element(plan.positions.begin(), plan.positions.end());
  const Rope::Tables rope = rope_->at_least(max_position + 1, options_);
  const at::Tensor positions = torch::tensor(plan.positions, index);
  const at::Tensor cos = rope.cos.index_select(0, positions);  // [M, D/2]
  const at::Tensor sin = rope.sin.index_select(0, positions);
  return rms_norm(cpu_layers(x, plan, cache, cos, sin), weights_.norm, c.rms_norm_eps);
}

at::Tensor CausalLM::padded_forward(const std::vector<SequenceInput>& batch, const ForwardPlan& plan, KvCache& cache,
                                    bool logits) const {
  bool soft_prompts = false;
  for (const SequenceInput& in : batch) soft_prompts |= in.soft_prompt.defined() && in.soft_prompt.size(0) > 0;
  const int64_t max_position = *std::max_element(plan.positions.begin(), plan.positions.end());
  const Rope::Tables rope = rope_->at_least(max_position + 1, options_);
  const int64_t key_step = attends_paged(plan.seq) ? kPagedAttentionSplitKeys : kGatheredKeyStep;
  const std::optional<PaddedShape> bucket = graphs_ && logits && !soft_prompts
                                                ? graph_shape(plan.batch, plan.seq, keys_needed(plan), key_step)
                                                : std::nullopt;
  const PaddedBatch padded = pad_batch(plan, bucket ? *bucket : exact_shape(plan));
  const ForwardGraphs::Body body = [&](const at::Tensor& index) {
    return padded_body(index, padded, batch, cache, rope.cos, rope.sin, logits);
  };
  if (!bucket) return body(padded.data.to(options_.device()));
  // What the captured kernels address besides their static input: the KV
  // pool (moved when it grows) and the hidden states an EDD reads.
  const at::Tensor keys = cache.keys(0);
  const int64_t hidden = cache.hidden_layer() >= 0 ? reinterpret_cast<int64_t>(cache.hidden_states().data_ptr()) : 0;
  const ForwardGraphs::Key key = {padded.batch, padded.seq, padded.keys, reinterpret_cast<int64_t>(keys.data_ptr()),
                                  keys.size(0), hidden, cache.hidden_layer()};
  const at::Tensor rows = torch::tensor(padded_logit_rows(plan, padded.seq), torch::TensorOptions().dtype(torch::kLong))
                             .to(options_.device());
  return graphs_->run(key, padded.data, body, [&](const at::Tensor& every_row) {  // [B*S, V]
    return every_row.index_select(0, rows);
  });
}

bool CausalLM::attends_paged(int64_t seq) const {
  return weights_.paged_attention && paged_attention_fits(options_, seq, config_.head_dim);
}

at::Tensor CausalLM::padded_body(const at::Tensor& index, const PaddedBatch& padded,
                                 const std::vector<SequenceInput>& batch, KvCache& cache, const at::Tensor& cos_table,
                                 const at::Tensor& sin_table, bool logits) const {
  const PaddedBatch::Parts parts = padded.parts(index);
  const int64_t S = padded.seq;
  at::Tensor x = embed(parts.tokens);  // [B*S, hidden]
  for (size_t b = 0; b < batch.size(); ++b) {  // a graph's padded batch may hold more sequences than `batch`
    const at::Tensor& soft = batch[b].soft_prompt;
    if (soft.defined() && soft.size(0) > 0) x.narrow(0, b * S, soft.size(0)).copy_(soft);
  }
  const auto [cos, sin] = rope_rows_full(cos_table.index_select(0, parts.positions).unsqueeze(1),
                                         sin_table.index_select(0, parts.positions).unsqueeze(1));  // [B*S, 1, D]
  // Paged attention reads the parts in place; gathered keys need a mask.
  at::Tensor bias;
  if (!attends_paged(S)) {
    // Row g*S + s of a kv head's regrouped queries (attention()) is query s
    // of its group's head g.
    const int64_t group = shard_.heads / shard_.kv_heads;
    const at::Tensor allowed = attention_allowed(parts, padded.batch, S, padded.keys)
                                   .unsqueeze(2)
                                   .expand({padded.batch, 1, group, S, padded.keys})
                                   .reshape({padded.batch, 1, group * S, padded.keys});
    const c10::ScalarType dtype = options_.dtype().toScalarType();
    bias = torch::zeros(allowed.sizes(), options_).masked_fill_(allowed.logical_not(), mask_value(dtype));
  }
  x = tensor_layers(x, padded, parts, bias, cache, cos, sin);
  x = rms_norm(x.index_select(0, parts.logit_rows), weights_.norm, config_.rms_norm_eps);
  return (logits ? lm_head(x) : x).to(torch::kFloat);
}

at::Tensor CausalLM::tensor_layers(at::Tensor x, const PaddedBatch& padded, const PaddedBatch::Parts& parts,
                                   const at::Tensor& bias, KvCache& cache, const at::Tensor& cos,
                                   const at::Tensor& sin) const {
  const ModelConfig& c = config_;
  const int64_t B = padded.batch, T = padded.keys, M = x.size(0);
  const int64_t H = shard_.heads, Hkv = shard_.kv_heads, D = c.head_dim;  // this rank's heads
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const DecoderLayerWeights& w = weights_.layers[l];
    at::Tensor qkv = w.qkv(rms_norm(x, w.input_norm, c.rms_norm_eps));  // [M, (H + 2 Hkv) D]
    at::Tensor qk = rotated_qk(qkv, w, H, Hkv, D, c.rms_norm_eps, cos, sin);
    at::Tensor keys = cache.keys(l), values = cache.values(l);  // [slots, Hkv, D]
    keys.index_copy_(0, parts.write_slots, qk.narrow(1, H, Hkv));
    values.index_copy_(0, parts.write_slots, qkv.narrow(1, (H + Hkv) * D, Hkv * D).view({M, Hkv, D}));
    at::Tensor attended;
    if (bias.defined()) {
      const at::Tensor k = keys.index_select(0, parts.key_slots).view({B, T, Hkv, D});
      const at::Tensor v = values.index_select(0, parts.key_slots).view({B, T, Hkv, D});
      attended = attention(qk.narrow(1, 0, H), k, v, bias);
    } else {
      attended = paged_attention(qk.narrow(1, 0, H), keys, values, parts, B, padded.seq, T);
    }
    x = x + sum_partial(w.o(attended));
    const at::Tensor h = rms_norm(x, w.post_norm, c.rms_norm_eps);
    x = x + sum_partial(w.down(torch::silu(w.gate(h)).mul_(w.up(h))));
    if (l == cache.hidden_layer()) cache.hidden_states().index_copy_(0, parts.write_slots, x);
  }
  return x;
}

at::Tensor CausalLM::forward_full(const at::Tensor& tokens, std::optional<c10::ScalarType> matmul_dtype,
                                  int64_t hidden_layer, at::Tensor* hidden) {
  check_whole("forward_full");
  SEED_CHECK(tokens.dim() == 2, kInvalidArgument) << "forward_full expects tokens [batch, time]";
  const ModelConfig& c = config_;
  const int64_t B = tokens.size(0), T = tokens.size(1);
  SEED_CHECK(T <= c.max_position_embeddings, kOutOfRange)
      << T << " tokens exceed the model's context of " << c.max_position_embeddings;
  const c10::ScalarType mm = matmul_dtype.value_or(options_.dtype().toScalarType());
  const Rope::Tables rope = rope_->at_least(T, options_);
  at::Tensor cos = rope.cos.narrow(0, 0, T).repeat({B, 1}).unsqueeze(1);  // [M, 1, D/2]
  at::Tensor sin = rope.sin.narrow(0, 0, T).repeat({B, 1}).unsqueeze(1);
  const at::Tensor mask = causal_mask(T, c.group_size(), options_.dtype(mm));
  const at::Tensor x = embed_rows(tokens).view({B * T, c.hidden_size});
  return full_layers(x, B, cos, sin, mask, mm, 0, hidden_layer, hidden);
}

at::Tensor CausalLM::embed_rows(const at::Tensor& tokens) {
  check_whole("embed_rows");
  const at::Tensor rows = weights_.lookup(tokens.reshape({-1}).to(options_.device()));
  std::vector<int64_t> shape = tokens.sizes().vec();
  shape.push_back(config_.hidden_size);
  return rows.to(options_.dtype()).view(shape);
}

at::Tensor CausalLM::forward_inputs(const at::Tensor& inputs, const at::Tensor& positions, const at::Tensor& allowed,
                                    int64_t logits_from, std::optional<c10::ScalarType> matmul_dtype) {
  check_whole("forward_inputs");
  const ModelConfig& c = config_;
  SEED_CHECK(inputs.dim() == 3 && inputs.size(2) == c.hidden_size, kInvalidArgument)
      << "forward_inputs expects inputs [batch, rows, " << c.hidden_size << "]";
  const int64_t B = inputs.size(0), N = inputs.size(1);
  SEED_CHECK(positions.dim() == 1 && positions.size(0) == N && allowed.sizes() == at::IntArrayRef({N, N}),
             kInvalidArgument)
      << "forward_inputs expects positions [" << N << "] and allowed [" << N << ", " << N << "]";
  SEED_CHECK(logits_from >= 0 && logits_from < N, kInvalidArgument)
      << "logits_from " << logits_from << " outside the " << N << " rows";
  const int64_t last = positions.max().item<int64_t>();
  SEED_CHECK(positions.min().item<int64_t>() >= 0 && last < c.max_position_embeddings, kOutOfRange)
      << "position " << last << " is outside the model's context of " << c.max_position_embeddings;
  const c10::ScalarType mm = matmul_dtype.value_or(options_.dtype().toScalarType());
  const Rope::Tables rope = rope_->at_least(last + 1, options_);
  const at::Tensor rows = positions.to(options_.device()).repeat({B});
  at::Tensor cos = rope.cos.index_select(0, rows).unsqueeze(1);  // [M, 1, D/2]
  at::Tensor sin = rope.sin.index_select(0, rows).unsqueeze(1);
  const at::TensorOptions mask_options = options_.dtype(mm);
  const at::Tensor mask = torch::zeros({N, N}, mask_options)
                              .masked_fill_(allowed.to(options_.device()).logical_not(), mask_value(mm))
                              .repeat({c.group_size(), 1})
                              .unsqueeze(0);
  return full_layers(inputs.reshape({B * N, c.hidden_size}).to(options_.dtype()), B, cos, sin, mask, mm,
                     logits_from, -1, nullptr);
}

at::Tensor CausalLM::full_layers(at::Tensor x, int64_t batch, const at::Tensor& cos, const at::Tensor& sin,
                                 const at::Tensor& mask, c10::ScalarType mm, int64_t logits_from,
                                 int64_t hidden_layer, at::Tensor* hidden) {
  const ModelConfig& c = config_;
  const int64_t M = x.size(0), B = batch, T = M / B;
  const int64_t H = c.num_attention_heads, Hkv = c.num_key_value_heads, D = c.head_dim;
  SEED_CHECK(hidden_layer < c.num_hidden_layers, kInvalidArgument)
      << "hidden states of layer " << hidden_layer << " asked of a model with " << c.num_hidden_layers << " layers";
  // Training reads `weight` through torch::linear (autograd); the packed
  // inference copies may be stale while weights change. The casts to `mm`
  // are autograd ops, so gradients reach the weights in their own dtype.
  // Weights held only packed are unpacked per use (no gradients then).
  auto linear = [mm](const Linear& l, const at::Tensor& x) {
    return torch::linear(x.to(mm), l.unpacked().to(mm), l.bias.defined() ? l.bias.to(mm) : l.bias);
  };
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const DecoderLayerWeights& w = weights_.layers[l];
    at::Tensor qkv = linear(w.qkv, rms_norm(x, w.input_norm, c.rms_norm_eps));
    at::Tensor qk = rotated_qk(qkv, w, H, Hkv, D, c.rms_norm_eps, cos, sin).to(mm);
    at::Tensor k = qk.narrow(1, H, Hkv).reshape({B, T, Hkv, D});
    at::Tensor v = qkv.narrow(1, (H + Hkv) * D, Hkv * D).reshape({B, T, Hkv, D});
    // The residual stream stays in the weights' dtype (x + a bf16 product promotes).
    x = x + linear(w.o, masked_attention(qk.narrow(1, 0, H), k, v, mask));
    const at::Tensor h = rms_norm(x, w.post_norm, c.rms_norm_eps);
    x = x + linear(w.down, torch::silu(linear(w.gate, h)) * linear(w.up, h));
    if (l == hidden_layer && hidden != nullptr) *hidden = x.view({B, T, c.hidden_size});
  }
  if (logits_from > 0) x = x.view({B, T, c.hidden_size}).narrow(1, logits_from, T - logits_from).reshape({-1, c.hidden_size});
  const at::Tensor logits = vocabulary_logits(linear(weights_.lm_head, rms_norm(x, weights_.norm, c.rms_norm_eps)));
  return logits.to(options_.dtype()).view({B, T - logits_from, c.vocab_size});
}

std::unique_ptr<CausalLM> CausalLM::with_head_rows(const at::Tensor& tokens) const {
  check_whole("with_head_rows");
  LlamaWeights weights = weights_;
  ModelConfig config = config_;
  keep_head_rows(weights, config, tokens);
  return std::make_unique<CausalLM>(std::move(config), std::move(weights), options_);
}

void CausalLM::save(const std::string& model_dir, std::optional<c10::ScalarType> dtype) const {
  check_whole("save");
  ModelConfig config = config_;
  const c10::ScalarType matrices = dtype.value_or(weights_.lm_head.dtype());
  config.torch_dtype = matrices == torch::kBFloat16 ? "bfloat16" : matrices == torch::kHalf ? "float16" : "float32";
  write_checkpoint(model_dir, to_named_tensors(weights_, config_, dtype));
  config.save(model_dir + "/config.json");
}

}  // namespace seed::models
