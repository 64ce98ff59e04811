// The model-free drafters (stand, lookup, aded) behind every speculative engine:
//   - greedy output equals ar's, token for token, for each engine;
//   - sampled output keeps the target's distribution (chi-square), with
//     STAND's without-replacement trees actually drafting;
//   - STAND's tables are shared by a request group and only by it;
//   - prompt lookup proposes the continuation of the latest match;
//   - ADED drafts from a corpus tri-gram table file as from none;
//   - bad names and tree files are errors naming the flag or file.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "models/causal_lm.h"
#include "spec/api/drafter_kind.h"
#include "spec/engine/engine_factory.h"
#include "spec/drafters/lookup_drafter.h"
#include "spec/drafters/aded/trigram_table.h"
#include "tests/models/tiny_models.h"
#include "tests/spec/chi_square.h"
#include "tests/spec/sampled_trials.h"
#include "tests/throws_error.h"

namespace seed::spec {
namespace {

namespace fs = std::filesystem;
using ::seed::testing::throws_error;

class ModelFreeDrafterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("seed_model_free_test_" + std::to_string(::getpid())));
    for (const int64_t vocab : {64, 8}) {
      models::ModelConfig config = models::testing::tiny_config("llama");
      config.vocab_size = vocab;
      models::CausalLM::random(config, 11)->save((*dir_ / ("v" + std::to_string(vocab))).string(), torch::kFloat32);
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }

  static std::unique_ptr<Engine> engine(const std::string& name, const std::string& drafter,
                                        std::vector<int> k_config = {}, int drafters = 2, int64_t vocab = 64,
                                        const std::string& trigrams = "",
                                        LogitReads logit_reads = LogitReads::kAuto) {
    EngineOptions o;
    o.logit_reads = logit_reads;
    o.engine = EngineKind::parse(name);
    o.drafter = DrafterKind::parse(drafter);
    o.target = (*dir_ / ("v" + std::to_string(vocab))).string();
    o.draft_length = 4;
    o.adaptive_draft_length = false;  // chains of 4 every round: these tests count what the drafters draft
    o.k_config = std::move(k_config);
    o.drafters = drafters;
    o.trigrams = trigrams;
    return make_engine(o);
  }

  // Six requests of one group, prompts of different lengths.
  static std::vector<GenRequest> requests(float temperature, int64_t max_new = 40) {
    std::vector<GenRequest> out;
    for (int i = 0; i < 6; ++i) {
      GenRequest r;
      for (int t = 0; t <= 2 * i; ++t) r.prompt_tokens.push_back((7 * t + 3 * i + 1) % 64);
      r.max_new_tokens = max_new;
      r.sampling.temperature = temperature;
      r.seed = 42;
      r.stream = static_cast<uint64_t>(i);
      r.group = 1;
      out.push_back(r);
    }
    return out;
  }

  static std::vector<std::vector<int32_t>> tokens_of(const std::vector<Completion>& completions) {
    std::vector<std::vector<int32_t>> out;
    for (const Completion& c : completions) out.push_back(c.tokens);
    return out;
  }

  static fs::path* dir_;
};

fs::path* ModelFreeDrafterTest::dir_ = nullptr;

TEST_F(ModelFreeDrafterTest, GreedyEveryEngineWithEveryDrafterProducesTheArTokens) {
  const auto reference = tokens_of(engine("ar", "model")->generate(requests(0.0f)));
  struct Case { std::string name; std::vector<int> k_config; int drafters; };
  for (const std::string drafter : {"stand", "lookup", "aded"}) {
    for (const Case& c : {Case{"sd", {}, 1}, Case{"mcsd", {2, 2, 1}, 1}, Case{"seed", {}, 2},
                          Case{"seed", {3, 2, 1, 1}, 3}, Case{"seed-batch", {}, 4}}) {
      auto e = engine(c.name, drafter, c.k_config, c.drafters);
      EXPECT_EQ(tokens_of(e->generate(requests(0.0f))), reference) << drafter << " " << c.name;
      const EngineStats s = e->stats();
      EXPECT_GT(s.accepted_tokens, 0) << drafter << " " << c.name << ": a looping greedy model repeats itself";
      EXPECT_EQ(s.generated_tokens, 6 * 40) << drafter << " " << c.name;
    }
  }
}

