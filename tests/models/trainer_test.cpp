// The trainer on a tiny model (hidden 32, 2 layers, seq_len 32) and a
// generated arithmetic corpus: loss falls, in float32 and in bfloat16,
// resume reproduces an uninterrupted run, the saved folder reloads with the
// same logits, config errors name their field, distillation shrinks the KL,
// a run continues from a trained model's weights, the learning rate warms up
// then decays.
#include "models/training/trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/training/train_checkpoint.h"
#include "tests/models/trainer_fixture.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

using seed::testing::throws_error;

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

}  // namespace
}  // namespace seed::models
