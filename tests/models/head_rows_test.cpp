// An LM head over a part of the vocabulary (ModelConfig::draft_vocab_size):
// it scores its tokens as the whole head does and every other token -inf,
// in every forward, and its folder keeps it (EAGLE-3's d2t).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <limits>
#include <string>
#include <tuple>
#include <unistd.h>

#include "models/causal_lm.h"
#include "models/safetensors.h"
#include "tests/models/reference_logits.h"
#include "tests/models/tiny_models.h"
#include "tests/throws_error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::throws_error;

// Of the 64 tokens, 24 scattered ones, the first and last among them.
at::Tensor kept_tokens() {
  std::vector<int64_t> ids;
  for (int64_t t = 0; t <= 60; t += 3) ids.push_back(t);
  ids.push_back(63);
  return torch::tensor(ids);
}

// logits [..., V]: the kept columns equal `whole`'s, the others are -inf.
void expect_head_over(const at::Tensor& logits, const at::Tensor& whole, const at::Tensor& kept) {
  ASSERT_EQ(logits.sizes(), whole.sizes());
  const at::Tensor columns = kept.to(logits.device());
  EXPECT_LT(max_diff(logits.index_select(-1, columns), whole.index_select(-1, columns)), 1e-5);
  at::Tensor others = torch::ones({logits.size(-1)}, torch::kBool);
  others.index_fill_(0, kept, false);
  const at::Tensor rest = logits.index_select(-1, torch::nonzero(others).squeeze(1).to(logits.device()));
  EXPECT_TRUE(torch::all(rest == -std::numeric_limits<float>::infinity()).item<bool>());
}

// A family (untied and tied heads), and the CPU or the ATen layers.
using Variant = std::tuple<std::string, bool>;

class HeadRowsTest : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    whole_ = random_model(std::get<0>(GetParam()), std::get<1>(GetParam()));
    part_ = whole_->with_head_rows(kept_tokens());
  }
  std::unique_ptr<CausalLM> whole_, part_;
};

TEST_P(HeadRowsTest, CachedForwardsScoreTheKeptTokensAsTheWholeHead) {
  EXPECT_EQ(part_->config().draft_vocab_size, 22);
  EXPECT_FALSE(part_->config().tie_word_embeddings);
  const auto tokens = random_tokens(12, 64, 1);
  KvCache whole_cache = whole_->make_cache({4}), part_cache = part_->make_cache({4});
  const SequenceId a = whole_cache.create(), b = part_cache.create();
  const std::vector<int32_t> prompt(tokens.begin(), tokens.begin() + 7);
  expect_head_over(part_->forward({{b, prompt, {}}}, part_cache, LogitsFor::kAll),
                   whole_->forward({{a, prompt, {}}}, whole_cache, LogitsFor::kAll), kept_tokens());
  // A chain of two and a tree of three after it, as drafts are verified.
  const std::vector<int32_t> chain = {tokens[7], tokens[8]};
  expect_head_over(part_->forward({{b, chain, {}}}, part_cache, LogitsFor::kTail),
                   whole_->forward({{a, chain, {}}}, whole_cache, LogitsFor::kTail), kept_tokens());
  const std::vector<int32_t> tree = {tokens[9], tokens[10], tokens[11]}, parents = {-1, 0, 0};
  expect_head_over(part_->forward({{b, tree, parents}}, part_cache, LogitsFor::kTail),
                   whole_->forward({{a, tree, parents}}, whole_cache, LogitsFor::kTail), kept_tokens());
}

// forward_head gives the head's own columns, column j scoring token j of
// head_tokens(); on a model whose head scores every token, forward()'s.
TEST_P(HeadRowsTest, TheHeadsColumnsAreTheLogitsOfItsTokens) {
  const auto tokens = random_tokens(5, 64, 4);
  KvCache whole_cache = whole_->make_cache({4}), part_cache = part_->make_cache({4});
  const SequenceId a = whole_cache.create(), b = part_cache.create();
  const at::Tensor whole = whole_->forward({{a, tokens, {}}}, whole_cache, LogitsFor::kTail);
  const at::Tensor columns = part_->forward_head({{b, tokens, {}}}, part_cache, LogitsFor::kTail);
  EXPECT_TRUE(torch::equal(part_->head_tokens().cpu(), kept_tokens()));
  ASSERT_EQ(columns.sizes(), (std::vector<int64_t>{5, 22}));
  EXPECT_LT(max_diff(columns, whole.index_select(1, kept_tokens())), 1e-5);
  EXPECT_FALSE(whole_->head_tokens().defined());
  const std::vector<int32_t> next = {tokens[0]};
  const SequenceId twin = whole_cache.fork(a);
  const at::Tensor head = whole_->forward_head({{a, next, {}}}, whole_cache, LogitsFor::kLast);
  EXPECT_TRUE(torch::equal(head, whole_->forward({{twin, next, {}}}, whole_cache, LogitsFor::kLast)));
}

