// EDD drafts: the dual-block layout (edd_block_mask), its input path
// (forward_inputs), and EDD training against a tiny trained target: the KL
// falls, the draft starts from the target's embedding, resume reproduces an
// uninterrupted run, config errors name their field.
#include "models/training/edd_mask.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "models/training/trainer.h"
#include "tests/models/trainer_fixture.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

using seed::testing::throws_error;

// Rows 0..6 are hidden states, 7..13 the tokens at positions 0..6; blocks
// of 3 start at positions 0, 3 and 6.
TEST(EddBlockMask, MatchesTheHandWrittenDualBlockLayout) {
  const std::vector<std::string> expected = {
      "10000000000000",  // hidden rows: causal over hidden rows
      "11000000000000", "11100000000000", "11110000000000", "11111000000000", "11111100000000",
      "11111110000000",
      "00000001000000",  // token 0 (block 0): no hidden state, itself
      "00000001100000", "00000001110000",
      "11100000001000",  // token 3 (block 1): h0..h2, itself
      "11100000001100", "11100000001110",
      "11111100000001",  // token 6 (block 2): h0..h5, itself
  };
  const at::Tensor mask = edd_block_mask(7, 3);
  ASSERT_EQ(mask.sizes(), at::IntArrayRef({14, 14}));
  ASSERT_EQ(mask.scalar_type(), torch::kBool);
  for (int64_t i = 0; i < 14; ++i) {
    std::string row;
    for (int64_t j = 0; j < 14; ++j) row += mask[i][j].item<bool>() ? '1' : '0';
    EXPECT_EQ(row, expected[i]) << "row " << i;
  }
}

TEST(EddBlockMask, BlockLengthsAreUniformInTheRangeAndAFunctionOfSeedAndStep) {
  std::vector<int> seen(11, 0);
  for (int64_t step = 0; step < 600; ++step) {
    const int64_t block = edd_block_length(3, step, 5, 10);
    ASSERT_GE(block, 5);
    ASSERT_LE(block, 10);
    ++seen[block];
    EXPECT_EQ(block, edd_block_length(3, step, 5, 10));
  }
  for (int block = 5; block <= 10; ++block) EXPECT_GT(seen[block], 60) << block;  // ~100 each
  EXPECT_EQ(edd_block_length(3, 0, 7, 7), 7);
}

// Token embeddings at positions 0..T-1 under a causal mask are exactly what
// forward_full runs.
TEST_F(TrainerTest, ForwardInputsOfEmbeddingsWithACausalMaskIsForwardFull) {
  ModelConfig shape = tiny_config("unused").model;
  shape.vocab_size = kVocabSize;
  auto model = CausalLM::random(shape, 5);
  const int64_t T = 12;
  const at::Tensor tokens = torch::randint(0, kVocabSize, {2, T}, torch::kLong);
  const at::Tensor causal = torch::ones({T, T}, torch::kBool).tril();
  torch::NoGradGuard no_grad;
  const at::Tensor expected = model->forward_full(tokens);
  const at::Tensor all = model->forward_inputs(model->embed_rows(tokens), torch::arange(T), causal, 0);
  EXPECT_LE((all - expected).abs().max().item<double>(), 1e-5);
  const at::Tensor tail = model->forward_inputs(model->embed_rows(tokens), torch::arange(T), causal, 5);
  ASSERT_EQ(tail.sizes(), at::IntArrayRef({2, T - 5, kVocabSize}));
  EXPECT_LE((tail - expected.narrow(1, 5, T - 5)).abs().max().item<double>(), 1e-5);
}

class EddTrainerTest : public TrainerTest {
 protected:
  // The EDD target: the suite's tiny model (2 layers), trained for 40 steps
  // so that its distribution is worth learning; once for the suite.
  static std::string target() {
    static const std::string dir = [] {
      const TrainConfig c = tiny_config("edd_target");
      EXPECT_TRUE(train(c).finished);
      return c.output;
    }();
    return dir;
  }
  static TrainConfig edd_config(const std::string& name) {
    // c.model is ignored: the shape is the target's (edd_model_config).
    TrainConfig c = tiny_config(name);
    c.tokenizer = {};  // defaults to the target's
    c.edd.target = target();
    c.edd.block_min = 3;
    c.edd.block_max = 6;
    return c;
  }
};

TEST_F(EddTrainerTest, KlToTheTargetFallsAndTheSavedDraftNamesItsLayer) {
  const TrainConfig c = edd_config("edd");
  const TrainResult r = train(c);
  ASSERT_TRUE(r.finished);
  ASSERT_EQ(r.kl.size(), 40u);
  for (size_t i = 0; i < r.losses.size(); ++i) EXPECT_NEAR(r.losses[i], r.kl[i], 1e-6);  // the objective is the KL
  const double first = std::accumulate(r.kl.begin(), r.kl.begin() + 5, 0.0) / 5;
  EXPECT_LT(mean_of_last(r.kl, 5), 0.6 * first) << "first KL " << first;
  EXPECT_TRUE(std::isfinite(r.final_eval_loss));
  EXPECT_LT(r.final_eval_loss, 0.6 * first);

  auto loaded = CausalLM::load(c.output);
  const ModelConfig& saved = loaded->config();
  const ModelConfig target = ModelConfig::from_file(c.edd.target + "/config.json");
  EXPECT_TRUE(saved.is_edd());
  EXPECT_EQ(saved.edd_target_layer, 0);  // 2 layers: n - 4 clamped to 0
  EXPECT_EQ(saved.num_hidden_layers, 1);
  EXPECT_EQ(saved.hidden_size, target.hidden_size);
  EXPECT_EQ(saved.intermediate_size, target.intermediate_size);
  EXPECT_EQ(saved.num_key_value_heads, target.num_key_value_heads);
  EXPECT_EQ(saved.vocab_size, target.vocab_size);
  EXPECT_TRUE(saved.tie_word_embeddings);
  const nlohmann::json config_json = nlohmann::json::parse(std::ifstream(c.output + "/config.json"));
  EXPECT_EQ(config_json["draft"], (nlohmann::json{{"kind", "edd"}, {"target_layer", 0}}));
  const nlohmann::json log = nlohmann::json::parse(std::ifstream(c.output + "/training_log.json"));
  EXPECT_EQ(log["config"]["edd"]["target_layer"], -1);  // as given; resolved in config.json
  EXPECT_FALSE(log["config"].contains("model"));
}

