// The trainer on a tiny model (hidden 32, 2 layers, seq_len 32) and a
// generated arithmetic corpus: loss falls, resume reproduces an uninterrupted
// run, the saved folder reloads with the same logits, only completions are
// learned, config errors name their field, distillation shrinks the KL; the
// EDD layout (edd_block_mask), its input path (forward_inputs) and EDD
// training against a tiny trained target.
#include "models/training/trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "models/tokenizer.h"
#include "models/training/edd_mask.h"
#include "models/training/train_checkpoint.h"
#include "models/training/training_data.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;
using seed::testing::throws_error;

constexpr int kVocabSize = 300;
constexpr int kCorpusLines = 400;

// "what is 7 plus 5 =" -> " 12": short examples, several to a row.
std::vector<Example> arithmetic_examples(int count, uint32_t seed) {
  const char* ops[] = {"plus", "minus", "times"};
  std::mt19937 rng(seed);
  std::vector<Example> out;
  for (int i = 0; i < count; ++i) {
    const int a = static_cast<int>(rng() % 20), b = static_cast<int>(rng() % 10), op = i % 3;
    const int c = op == 0 ? a + b : op == 1 ? a - b : a * b;
    out.push_back({"what is " + std::to_string(a) + " " + ops[op] + " " + std::to_string(b) + " =",
                   " " + std::to_string(c)});
  }
  return out;
}

void write_jsonl(const fs::path& path, const std::vector<Example>& examples) {
  std::ofstream out(path);
  for (const Example& e : examples) {
    out << nlohmann::json{{"prompt", e.prompt}, {"completion", e.completion}, {"source", "test"}}.dump() << "\n";
  }
}

double mean_of_last(const std::vector<double>& values, size_t n) {
  return std::accumulate(values.end() - static_cast<std::ptrdiff_t>(n), values.end(), 0.0) / static_cast<double>(n);
}

double max_weight_difference(CausalLM& a, CausalLM& b) {
  const auto pa = a.weights().parameters(), pb = b.weights().parameters();
  EXPECT_EQ(pa.size(), pb.size());
  double diff = 0;
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    diff = std::max(diff, (pa[i] - pb[i]).abs().max().item<double>());
  }
  return diff;
}

class TrainerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("seed_trainer_test_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "tokenizer");
    const std::vector<Example> corpus = arithmetic_examples(kCorpusLines, 7);
    write_jsonl(root_ / "corpus.jsonl", corpus);
    std::vector<std::string> text;
    for (const Example& e : corpus) text.push_back(e.prompt + e.completion);
    train_sentencepiece(text, kVocabSize, (root_ / "tokenizer" / "tokenizer.model").string());
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  // A tiny run writing into root/<name>, with the suite's tokenizer.
  static TrainConfig tiny_config(const std::string& name) {
    TrainConfig c;
    c.source = "test-config.json";
    c.model.hidden_size = 32;
    c.model.intermediate_size = 64;
    c.model.num_hidden_layers = 2;
    c.model.num_attention_heads = 4;
    c.model.num_key_value_heads = 2;
    c.model.head_dim = 8;
    c.model.max_position_embeddings = 32;
    c.model.tie_word_embeddings = true;
    c.corpus = {(root_ / "corpus.jsonl").string()};
    c.eval_fraction = 0.1;
    c.tokenizer.from_dir = (root_ / "tokenizer").string();
    c.batch_size = 8;
    c.seq_len = 32;
    c.steps = 40;
    c.lr = 1e-2;
    c.min_lr = 1e-3;
    c.warmup_steps = 4;
    c.eval_interval = 20;
    c.eval_batches = 2;
    c.checkpoint_interval = 0;
    c.output = (root_ / name).string();
    c.seed = 1;
    return c;
  }

  static inline fs::path root_;
};

TEST_F(TrainerTest, LossFallsOnATinyCorpusWithATrainedTokenizer) {
  TrainConfig c = tiny_config("loss_falls");
  c.tokenizer = {};
  c.tokenizer.train_vocab_size = kVocabSize;
  std::vector<TrainEvent::Kind> kinds;
  const TrainResult r = train(c, {[&](const TrainEvent& e) { kinds.push_back(e.kind); }});
  ASSERT_TRUE(r.finished);
  ASSERT_EQ(r.losses.size(), 40u);
  EXPECT_LT(mean_of_last(r.losses, 5), 0.7 * r.losses.front()) << "first loss " << r.losses.front();
  EXPECT_TRUE(std::isfinite(r.final_eval_loss));
  EXPECT_LT(r.final_eval_loss, 0.7 * r.losses.front());
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), TrainEvent::Kind::kStep), 40);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), TrainEvent::Kind::kEval), 2);  // step 20 and the end
  for (const char* file : {"config.json", "model.safetensors", "tokenizer.model", "training_log.json"}) {
    EXPECT_TRUE(fs::exists(fs::path(c.output) / file)) << file;
  }
  const ModelConfig saved = ModelConfig::from_file(c.output + "/config.json");
  EXPECT_EQ(saved.vocab_size, kVocabSize);
  EXPECT_EQ(saved.bos_token_id, 1);
  EXPECT_EQ(saved.eos_token_ids, std::vector<int64_t>{2});
  const nlohmann::json log = nlohmann::json::parse(std::ifstream(c.output + "/training_log.json"));
  EXPECT_EQ(log["steps"], 40);
  EXPECT_GT(log["tokens_per_second"].get<double>(), 0);
}