TEST_F(ModelFreeDrafterTest, StandTablesAreSharedWithinAGroupOnly) {
  // The same prompt twice: the second request drafts what the first taught
  // the table, if they share a group.
  std::vector<GenRequest> batch = requests(0.0f);
  batch.resize(2);
  batch[1] = batch[0];
  batch[1].stream = 1;
  auto shared = engine("sd", "stand");
  const auto together = shared->generate(batch);
  EXPECT_EQ(together[0].tokens, together[1].tokens);
  EXPECT_GT(together[1].stats.accepted_tokens, together[0].stats.accepted_tokens);
  EXPECT_LT(together[1].stats.target_forwards, together[0].stats.target_forwards);

  batch[1].group = 2;
  auto apart = engine("sd", "stand")->generate(batch);
  EXPECT_EQ(apart[1].stats.accepted_tokens, apart[0].stats.accepted_tokens);
  EXPECT_EQ(apart[1].stats.target_forwards, apart[0].stats.target_forwards);
}

// A group's table lives until the group ends: the same request again
// drafts what the first taught the table, and after Engine::end_group it
// drafts from an empty table, exactly as the first did. Other groups keep
// theirs. For every engine that drafts, and both drafters with tables.
TEST_F(ModelFreeDrafterTest, AnEndedGroupsTablesAreDroppedAndOthersKept) {
  for (const std::string drafter : {"stand", "aded"}) {
    for (const std::string name : {"sd", "seed", "seed-batch"}) {
      SCOPED_TRACE(drafter + " " + name);
      const GenRequest first = requests(0.0f)[3];
      GenRequest other = first;
      other.group = 2;
      auto e = engine(name, drafter);
      const RequestStats fresh = e->generate({first})[0].stats;
      e->generate({other});
      const RequestStats taught = e->generate({first})[0].stats;
      ASSERT_GT(taught.accepted_tokens, fresh.accepted_tokens) << "the table of group 1 learned from the first";
      e->end_group(first.group);
      e->end_group(77);  // a group never seen: nothing to drop
      const RequestStats again = e->generate({first})[0].stats;
      EXPECT_EQ(again.drafted_tokens, fresh.drafted_tokens);
      EXPECT_EQ(again.accepted_tokens, fresh.accepted_tokens);
      EXPECT_EQ(again.target_forwards, fresh.target_forwards);
      EXPECT_GT(e->generate({other})[0].stats.accepted_tokens, fresh.accepted_tokens) << "group 2 kept its table";
    }
  }
}

// The first two sampled tokens against p(x1) p(x2 | x1) from the target's
// logits, over many requests of one group: STAND's tables fill from the
// first requests, so later ones draft (without replacement) from them;
// ADED's trie, drafted from the adapted tri-grams with its own random
// stream, is verified as deterministic proposals.
TEST_F(ModelFreeDrafterTest, SampledStandAndLookupAreLossless) {
  constexpr int64_t kVocab = 8;
  constexpr int kTrials = 5000;
  const std::vector<int32_t> prompt = {1, 5, 2, 1, 5};
  SamplingParams sampling;
  sampling.temperature = 0.9f;
  auto target = models::CausalLM::load((*dir_ / "v8").string());
  const std::vector<double> expected = ::seed::testing::two_token_law(*target, prompt, sampling.temperature, kVocab);
  // Drafts of depth 2 in the first round.
  std::vector<GenRequest> batch = ::seed::testing::sampled_trials(prompt, sampling, kTrials, 3);
  for (GenRequest& request : batch) request.group = 3;
  struct Case { std::string name, drafter; std::vector<int> k_config; };
  for (const Case& c : {Case{"sd", "stand", {}}, Case{"mcsd", "stand", {3, 2}}, Case{"seed", "stand", {4, 1}},
                        Case{"sd", "lookup", {}}, Case{"seed", "aded", {3, 2}}}) {
    auto e = engine(c.name, c.drafter, c.k_config, 2, kVocab);
    // Tables learned first (other streams, the same group), so that how much
    // is drafted does not depend on how the scheduler overlapped requests.
    std::vector<GenRequest> warm_up(batch.begin(), batch.begin() + 200);
    for (GenRequest& r : warm_up) r.stream += kTrials;
    e->generate(warm_up);
    e->reset_stats();
    std::vector<int64_t> counts(kVocab * kVocab, 0);
    for (const Completion& out : e->generate(batch)) {
      ASSERT_EQ(out.tokens.size(), 3u);
      ++counts[out.tokens[0] * kVocab + out.tokens[1]];
    }
    const auto fit = ::seed::testing::chi_square(counts, expected, kTrials);
    std::printf("%s/%s: chi-square %.4g (%d dof), p = %.4g, alpha %.3f, tau %.3f\n", c.name.c_str(), c.drafter.c_str(),
                fit.statistic, fit.dof, fit.p_value, e->stats().alpha(), e->stats().tau());
    EXPECT_GT(fit.p_value, 0.001) << c.name << "/" << c.drafter;
    EXPECT_GT(e->stats().drafted_tokens, kTrials / 2) << c.name << "/" << c.drafter << ": the drafter must draft";
  }
}