TEST_P(HeadRowsTest, TheFullForwardScoresTheKeptTokensAsTheWholeHead) {
  const auto tokens = random_tokens(9, 64, 2);
  expect_head_over(reference_logits(*part_, tokens), reference_logits(*whole_, tokens), kept_tokens());
}

TEST_P(HeadRowsTest, ItsFolderKeepsTheHeadsTokens) {
  const fs::path dir = fs::temp_directory_path() / ("seed_head_rows_" + std::to_string(::getpid()));
  part_->save(dir.string(), std::nullopt);
  // EAGLE-3's layout: row i scores token i + d2t[i].
  const at::Tensor d2t = SafetensorsFile::open((dir / "model.safetensors").string()).read("d2t");
  EXPECT_TRUE(torch::equal(d2t + torch::arange(22), kept_tokens()));
  LoadOptions options;
  options.fused_cpu_layers = std::get<1>(GetParam());
  const auto loaded = CausalLM::load(dir.string(), options);
  EXPECT_EQ(loaded->config().draft_vocab_size, 22);
  const auto tokens = random_tokens(6, 64, 3);
  KvCache whole_cache = whole_->make_cache({4}), cache = loaded->make_cache({4});
  expect_head_over(loaded->forward({{cache.create(), tokens, {}}}, cache, LogitsFor::kAll),
                   whole_->forward({{whole_cache.create(), tokens, {}}}, whole_cache, LogitsFor::kAll),
                   kept_tokens());
  fs::remove_all(dir);
}

// A decoded token reads the head's rows and one row of the embedding,
// tied or not: the cut head reads 42 rows fewer.
TEST_P(HeadRowsTest, ATokenReadsTheKeptRowsOfTheHeadAndNotTheEmbedding) {
  const int64_t row_bytes = 32 * static_cast<int64_t>(c10::elementSize(whole_->weights().lm_head.dtype()));
  EXPECT_EQ(whole_->weights().bytes_read_per_token() - part_->weights().bytes_read_per_token(), (64 - 22) * row_bytes);
}

INSTANTIATE_TEST_SUITE_P(Heads, HeadRowsTest,
                         ::testing::Combine(::testing::Values("llama", "qwen3"), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_cpu_layers" : "_aten_layers");
                         });

TEST(HeadRowsErrors, TheTokensMustBeDistinctAscendingAndInTheVocabulary) {
  const auto model = random_model("llama", true);
  EXPECT_TRUE(throws_error([&] { model->with_head_rows(torch::tensor({3, 2, 9})); }, ErrorKind::kInvalidArgument,
                           {"token 2 after 3", "ascending"}));
  EXPECT_TRUE(throws_error([&] { model->with_head_rows(torch::tensor({1, 64})); }, ErrorKind::kInvalidArgument,
                           {"token 64", "vocabulary of 64"}));
  EXPECT_TRUE(throws_error([&] { model->with_head_rows(kept_tokens())->with_head_rows(torch::tensor({0, 3})); },
                           ErrorKind::kInvalidArgument, {"22 of the 64 tokens already"}));
}

TEST(HeadRowsErrors, AFolderWhoseOffsetsLeaveTheVocabularyNamesD2t) {
  const fs::path dir = fs::temp_directory_path() / ("seed_head_rows_bad_" + std::to_string(::getpid()));
  const auto part = random_model("llama", true)->with_head_rows(torch::tensor({0, 5, 9}));
  part->save(dir.string(), std::nullopt);
  NamedTensors tensors;
  const SafetensorsFile file = SafetensorsFile::open((dir / "model.safetensors").string());
  for (const TensorInfo& info : file.tensors()) {
    // Row 2 would score token 2 + 70.
    tensors.emplace_back(info.name, info.name == "d2t" ? torch::tensor({0L, 4L, 70L}) : file.read(info.name));
  }
  write_safetensors((dir / "model.safetensors").string(), tensors);
  EXPECT_TRUE(throws_error([&] { CausalLM::load(dir.string()); }, ErrorKind::kCorruption,
                           {"d2t", "token 72", "vocabulary of 64"}));
  fs::remove_all(dir);
}

TEST(HeadRowsErrors, TheConfigsDraftVocabularyMustFitAnUntiedHeadOfAWholeModel) {
  ModelConfig c = testing::tiny_config("llama");
  c.draft_vocab_size = 65;
  EXPECT_TRUE(throws_error([&] { c.validate(); }, ErrorKind::kInvalidArgument, {"draft_vocab_size", "65"}));
  c = testing::tiny_config("tied");
  c.draft_vocab_size = 8;
  EXPECT_TRUE(throws_error([&] { c.validate(); }, ErrorKind::kInvalidArgument,
                           {"draft_vocab_size", "tie_word_embeddings"}));
  c = testing::tiny_config("llama");
  c.draft_vocab_size = 8;
  EXPECT_TRUE(throws_error([&] { TpShard::of(c, 0, 2); }, ErrorKind::kInvalidArgument, {"draft_vocab_size", "tp"}));
}

}  // namespace
}  // namespace seed::models