// bfloat16 matrix products (mixed precision) learn as float32 does, and the
// saved weights are float32.
TEST_F(TrainerTest, BfloatPrecisionTrainsLikeFloat32) {
  const TrainResult exact = train(tiny_config("precision_float32"));
  TrainConfig c = tiny_config("precision_bfloat16");
  c.precision = "bfloat16";
  const TrainResult mixed = train(c);
  ASSERT_TRUE(exact.finished && mixed.finished);
  EXPECT_LT(mean_of_last(mixed.losses, 5), 0.7 * mixed.losses.front());
  EXPECT_NEAR(mixed.final_eval_loss, exact.final_eval_loss, 0.1 * exact.final_eval_loss);
  EXPECT_EQ(ModelConfig::from_file(c.output + "/config.json").torch_dtype, "float32");
  const nlohmann::json log = nlohmann::json::parse(std::ifstream(c.output + "/training_log.json"));
  EXPECT_EQ(log["config"]["precision"], "bfloat16");
}

TEST_F(TrainerTest, SavedModelReloadsWithIdenticalLogits) {
  const TrainConfig c = tiny_config("reload");
  const TrainResult r = train(c);
  ASSERT_TRUE(r.finished);
  auto loaded = CausalLM::load(c.output);
  const at::Tensor tokens = torch::randint(0, kVocabSize, {2, 32}, torch::kLong);
  torch::NoGradGuard no_grad;
  const at::Tensor expected = r.model->forward_full(tokens);
  const at::Tensor actual = loaded->forward_full(tokens);
  EXPECT_LE((expected - actual).abs().max().item<double>(), 1e-6);
}

TEST_F(TrainerTest, ResumeAfterAStopGivesTheWeightsOfAnUninterruptedRun) {
  TrainConfig whole = tiny_config("uninterrupted");
  whole.steps = 30;
  whole.checkpoint_interval = 10;
  const TrainResult reference = train(whole);
  ASSERT_TRUE(reference.finished);

  TrainConfig parts = whole;
  parts.output = (root_ / "interrupted").string();
  TrainControl stop_early;
  stop_early.stop_after_step = 17;  // between checkpoints: the stop writes its own
  const TrainResult first = train(parts, stop_early);
  EXPECT_FALSE(first.finished);
  EXPECT_EQ(first.end_step, 17);
  EXPECT_FALSE(fs::exists(parts.output + "/model.safetensors"));
  EXPECT_EQ(find_checkpoint(parts.output), parts.output + "/checkpoint");

  EXPECT_TRUE(throws_error([&] { train(parts); }, ErrorKind::kInvalidArgument, {"--resume"}));
  parts.resume = true;
  const TrainResult second = train(parts);
  ASSERT_TRUE(second.finished);
  EXPECT_EQ(second.start_step, 17);
  EXPECT_EQ(second.losses.size(), 13u);
  // The losses of the resumed steps are those of the same steps uninterrupted.
  for (size_t i = 0; i < second.losses.size(); ++i) EXPECT_NEAR(second.losses[i], reference.losses[17 + i], 1e-6);
  EXPECT_LE(max_weight_difference(*reference.model, *second.model), 1e-6);

  TrainConfig changed = parts;
  changed.lr = 2e-2;
  EXPECT_TRUE(throws_error([&] { train(changed); }, ErrorKind::kInvalidArgument, {"test-config.json", "'lr'"}));
}