TEST_F(EddTrainerTest, StartsFromTheTargetsEmbeddingAndARandomLayer) {
  TrainConfig c = edd_config("edd_init");
  c.edd.target_layer = 1;
  TrainControl before_any_step;
  before_any_step.stop_after_step = 0;
  const TrainResult r = train(c, before_any_step);
  EXPECT_EQ(r.end_step, 0);
  LoadOptions parameters;
  parameters.keep_parameters = true;
  auto target = CausalLM::load(c.edd.target, parameters);
  const LlamaWeights& draft = r.model->weights();
  EXPECT_TRUE(draft.embed.equal(target->weights().embed));
  EXPECT_TRUE(draft.lm_head.weight.is_same(draft.embed));
  EXPECT_EQ(r.model->config().edd_target_layer, 1);
  // Everything else is CausalLM::random's initialisation with the config's seed.
  auto fresh = CausalLM::random(r.model->config(), c.seed, parameters);
  EXPECT_TRUE(draft.layers.at(0).qkv.weight.equal(fresh->weights().layers[0].qkv.weight));
  EXPECT_TRUE(draft.layers[0].down.weight.equal(fresh->weights().layers[0].down.weight));
  EXPECT_TRUE(draft.norm.equal(fresh->weights().norm));
}

TEST_F(EddTrainerTest, ResumeGivesTheWeightsOfAnUninterruptedRun) {
  TrainConfig whole = edd_config("edd_uninterrupted");
  whole.steps = 20;
  const TrainResult reference = train(whole);
  ASSERT_TRUE(reference.finished);
  TrainConfig parts = edd_config("edd_interrupted");
  parts.steps = 20;
  TrainControl stop_early;
  stop_early.stop_after_step = 9;
  EXPECT_FALSE(train(parts, stop_early).finished);
  parts.resume = true;
  const TrainResult second = train(parts);
  ASSERT_TRUE(second.finished);
  ASSERT_EQ(second.kl.size(), 11u);
  for (size_t i = 0; i < second.kl.size(); ++i) EXPECT_NEAR(second.kl[i], reference.kl[9 + i], 1e-6);
  EXPECT_LE(max_weight_difference(*reference.model, *second.model), 1e-6);
}

TEST_F(EddTrainerTest, ConfigErrorsNameTheField) {
  const fs::path dir = root_ / "edd_configs";
  fs::create_directories(dir / "target");
  fs::copy_file(root_ / "corpus.jsonl", dir / "corpus.jsonl", fs::copy_options::overwrite_existing);
  ModelConfig shape = tiny_config("unused").model;
  shape.vocab_size = kVocabSize;
  shape.num_hidden_layers = 5;
  CausalLM::random(shape, 0)->save((dir / "target").string(), torch::kFloat);
  fs::copy_file(root_ / "tokenizer" / "tokenizer.model", dir / "target" / "tokenizer.model",
                fs::copy_options::overwrite_existing);
  const nlohmann::json good = {
      {"edd", {{"target", "target"}}}, {"corpus", {"corpus.jsonl"}}, {"seq_len", 32}, {"output", "out"}};
  const std::string file = (dir / "train.json").string();
  auto parse = [&](const nlohmann::json& j) {
    std::ofstream(file) << j.dump();
    return TrainConfig::from_file(file);
  };
  const TrainConfig parsed = parse(good);
  EXPECT_EQ(parsed.edd.target, (dir / "target").string());
  EXPECT_EQ(parsed.edd.target_layer, 1);  // 5 layers: the 4th from last
  EXPECT_EQ(parsed.tokenizer.from_dir, (dir / "target").string());
  EXPECT_EQ(parsed.model.num_hidden_layers, 1);
  EXPECT_EQ(parsed.model.hidden_size, 32);
  EXPECT_EQ(parsed.model.edd_target_layer, 1);
  EXPECT_EQ(parsed.edd.block_min, 5);
  EXPECT_EQ(parsed.edd.block_max, 10);

  nlohmann::json j = good;
  j["model"] = {{"hidden_size", 32}, {"intermediate_size", 64}, {"num_hidden_layers", 1}, {"num_attention_heads", 4}};
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'model'", "edd"}));
  j = good;
  j["edd"]["target"] = "missing";
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kNotFound, {file, "'edd.target'", "missing"}));
  j = good;
  j["edd"]["target_layer"] = 5;
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'edd.target_layer'", "5 layers"}));
  j = good;
  j["edd"]["block_min"] = 0;
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'edd.block_max'"}));
  j = good;
  j["edd"]["blocks"] = 4;
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'edd.blocks'"}));
  j = good;
  j["distill"] = {{"teacher", "target"}};
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'distill'"}));
  j = good;
  j["tokenizer"] = {{"train", {{"vocab_size", kVocabSize}}}};
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'tokenizer'", "target"}));
  j = good;
  j["seq_len"] = 64;  // the target's context is 32
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'seq_len'"}));
}

}  // namespace
}  // namespace seed::models