// As on a GPU: STAND learns the target's top entries from the summary of
// its logits, and drafts and verifies what it does from host rows.
TEST_F(ModelFreeDrafterTest, StandFromSummarisedLogitsGivesTheHostRowsTokens) {
  for (const float temperature : {0.0f, 0.9f}) {
    const auto host = tokens_of(engine("sd", "stand")->generate(requests(temperature)));
    auto e = engine("sd", "stand", {}, 2, 64, "", LogitReads::kDeviceSummary);
    EXPECT_EQ(tokens_of(e->generate(requests(temperature))), host) << "T " << temperature;
    EXPECT_GT(e->stats().accepted_tokens, 0) << "T " << temperature << ": the tables must learn and draft";
  }
}

TEST_F(ModelFreeDrafterTest, AdedWithACorpusTableProducesTheArTokensAndDraftsFromTheStart) {
  // A "corpus": the target's own greedy continuations of other prompts.
  const auto reference = engine("ar", "model")->generate(requests(0.0f));
  std::vector<std::vector<int32_t>> documents;
  for (const Completion& c : engine("ar", "model")->generate(requests(0.0f, 60))) documents.push_back(c.tokens);
  const std::string table = (*dir_ / "trigrams.bin").string();
  TrigramTable::build(documents).save(table);
  auto with = engine("seed", "aded", {2, 2, 1}, 2, 64, table);
  EXPECT_EQ(tokens_of(with->generate(requests(0.0f))), tokens_of(reference));
  auto without = engine("seed", "aded", {2, 2, 1}, 2);
  EXPECT_EQ(tokens_of(without->generate(requests(0.0f))), tokens_of(reference));
  EXPECT_GT(with->stats().accepted_tokens, without->stats().accepted_tokens)
      << "the corpus holds the continuations the adaptation has yet to see";
}

TEST(LookupDrafterTest, ProposesTheContinuationOfTheLatestLongestMatch) {
  LookupDrafter drafter;
  DraftSettings settings;
  settings.k_config = {1, 1, 1};
  drafter.start(0, {5, 6, 7, 1, 2, 5, 6, 9, 8, 4, 5, 6}, settings);
  // Suffix (4 5 6) has no earlier match; (5 6) last matched before 9 8 4.
  DraftTree draft = drafter.propose(0, 10);
  EXPECT_EQ(draft.tokens, (std::vector<int32_t>{9, 8, 4}));
  EXPECT_EQ(draft.parents, (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_TRUE(draft.deterministic);
  EXPECT_EQ(drafter.propose(0, 2).tokens.size(), 2u);
  Verdict verdict;
  verdict.tokens = {3};
  drafter.advance(0, verdict);
  EXPECT_TRUE(drafter.propose(0, 3).tokens.empty()) << "3 never occurred before";
}

TEST_F(ModelFreeDrafterTest, BadDrafterNamesAndTreeFilesNameTheFlagOrFile) {
  EXPECT_TRUE(throws_error([] { DrafterKind::parse("ngram"); }, ErrorKind::kInvalidArgument,
                           {"--drafter", "ngram", "stand", "lookup", "aded"}));
  const std::string tree = (*dir_ / "tree.json").string();
  std::ofstream(tree) << R"({"format": "seed-static-tree", "version": 1, "parents": [0]})";
  EngineOptions o;
  o.engine = EngineKind::kSd;
  o.drafter = DrafterKind::kStand;
  o.target = (*dir_ / "v64").string();
  o.tree = tree;
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {tree, "'parents'[0]"}));
  o.drafter = DrafterKind::kAded;
  o.tree.clear();
  o.trigrams = (*dir_ / "no-trigrams.bin").string();
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kNotFound, {o.trigrams}));
  o.drafter = DrafterKind::kModel;
  o.trigrams.clear();
  EXPECT_TRUE(throws_error([&] { make_engine(o); }, ErrorKind::kInvalidArgument, {"--draft"}));
}

}  // namespace
}  // namespace seed::spec