TEST_F(TrainerTest, LossMaskCoversOnlyTheCompletionAndEos) {
  auto tokenizer = load_tokenizer((root_ / "tokenizer").string());
  const Example example{"what is 3 plus 4 =", " 7"};
  bool merged = true;
  const TokenizedExample t = tokenize_example(*tokenizer, example, &merged);
  EXPECT_FALSE(merged);
  EXPECT_EQ(t.tokens.front(), tokenizer->bos_id());
  EXPECT_EQ(t.tokens.back(), tokenizer->eos_id());
  EXPECT_EQ(t.completion_begin, 1 + static_cast<int64_t>(tokenizer->encode(example.prompt, false).size()));
  EXPECT_EQ(tokenizer->decode({t.tokens.begin() + t.completion_begin, t.tokens.end()}), "7");

  const PackedRows rows = pack_examples({t, t}, {0, 1}, 33, tokenizer->eos_id());
  ASSERT_EQ(rows.rows(), 1);
  const auto n = static_cast<int64_t>(t.tokens.size());
  for (int64_t i = 0; i < 33; ++i) {
    const int64_t in_example = i % n;
    const bool learned = i < 2 * n && in_example >= t.completion_begin;
    EXPECT_EQ(rows.loss_mask[i], learned ? 1 : 0) << "position " << i;
  }
}

TEST_F(TrainerTest, NoisePromptsDoNotStopTheCompletionFromBeingLearned) {
  // Random-letter prompts and a fixed completion. Learned unmasked, the 12
  // letters alone would average >= 12 ln(26) / 16 = 2.4 nats a token; masked,
  // the completion is certain after the prompt's closing " =".
  std::mt19937 rng(3);
  std::vector<Example> noise;
  for (int i = 0; i < 200; ++i) {
    std::string prompt;
    for (int j = 0; j < 12; ++j) prompt += static_cast<char>('a' + rng() % 26);
    noise.push_back({prompt + " =", " ok"});
  }
  write_jsonl(root_ / "noise.jsonl", noise);
  TrainConfig c = tiny_config("noise");
  c.corpus = {(root_ / "noise.jsonl").string()};
  const TrainResult r = train(c);
  EXPECT_LT(mean_of_last(r.ce, 5), 0.5);
}

TEST_F(TrainerTest, ConfigErrorsNameTheFileAndField) {
  const fs::path dir = root_ / "configs";
  fs::create_directories(dir);
  fs::copy_file(root_ / "corpus.jsonl", dir / "corpus.jsonl", fs::copy_options::overwrite_existing);
  nlohmann::json good = {{"model", {{"hidden_size", 32}, {"intermediate_size", 64}, {"num_hidden_layers", 2},
                                    {"num_attention_heads", 4}}},
                         {"corpus", {"corpus.jsonl"}},
                         {"tokenizer", {{"train", {{"vocab_size", kVocabSize}}}}},
                         {"seq_len", 32},
                         {"output", "out"}};
  auto parse = [&](const nlohmann::json& j) {
    const std::string path = (dir / "train.json").string();
    std::ofstream(path) << j.dump();
    return TrainConfig::from_file(path);
  };
  const TrainConfig parsed = parse(good);
  EXPECT_EQ(parsed.corpus[0], (dir / "corpus.jsonl").string());  // relative to the config file
  EXPECT_EQ(parsed.model.max_position_embeddings, 32);           // defaults to seq_len
  EXPECT_DOUBLE_EQ(parsed.min_lr, parsed.lr / 10);
  const std::string file = (dir / "train.json").string();

  nlohmann::json j = good;
  j["learning_rate"] = 1e-3;
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'learning_rate'"}));
  j = good;
  j["model"]["hiden_size"] = 32;
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'model.hiden_size'"}));
  j = good;
  j["corpus"].push_back("missing.jsonl");
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kNotFound, {file, "'corpus[1]'", "missing.jsonl"}));
  j = good;
  j["betas"] = {0.9, 1.5};
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'betas'"}));
  j = good;
  j["precision"] = "float16";
  EXPECT_TRUE(throws_error([&] { parse(j); }, ErrorKind::kInvalidArgument, {file, "'precision'", "bfloat16"}));

  // A teacher with another vocabulary cannot teach this tokenizer's ids.
  ModelConfig other = tiny_config("unused").model;
  other.vocab_size = 64;
  CausalLM::random(other, 0)->save((root_ / "small_vocab").string(), torch::kFloat);
  TrainConfig c = tiny_config("bad_teacher");
  c.distill.teacher = (root_ / "small_vocab").string();
  EXPECT_TRUE(throws_error([&] { train(c); }, ErrorKind::kInvalidArgument,
                           {"test-config.json", "'distill.teacher'", "vocab_size 64"}));
}

