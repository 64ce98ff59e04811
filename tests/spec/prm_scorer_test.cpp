// Process reward models on tiny random models with hand-made heads: each
// kind's reward where it is known, scoring step by step through the prefix
// cache equal to scoring at once, calls from several threads equal to
// serial ones, and the errors of bad folders and requests.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/model_weights.h"
#include "models/reward/process_reward_model.h"
#include "models/safetensors.h"
#include "spec/reward/prm_scorer.h"
#include "tests/models/tiny_models.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;
using models::ModelConfig;
using models::NamedTensors;
using nlohmann::json;

// The zoo tokenizer (512 tokens; "#" after text is one token, "+" and "-"
// are one token each).
ModelConfig prm_config(const std::string& architecture, bool tied = false) {
  ModelConfig c = models::testing::tiny_config("llama");
  c.vocab_size = 512;
  c.max_position_embeddings = 512;
  c.tie_word_embeddings = tied;
  c.architecture = architecture;
  return c;
}

// A PRM folder in a temporary directory: random decoder weights (their LM
// head cut to `head_tokens` where given), `head` tensors beside them, the
// zoo tokenizer, and prm.json unless null.
class PrmFolder {
 public:
  PrmFolder(ModelConfig config, const json& prm, const NamedTensors& head, std::vector<int64_t> head_tokens = {}) {
    static int counter = 0;
    dir_ = fs::temp_directory_path() / ("seed_prm_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
    models::LlamaWeights weights = models::random_weights(config, 7, torch::TensorOptions().dtype(torch::kFloat));
    if (!head_tokens.empty()) models::keep_head_rows(weights, config, torch::tensor(head_tokens));
    config.save((dir_ / "config.json").string());
    NamedTensors tensors = models::to_named_tensors(weights, config, torch::kFloat);
    tensors.insert(tensors.end(), head.begin(), head.end());
    models::write_checkpoint(dir_.string(), tensors);
    fs::copy_file(fs::path(SEED_ZOO_DIR) / "tokenizer/tokenizer.model", dir_ / "tokenizer.model");
    if (!prm.is_null()) std::ofstream(dir_ / "prm.json") << prm.dump();
  }
  ~PrmFolder() { fs::remove_all(dir_); }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

models::KvCacheOptions without_prefix_cache() {
  models::KvCacheOptions options;
  options.prefix_cache = false;
  return options;
}

const json kStepTag = {{"kind", "step_tag"}, {"step_tag", "#"}, {"good", "+"}, {"bad", "-"}};

// A classifier whose hidden layer is all zeros: reward softmax(b2)[1].
NamedTensors constant_classifier(int64_t hidden, double logit_good) {
  return {{"score.0.weight", torch::zeros({hidden, hidden})},
          {"score.0.bias", torch::zeros({hidden})},
          {"score.2.weight", torch::zeros({2, hidden})},
          {"score.2.bias", torch::tensor({0.0f, static_cast<float>(logit_good)})}};
}

ScoreRequest game24_request(size_t steps, size_t first = 0) {
  const std::vector<std::string> all = {"4 + 8 = 12 (left: 4 6 12) #\n", "6 - 4 = 2 (left: 2 12) #\n",
                                        "12 * 2 = 24 (left: 24) #\n"};
  return {"Input: 4 4 6 8\n", {all.begin(), all.begin() + steps}, first};
}

TEST(ProcessRewardModel, ForwardHiddenTimesTheTiedEmbeddingIsTheLogits) {
  const ModelConfig c = prm_config("", /*tied=*/true);
  const auto model = models::CausalLM::random(c, 3, models::testing::keeping_parameters());
  models::KvCache a = model->make_cache(), b = model->make_cache();
  const std::vector<int32_t> tokens = {1, 40, 41, 42, 300, 7};
  const at::Tensor logits = model->forward({{a.create(), tokens, {}}}, a, models::LogitsFor::kTail);
  const at::Tensor hidden = model->forward_hidden({{b.create(), tokens, {}}}, b, models::LogitsFor::kTail);
  ASSERT_EQ(hidden.sizes(), (std::vector<int64_t>{6, c.hidden_size}));
  EXPECT_TRUE(torch::allclose(torch::matmul(hidden, model->weights().embed.t()), logits, 1e-4, 1e-4));
}

TEST(ProcessRewardModel, AClassifierWithAKnownHeadGivesItsReward) {
  const ModelConfig c = prm_config("Qwen2ForProcessRewardModel");
  const PrmFolder folder(c, {{"kind", "classifier"}, {"step_tag", "#"}}, constant_classifier(c.hidden_size, std::log(3.0)));
  PrmScorer scorer(models::ProcessRewardModel::load(folder.path()));
  const std::vector<StepScores> scores = scorer.score({game24_request(3)});
  ASSERT_EQ(scores[0].rewards.size(), 3u);
  for (const double r : scores[0].rewards) EXPECT_NEAR(r, 0.75, 1e-6);  // softmax(0, ln 3)[1]
}

TEST(ProcessRewardModel, AValueHeadWithAKnownBiasGivesItsSigmoid) {
  const ModelConfig c = prm_config("LlamaForCausalLM");
  const PrmFolder folder(c, {{"kind", "value_head"}, {"step_tag", "#"}},
                         {{"v_head.summary.weight", torch::zeros({1, c.hidden_size})},
                          {"v_head.summary.bias", torch::tensor({static_cast<float>(std::log(3.0))})}});
  PrmScorer scorer(models::ProcessRewardModel::load(folder.path()));
  const std::vector<StepScores> scores = scorer.score({game24_request(2)});
  ASSERT_EQ(scores[0].rewards.size(), 2u);
  for (const double r : scores[0].rewards) EXPECT_NEAR(r, 0.75, 1e-6);  // sigmoid(ln 3)
}

TEST(ProcessRewardModel, AStepTagModelReadsTheGoodAndBadLogitsAtEachTag) {
  const ModelConfig c = prm_config("LlamaForCausalLM");
  const PrmFolder folder(c, kStepTag, {});
  const std::shared_ptr<const models::ProcessRewardModel> prm = models::ProcessRewardModel::load(folder.path());
  PrmScorer scorer(prm);
  const std::vector<double> rewards = scorer.score({game24_request(3)})[0].rewards;

  // The reference: the whole text's logits, read at each "#".
  const ScoreRequest request = game24_request(3);
  std::string text = request.prefix;
  for (const std::string& step : request.steps) text += step;
  const std::vector<int32_t> tokens = prm->tokenizer().encode(text, true);
  const int32_t tag = models::single_token(prm->tokenizer(), "#", "tag");
  const int32_t good = models::single_token(prm->tokenizer(), "+", "good");
  const int32_t bad = models::single_token(prm->tokenizer(), "-", "bad");
  models::KvCache cache = prm->model().make_cache(without_prefix_cache());
  const at::Tensor logits =
      prm->model().forward({{cache.create(), tokens, {}}}, cache, models::LogitsFor::kTail).contiguous();
  std::vector<double> expected;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] != tag) continue;
    const double margin = logits[i][good].item<double>() - logits[i][bad].item<double>();
    expected.push_back(1 / (1 + std::exp(-margin)));
  }
  ASSERT_EQ(expected.size(), 3u);
  for (size_t s = 0; s < 3; ++s) EXPECT_NEAR(rewards[s], expected[s], 1e-5) << "step " << s;
  EXPECT_NE(rewards[0], rewards[1]);  // a random model's steps differ
}

