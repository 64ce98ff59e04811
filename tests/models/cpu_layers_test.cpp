// The CPU layers: a tree node's logits are bit for bit those of its path
// decoded token by token (with float32 or bfloat16 keys and values), they
// agree with the ATen layers on mixed batches and long contexts, and weights
// held only packed give the same model.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "models/causal_lm.h"
#include "tests/models/reference_logits.h"
#include "tests/models/tiny_models.h"

namespace seed::models {
namespace {

// The CPU layers compute each row from that row alone: a tree node's logits
// are the bits of decoding its path one token at a time, and of the same
// chain verified at once. (Greedy speculative decoding equals autoregressive
// decoding by construction, not by tolerance.)
// A tree node's logits are the bits of its path decoded token by token, and
// of the path verified as a chain.
void expect_tree_nodes_get_their_paths_bits(CausalLM& model, const std::string& name) {
  const int64_t V = model.config().vocab_size;
  const auto prefix = random_tokens(21, V, 50);
  const auto nodes = random_tokens(6, V, 51);
  const std::vector<int32_t> parents = {-1, 0, 0, 2, -1, 3};  // node 5's path: 0, 2, 3, 5
  KvCache cache = model.make_cache({/*block_size=*/4});
  const SequenceId tree = cache.create();
  model.forward({{tree, prefix, {}}}, cache, LogitsFor::kLast);
  const at::Tensor tree_logits = model.forward({{tree, nodes, parents}}, cache, LogitsFor::kAll)[0];

  const SequenceId chain = cache.create();
  model.forward({{chain, prefix, {}}}, cache, LogitsFor::kLast);
  const std::vector<int32_t> path = {0, 2, 3, 5};
  std::vector<int32_t> path_tokens;
  for (int32_t node : path) path_tokens.push_back(nodes[node]);
  const SequenceId verified = cache.fork(chain);
  const at::Tensor chain_logits = model.forward({{verified, path_tokens, {}}}, cache, LogitsFor::kAll)[0];
  for (size_t i = 0; i < path.size(); ++i) {
    const at::Tensor decoded = model.forward({{chain, {path_tokens[i]}, {}}}, cache, LogitsFor::kLast)[0];
    EXPECT_TRUE(torch::equal(decoded, tree_logits[path[i]])) << name << " node " << path[i];
    EXPECT_TRUE(torch::equal(decoded, chain_logits[i])) << name << " chain token " << i;
  }
}

TEST(CpuLayers, ATreeNodeGetsTheBitsOfItsPathDecodedTokenByToken) {
  for (const std::string& family : testing::all_variants()) {
    expect_tree_nodes_get_their_paths_bits(*random_model(family, /*fused=*/true), family);
  }
}

// A model of bfloat16 matrices keeps its keys and values in bfloat16 on
// CPU: its tree nodes still get their paths' bits, and its logits are
// within bfloat16's rounding of the same model over a float32 cache.
TEST(CpuLayers, ABfloat16ModelKeepsBfloat16KeysAndValues) {
  for (const std::string family : {"llama", "qwen3"}) {
    LoadOptions options;
    options.weights_dtype = WeightDtype::kBFloat16;
    auto model = CausalLM::random(testing::tiny_config(family), 7, options);
    EXPECT_EQ(model->make_cache().keys(0).scalar_type(), torch::kBFloat16) << family;
    EXPECT_EQ(random_model(family, true)->make_cache().keys(0).scalar_type(), torch::kFloat) << family;
    expect_tree_nodes_get_their_paths_bits(*model, family + " bfloat16");

    const auto prompt = random_tokens(40, model->config().vocab_size, 52);
    KvCache half = model->make_cache(), full(model->config(), model->tensor_options());
    const at::Tensor half_logits = model->forward({{half.create(), prompt, {}}}, half, LogitsFor::kAll);
    const at::Tensor full_logits = model->forward({{full.create(), prompt, {}}}, full, LogitsFor::kAll);
    const double scale = full_logits.abs().max().item<double>();
    const double diff = max_diff(half_logits, full_logits);
    EXPECT_LT(diff, 2e-2 * scale) << family << ": max logit " << scale;
    EXPECT_GT(diff, 0.0) << family << ": the keys and values were not rounded";
  }
}

// Both layer implementations give the same logits and hidden states for a
// batch mixing chains, a tree, a soft prompt and shared prefixes.
TEST(CpuLayers, AgreeWithTheAtenLayers) {
  for (const std::string& family : testing::all_variants()) {
    const auto run = [&](bool fused) {
      auto model = random_model(family, fused);
      const int64_t V = model->config().vocab_size;
      KvCache cache = model->make_cache({/*block_size=*/4, /*initial_blocks=*/8, 0, 0, true, /*hidden_layer=*/1});
      const SequenceId a = cache.create(), b = cache.create(), c = cache.create();
      model->forward({{a, random_tokens(13, V, 60), {}}, {b, random_tokens(5, V, 61), {}}}, cache, LogitsFor::kLast);
      SequenceInput soft{c, random_tokens(4, V, 62), {}};
      soft.soft_prompt = torch::randn({2, model->config().hidden_size}, at::detail::createCPUGenerator(63));
      const at::Tensor logits = model->forward({{a, random_tokens(3, V, 64), {}},
                                                {b, random_tokens(5, V, 65), {-1, 0, 0, 1, -1}},
                                                soft},
                                               cache, LogitsFor::kAll);
      std::vector<int64_t> slots;
      cache.append_slots(a, slots);
      cache.append_slots(c, slots);
      const at::Tensor hidden = cache.hidden_states().index_select(0, torch::tensor(slots));
      return std::make_pair(logits, hidden);
    };
    const auto [cpu_logits, cpu_hidden] = run(true);
    const auto [aten_logits, aten_hidden] = run(false);
    EXPECT_LT(max_diff(cpu_logits, aten_logits), kTolerance) << family;
    EXPECT_LT(max_diff(cpu_hidden, aten_hidden), kTolerance) << family;
  }
}

// At contexts of hundreds of tokens over many blocks (many steps of the
// CPU attention's online softmax), the CPU layers still agree with the
// ATen layers, which gather the whole context and softmax it at once; a
// decode step and a tree verified on top of the context alike.
TEST(CpuLayers, LongContextsAgreeWithTheAtenLayers) {
  for (const std::string family : {"llama", "qwen2"}) {
    ModelConfig config = testing::tiny_config(family);
    config.max_position_embeddings = 512;
    const auto run = [&](bool fused) {
      LoadOptions options;
      options.fused_cpu_layers = fused;
      auto model = CausalLM::random(config, 7, options);
      KvCache cache = model->make_cache({/*block_size=*/4});
      const SequenceId seq = cache.create();
      const auto context = random_tokens(420, config.vocab_size, 70);
      for (size_t at = 0; at < context.size(); at += 140) {
        model->forward({{seq, {context.begin() + at, context.begin() + at + 140}, {}}}, cache, LogitsFor::kLast);
      }
      const at::Tensor decoded = model->forward({{seq, {5}, {}}}, cache, LogitsFor::kLast);
      const at::Tensor tree =
          model->forward({{seq, random_tokens(5, config.vocab_size, 71), {-1, 0, 0, 1, -1}}}, cache, LogitsFor::kAll);
      return std::make_pair(decoded, tree);
    };
    const auto [cpu_decoded, cpu_tree] = run(true);
    const auto [aten_decoded, aten_tree] = run(false);
    EXPECT_LT(max_diff(cpu_decoded, aten_decoded), kTolerance) << family;
    EXPECT_LT(max_diff(cpu_tree, aten_tree), kTolerance) << family;
  }
}

// Held once (the packed copy replacing the parameters) or twice, a model
// gives the same logits, and saves the same tensors.
TEST(CpuLayers, WeightsHeldOnlyPackedGiveTheSameModel) {
  for (const std::string family : {"llama", "tied"}) {
    LoadOptions kept, packed;
    kept.keep_parameters = true;
    auto with_parameters = CausalLM::random(testing::tiny_config(family), 9, kept);
    auto held_once = CausalLM::random(testing::tiny_config(family), 9, packed);
    EXPECT_FALSE(held_once->weights().layers[0].gate.weight.defined()) << family;
    EXPECT_EQ(held_once->weights().parameter_bytes(), with_parameters->weights().parameter_bytes()) << family;
    const auto tokens = random_tokens(9, held_once->config().vocab_size, 80);
    KvCache a = with_parameters->make_cache(), b = held_once->make_cache();
    const at::Tensor expected = with_parameters->forward({{a.create(), tokens, {}}}, a, LogitsFor::kAll);
    EXPECT_TRUE(torch::equal(held_once->forward({{b.create(), tokens, {}}}, b, LogitsFor::kAll), expected)) << family;
    EXPECT_LT(max_diff(reference_logits(*held_once, tokens), expected[0]), kTolerance) << family;
    const NamedTensors saved = to_named_tensors(with_parameters->weights(), with_parameters->config(), std::nullopt);
    const NamedTensors unpacked = to_named_tensors(held_once->weights(), held_once->config(), std::nullopt);
    ASSERT_EQ(saved.size(), unpacked.size());
    for (size_t i = 0; i < saved.size(); ++i) {
      EXPECT_TRUE(torch::equal(saved[i].second, unpacked[i].second)) << family << " " << saved[i].first;
    }
  }
}

}  // namespace
}  // namespace seed::models