TEST_F(TrainerTest, DistillationShrinksTheKlToTheTeacher) {
  const TrainConfig teacher = tiny_config("teacher");
  ASSERT_TRUE(train(teacher).finished);
  TrainConfig student = tiny_config("student");
  student.model.intermediate_size = 32;
  student.model.num_hidden_layers = 1;
  student.tokenizer.from_dir = teacher.output;
  student.distill.teacher = teacher.output;
  student.distill.alpha = 0.5;
  student.distill.temperature = 1.0;
  student.steps = 30;
  const TrainResult r = train(student);
  ASSERT_TRUE(r.finished);
  ASSERT_EQ(r.kl.size(), 30u);
  EXPECT_GT(r.kl.front(), 0);
  EXPECT_LT(mean_of_last(r.kl, 5), 0.7 * r.kl.front());
  for (size_t i = 0; i < r.losses.size(); ++i) EXPECT_NEAR(r.losses[i], 0.5 * r.ce[i] + 0.5 * r.kl[i], 1e-4);
}

TEST_F(TrainerTest, InitContinuesFromATrainedModelsWeights) {
  const TrainConfig base = tiny_config("init_base");
  const TrainResult trained = train(base);
  ASSERT_TRUE(trained.finished);

  // A run from the base model's weights starts at (about) the loss the base
  // run ended at, far below a random initialisation's first loss.
  TrainConfig more = tiny_config("init_more");
  more.init = base.output;
  more.steps = 5;
  more.lr = 1e-4;
  more.min_lr = 1e-5;
  more.warmup_steps = 1;
  const TrainResult continued = train(more);
  ASSERT_TRUE(continued.finished);
  EXPECT_LT(continued.losses.front(), 0.5 * trained.losses.front());
  EXPECT_NEAR(continued.losses.front(), mean_of_last(trained.losses, 5), 0.25 * mean_of_last(trained.losses, 5));
  // lr 1e-4 for 5 steps moves no weight far from where the base ended.
  EXPECT_LE(max_weight_difference(*trained.model, *continued.model), 5e-3);

  TrainConfig other_shape = more;
  other_shape.output = (root_ / "init_other_shape").string();
  other_shape.model.intermediate_size = 32;
  EXPECT_TRUE(throws_error([&] { train(other_shape); }, ErrorKind::kInvalidArgument,
                           {"test-config.json", "'init'", "intermediate 64", "intermediate 32"}));

  ModelConfig small_vocab = more.model;
  small_vocab.vocab_size = 64;
  CausalLM::random(small_vocab, 0)->save((root_ / "init_small_vocab").string(), torch::kFloat);
  TrainConfig other_vocab = more;
  other_vocab.output = (root_ / "init_other_vocab").string();
  other_vocab.init = (root_ / "init_small_vocab").string();
  EXPECT_TRUE(throws_error([&] { train(other_vocab); }, ErrorKind::kInvalidArgument,
                           {"test-config.json", "'init'", "vocab_size 64"}));
}

TEST_F(TrainerTest, LearningRateWarmsUpLinearlyThenDecaysToMinLr) {
  TrainConfig c = tiny_config("schedule");
  c.steps = 100;
  c.warmup_steps = 10;
  EXPECT_DOUBLE_EQ(learning_rate(c, 0), c.lr / 10);
  EXPECT_DOUBLE_EQ(learning_rate(c, 4), c.lr / 2);
  EXPECT_DOUBLE_EQ(learning_rate(c, 10), c.lr);
  EXPECT_NEAR(learning_rate(c, 99), c.min_lr, 1e-12);
  for (int64_t s = 11; s < 100; ++s) EXPECT_LT(learning_rate(c, s), learning_rate(c, s - 1)) << s;
}

TEST_F(TrainerTest, DataOrderIsAFunctionOfSeedAndEpochAndSeekReproducesIt) {
  const std::vector<int64_t> a = shuffled_indices(50, 9, 0);
  EXPECT_EQ(a, shuffled_indices(50, 9, 0));
  EXPECT_NE(a, shuffled_indices(50, 9, 1));
  EXPECT_NE(a, shuffled_indices(50, 10, 0));
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);

  auto tokenizer = load_tokenizer((root_ / "tokenizer").string());
  std::vector<TokenizedExample> examples;
  for (const Example& e : arithmetic_examples(60, 5)) examples.push_back(tokenize_example(*tokenizer, e, nullptr));
  TrainingData data(examples, 33, tokenizer->eos_id(), 4);
  std::vector<int32_t> skip, expected, actual;
  std::vector<uint8_t> mask;
  data.next_rows(data.epoch_rows().rows() + 3, &skip, &mask);  // into epoch 1
  const DataPosition saved = data.position();
  EXPECT_EQ(saved.epoch, 1);
  data.next_rows(40, &expected, &mask);
  TrainingData fresh(examples, 33, tokenizer->eos_id(), 4);
  fresh.seek(saved);
  fresh.next_rows(40, &actual, &mask);
  EXPECT_EQ(actual, expected);
}

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