// A step-tag PRM whose LM head keeps some of the tokens reads the rows of
// its good and bad tokens, numbered apart from the tokens: the whole
// head's rewards. A head without them is an error naming the field.
TEST(ProcessRewardModel, AStepTagModelOfACutHeadReadsTheRowsOfItsTokens) {
  const ModelConfig c = prm_config("LlamaForCausalLM");
  const PrmFolder whole(c, kStepTag, {});
  const std::shared_ptr<const models::ProcessRewardModel> whole_prm = models::ProcessRewardModel::load(whole.path());
  const int32_t good = models::single_token(whole_prm->tokenizer(), "+", "good");
  const int32_t bad = models::single_token(whole_prm->tokenizer(), "-", "bad");
  std::vector<int64_t> kept = {good, bad};
  for (int64_t t = 1; t < 512; t += 5) {
    if (t != good && t != bad) kept.push_back(t);
  }
  std::sort(kept.begin(), kept.end());
  const PrmFolder cut(c, kStepTag, {}, kept);
  const std::vector<double> expected = PrmScorer(whole_prm).score({game24_request(3)})[0].rewards;
  const std::shared_ptr<const models::ProcessRewardModel> cut_prm = models::ProcessRewardModel::load(cut.path());
  const std::vector<double> rewards = PrmScorer(cut_prm).score({game24_request(3)})[0].rewards;
  ASSERT_EQ(rewards.size(), 3u);
  for (size_t s = 0; s < 3; ++s) EXPECT_NEAR(rewards[s], expected[s], 1e-5) << "step " << s;
  kept.erase(std::find(kept.begin(), kept.end(), int64_t{good}));
  const PrmFolder without_good(c, kStepTag, {}, kept);
  EXPECT_TRUE(::seed::testing::throws_error([&] { models::ProcessRewardModel::load(without_good.path()); },
                                            ErrorKind::kInvalidArgument, {"prm.json", "'good'", "not among"}));
}

// Skywork-PRM's reading: each step's text apart, its "\n" tag's token
// after it. Whole, the zoo tokenizer (as Qwen2's) merges ")\n" into one
// token, which leaves the steps without their tags.
TEST(ProcessRewardModel, AValueHeadReadsEachStepApartWithItsTagTokenAfterIt) {
  const ModelConfig c = prm_config("LlamaForCausalLM");
  const NamedTensors head = {{"v_head.summary.weight", torch::randn({1, c.hidden_size}) / 4},
                             {"v_head.summary.bias", torch::zeros({1})}};
  const PrmFolder folder(c, {{"kind", "value_head"}, {"step_tag", "\n"}}, head);
  const std::shared_ptr<const models::ProcessRewardModel> prm = models::ProcessRewardModel::load(folder.path());
  const ScoreRequest request{"Input: 4 4 6 8\n", {"4 + 8 = 12 (left: 4 6 12)\n", "6 - 4 = 2 (left: 2 12)\n"}, 0};
  const models::Tokenizer& tokenizer = prm->tokenizer();
  const int32_t tag = models::single_token(tokenizer, "\n", "tag");
  const std::vector<int32_t> merged = tokenizer.encode(request.steps[0], false);
  ASSERT_EQ(std::count(merged.begin(), merged.end(), tag), 0)
      << "the zoo tokenizer no longer merges the tag: this test checks nothing";

  std::vector<int32_t> tokens = tokenizer.encode(request.prefix, true);
  std::vector<int64_t> tags;
  for (const std::string& step : request.steps) {
    const std::vector<int32_t> text = tokenizer.encode(step.substr(0, step.size() - 1), false);
    tokens.insert(tokens.end(), text.begin(), text.end());
    tags.push_back(static_cast<int64_t>(tokens.size()));
    tokens.push_back(tag);
  }
  models::KvCache cache = prm->model().make_cache(without_prefix_cache());
  const at::Tensor rewards =
      prm->rewards(prm->model().forward_hidden({{cache.create(), tokens, {}}}, cache, models::LogitsFor::kTail));

  PrmScorer scorer(prm);
  const std::vector<double> at_once = scorer.score({request})[0].rewards;
  ASSERT_EQ(at_once.size(), 2u);
  for (size_t s = 0; s < 2; ++s) EXPECT_NEAR(at_once[s], rewards[tags[s]].item<double>(), 1e-5) << "step " << s;
  EXPECT_NE(at_once[0], at_once[1]);
  PrmScorer stepwise(prm);
  ScoreRequest first = request, second = request;
  first.steps.resize(1);
  second.first = 1;
  EXPECT_NEAR(stepwise.score({first})[0].rewards[0], at_once[0], 1e-5);
  EXPECT_NEAR(stepwise.score({second})[0].rewards[0], at_once[1], 1e-5);

  ScoreRequest untagged = request;
  untagged.steps[1] = "6 - 4 = 2\n(left: 2 12)\n";
  EXPECT_TRUE(seed::testing::throws_error([&] { scorer.score({untagged}); }, ErrorKind::kInvalidArgument,
                                          {"request 0, step 1", "step tag", "once"}));

  const PrmFolder whole(c, {{"kind", "value_head"}, {"step_tag", "\n"}, {"tokenize", "whole"}}, head);
  PrmScorer whole_scorer(models::ProcessRewardModel::load(whole.path()));
  EXPECT_TRUE(seed::testing::throws_error([&] { whole_scorer.score({request}); }, ErrorKind::kInvalidArgument,
                                          {"step tags", "\"tokenize\": \"steps\""}));
}

TEST(ProcessRewardModel, ScoringStepByStepComputesOnlyTheNewStepsAndEqualsScoringAtOnce) {
  const PrmFolder folder(prm_config("LlamaForCausalLM"), kStepTag, {});
  const std::shared_ptr<const models::ProcessRewardModel> prm = models::ProcessRewardModel::load(folder.path());
  PrmScorer at_once(prm, without_prefix_cache());
  const StepScores whole = at_once.score({game24_request(3)})[0];

  PrmScorer stepwise(prm);
  int64_t computed = 0, scored = 0;
  for (size_t t = 1; t <= 3; ++t) {
    const StepScores step = stepwise.score({game24_request(t, t - 1)})[0];
    ASSERT_EQ(step.rewards.size(), 1u);
    EXPECT_NEAR(step.rewards[0], whole.rewards[t - 1], 1e-5) << "step " << t;
    const int64_t step_tokens = step.usage.scored_tokens;
    if (t > 1) {
      EXPECT_LT(step.usage.computed_tokens, step_tokens + PrmScorer::kBlockSize) << "step " << t;
    }
    computed += step.usage.computed_tokens;
    scored += step.usage.scored_tokens;
  }
  EXPECT_GT(whole.usage.computed_tokens, whole.usage.scored_tokens);  // the prefix is read, not scored
  EXPECT_EQ(scored, whole.usage.scored_tokens);
  EXPECT_LT(computed, whole.usage.computed_tokens + 2 * PrmScorer::kBlockSize);
}

TEST(ProcessRewardModel, CallsFromSeveralThreadsGetTheSerialScores) {
  const PrmFolder folder(prm_config("LlamaForCausalLM"), kStepTag, {});
  const std::shared_ptr<const models::ProcessRewardModel> prm = models::ProcessRewardModel::load(folder.path());
  std::vector<std::vector<ScoreRequest>> calls;
  for (size_t i = 0; i < 6; ++i) {
    ScoreRequest r = game24_request(1 + i % 3);
    r.prefix = "Input: " + std::to_string(i) + " 4 6 8\n";
    calls.push_back({r, game24_request(1 + (i + 1) % 3)});
  }
  std::vector<std::vector<StepScores>> serial, concurrent(calls.size());
  {
    PrmScorer scorer(prm);
    for (const auto& call : calls) serial.push_back(scorer.score(call));
  }
  PrmScorer scorer(prm);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < calls.size(); ++i) threads.emplace_back([&, i] { concurrent[i] = scorer.score(calls[i]); });
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < calls.size(); ++i) {
    for (size_t r = 0; r < calls[i].size(); ++r) {
      ASSERT_EQ(concurrent[i][r].rewards.size(), serial[i][r].rewards.size());
      for (size_t s = 0; s < serial[i][r].rewards.size(); ++s) {
        EXPECT_NEAR(concurrent[i][r].rewards[s], serial[i][r].rewards[s], 1e-5) << "call " << i << " request " << r;
      }
    }
  }
}

TEST(ProcessRewardModel, BadFoldersAreNamedInTheError) {
  const ModelConfig c = prm_config("LlamaForCausalLM");
  {
    const PrmFolder folder(c, nullptr, {});
    EXPECT_TRUE(seed::testing::throws_error([&] { models::ProcessRewardModel::load(folder.path()); }, ErrorKind::kNotFound, {"prm.json"}));
  }
  {
    json prm = kStepTag;
    prm["tokenize"] = "bytes";
    const PrmFolder folder(c, prm, {});
    EXPECT_TRUE(seed::testing::throws_error([&] { models::ProcessRewardModel::load(folder.path()); },
                                            ErrorKind::kInvalidArgument, {"'tokenize'", "bytes"}));
  }
  {
    const PrmFolder folder(c, {{"kind", "critic"}, {"step_tag", "#"}}, {});
    EXPECT_TRUE(seed::testing::throws_error([&] { models::ProcessRewardModel::load(folder.path()); }, ErrorKind::kInvalidArgument, {"'kind'"}));
  }
  {
    const PrmFolder folder(c, {{"kind", "step_tag"}, {"step_tag", "#"}, {"good", "not a label"}, {"bad", "-"}}, {});
    EXPECT_TRUE(seed::testing::throws_error([&] { models::ProcessRewardModel::load(folder.path()); }, ErrorKind::kInvalidArgument, {"'good'"}));
  }
  {
    const PrmFolder folder(c, {{"kind", "step_tag"}, {"step_tag", "step end"}, {"good", "+"}, {"bad", "-"}}, {});
    EXPECT_TRUE(seed::testing::throws_error([&] { models::ProcessRewardModel::load(folder.path()); }, ErrorKind::kInvalidArgument, {"'step_tag'"}));
  }
  {
    const PrmFolder folder(prm_config("Qwen2ForProcessRewardModel"), {{"kind", "classifier"}, {"step_tag", "#"}}, {});
    EXPECT_TRUE(seed::testing::throws_error([&] { models::ProcessRewardModel::load(folder.path()); }, ErrorKind::kNotFound, {"score.0.weight"}));
  }
}

TEST(ProcessRewardModel, ARequestWhoseStepsLackTheTagFailsOnlyItsCall) {
  const PrmFolder folder(prm_config("LlamaForCausalLM"), kStepTag, {});
  PrmScorer scorer(models::ProcessRewardModel::load(folder.path()));
  ScoreRequest untagged = game24_request(2);
  untagged.steps[1] = "6 - 4 = 2 (left: 2 12)\n";
  EXPECT_TRUE(seed::testing::throws_error([&] { scorer.score({untagged}); }, ErrorKind::kInvalidArgument, {"step tags"}));
  EXPECT_TRUE(seed::testing::throws_error([&] { scorer.score({ScoreRequest{"x", {}, 0}}); }, ErrorKind::kInvalidArgument, {"no steps"}));
  EXPECT_EQ(scorer.score({game24_request(2)})[0].rewards.size(), 2u);
}

}  // namespace
}  // namespace seed::spec
