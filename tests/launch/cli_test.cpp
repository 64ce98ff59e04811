// The `seed` command line, run as a user runs it: real processes, real files.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "launch/cpu_features.h"
#include "spec/engine/engine_factory.h"
#include "tests/launch/command_outcome.h"
#include "tests/launch/synthetic_game24_csv.h"

namespace {

namespace fs = std::filesystem;
using seed::testing::Outcome;
using seed::testing::run_command;

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_dir_ = new fs::path(fs::temp_directory_path() / ("seed_cli_test_" + std::to_string(getpid())));
    const Outcome made = run_command(std::string(MAKE_TINY_MODEL_BINARY) + " --out " + model_dir_->string() +
                         " --hidden 64 --intermediate 160 --layers 2 --context 128");
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*model_dir_);
    delete model_dir_;
  }
  static std::string seed(const std::string& args) { return std::string(SEED_BINARY) + " " + args; }
  static fs::path* model_dir_;
};
fs::path* CliTest::model_dir_ = nullptr;

TEST_F(CliTest, GenerateStreamsTheCompletionAndReportsSpeed) {
  const Outcome r = run_command(seed("--threads 1 generate --model " + model_dir_->string() +
                         " --prompt '4 + 9 = 13' --max-new-tokens 12 --seed 3"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The prompt starts a line (log lines, e.g. a warning, may come first).
  const size_t echo = r.output.find("4 + 9 = 13");
  ASSERT_NE(echo, std::string::npos) << r.output;
  EXPECT_TRUE(echo == 0 || r.output[echo - 1] == '\n') << r.output;
  EXPECT_NE(r.output.find("tokens/s"), std::string::npos) << r.output;
}

TEST_F(CliTest, SameSeedGivesTheSameText) {
  const std::string cmd = seed("--log-level off --threads 1 generate --model " + model_dir_->string() +
                               " --prompt 'left: 4' --max-new-tokens 16 --temperature 1.0 --seed 11");
  const Outcome a = run_command(cmd), b = run_command(cmd);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_EQ(a.output, b.output);
}

// `seed generate` writes what the ar engine writes for the same request:
// greedy, and sampled with the same seed (on stream 0).
TEST_F(CliTest, GenerateWritesTheArEnginesText) {
  seed::spec::EngineOptions ar;
  ar.engine = seed::spec::EngineKind::kAr;
  ar.target = model_dir_->string();
  const std::unique_ptr<seed::spec::Engine> engine = seed::spec::make_engine(ar);
  for (const std::string temperature : {"0", "1"}) {
    seed::spec::GenRequest request;
    request.prompt = "left: 4";
    request.max_new_tokens = 16;
    request.sampling.temperature = std::stof(temperature);
    request.seed = 11;
    const std::string text = engine->generate({request}).front().text;
    EXPECT_FALSE(text.empty()) << "temperature " << temperature;
    const Outcome r = run_command(seed("--log-level off --threads 1 generate --model " + model_dir_->string() +
                                       " --prompt 'left: 4' --max-new-tokens 16 --seed 11 --temperature " +
                                       temperature));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, "left: 4" + text + "\n") << "temperature " << temperature;
  }
}

TEST_F(CliTest, BlasKernelsNarrowerThanTheCpuGetOneWarningThatLogLevelSilences) {
  const bool avx512 = seed::launch::cpu_has_avx512();
  const std::string args = "--threads 1 generate --model " + model_dir_->string() + " --prompt hi --max-new-tokens 2";
  const std::string warning = "OPENBLAS_CORETYPE=Haswell holds this AVX-512 CPU";
  const Outcome held = run_command("OPENBLAS_CORETYPE=Haswell " + seed(args));
  ASSERT_EQ(held.exit_code, 0) << held.output;
  const size_t first = held.output.find(warning);
  if (!avx512) {
    EXPECT_EQ(first, std::string::npos) << held.output;
    return;
  }
  ASSERT_NE(first, std::string::npos) << held.output;
  EXPECT_EQ(held.output.find(warning, first + 1), std::string::npos) << "warned twice: " << held.output;
  const Outcome quiet = run_command("OPENBLAS_CORETYPE=Haswell " + seed("--log-level error " + args));
  EXPECT_EQ(quiet.output.find(warning), std::string::npos) << quiet.output;
  const Outcome wide = run_command("OPENBLAS_CORETYPE=SkylakeX " + seed(args));
  EXPECT_EQ(wide.output.find("OPENBLAS_CORETYPE"), std::string::npos) << wide.output;
}

TEST_F(CliTest, PromptLongerThanTheContextIsAClearError) {
  std::string prompt;
  for (int i = 0; i < 100; ++i) prompt += "12 + 7 = 19 ";
  const Outcome r = run_command(seed("generate --model " + model_dir_->string() + " --prompt '" + prompt + "'"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("context"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("max_position_embeddings"), std::string::npos) << r.output;
}

TEST_F(CliTest, GenerationCutShortByTheContextSaysSo) {
  const Outcome r = run_command(
      seed("--threads 1 generate --model " + model_dir_->string() + " --prompt hi --max-new-tokens 200 --temperature 0"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("generation capped at 124 tokens by the model's context of 128"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("generated 124 tokens"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("finish: context (128 tokens"), std::string::npos) << r.output;
}

TEST_F(CliTest, MissingModelFilesNameWhatIsMissing) {
  const fs::path empty = fs::temp_directory_path() / ("seed_cli_empty_" + std::to_string(getpid()));
  fs::create_directories(empty);
  const Outcome r = run_command(seed("generate --model " + empty.string() + " --prompt hi"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("config.json"), std::string::npos) << r.output;
  // Weights without a tokenizer: named by --model before they load.
  fs::copy_file(*model_dir_ / "config.json", empty / "config.json");
  const Outcome no_tokenizer = run_command(seed("generate --model " + empty.string() + " --prompt hi"));
  fs::remove_all(empty);
  EXPECT_EQ(no_tokenizer.exit_code, 1);
  EXPECT_NE(no_tokenizer.output.find("--model: " + empty.string() + " has no tokenizer (tokenizer.model or "
                                     "tokenizer.json)"),
            std::string::npos)
      << no_tokenizer.output;
}

TEST_F(CliTest, CorruptWeightsAreAnErrorNotACrash) {
  const fs::path broken = fs::temp_directory_path() / ("seed_cli_broken_" + std::to_string(getpid()));
  fs::copy(*model_dir_, broken, fs::copy_options::recursive);
  fs::resize_file(broken / "model.safetensors", fs::file_size(broken / "model.safetensors") / 2);
  const Outcome r = run_command(seed("generate --model " + broken.string() + " --prompt hi"));
  fs::remove_all(broken);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("model.safetensors"), std::string::npos) << r.output;
}

TEST_F(CliTest, BenchForwardWritesTheDocumentedJsonKeys) {
  const fs::path json = *model_dir_ / "bench.json";
  const Outcome r = run_command(seed("--threads 1 bench forward --model " + model_dir_->string() +
                         " --repeats 1 --decode-tokens 4 --prefill-tokens 16 --json " + json.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(json);
  const nlohmann::json figures = nlohmann::json::parse(in);
  for (const char* key : {"params", "decode_tokens_per_s", "prefill_tokens_per_s", "bandwidth_bound_fraction",
                          "forward_time_ratio"}) {
    EXPECT_TRUE(figures.contains(key)) << key;
  }
  EXPECT_GT(figures["decode_tokens_per_s"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(figures["forward_time_ratio"]["1"].get<double>(), 1.0);
  EXPECT_TRUE(figures["forward_time_ratio"].contains("16"));
}

// seed re-executes itself with its malloc and OpenMP settings before any
// library initialises; the user's own settings, and the rest of the
// environment, stand.
TEST_F(CliTest, SeedRunsWithItsStartupSettingsUnlessTheUserSetsThem) {
  const std::string bench = seed("--threads 1 bench forward --model " + model_dir_->string() +
                                 " --repeats 1 --decode-tokens 2 --prefill-tokens 8");
  const std::string unset = "env -u GLIBC_TUNABLES -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT ";
  const Outcome defaults = run_command(unset + bench);
  ASSERT_EQ(defaults.exit_code, 0) << defaults.output;
  EXPECT_NE(defaults.output.find("GLIBC_TUNABLES=glibc.malloc.hugetlb=1:"), std::string::npos) << defaults.output;
  EXPECT_NE(defaults.output.find("GOMP_SPINCOUNT=100000"), std::string::npos) << defaults.output;

  const Outcome users = run_command(unset + "GLIBC_TUNABLES=glibc.malloc.trim_threshold=7 OMP_WAIT_POLICY=passive " + bench);
  ASSERT_EQ(users.exit_code, 0) << users.output;
  EXPECT_NE(users.output.find("GLIBC_TUNABLES=glibc.malloc.trim_threshold=7 OMP_WAIT_POLICY=passive\n"),
            std::string::npos)
      << users.output;
}

TEST_F(CliTest, BenchForwardMeasuresEveryContextAgainstTheFirst) {
  const fs::path json = *model_dir_ / "bench_contexts.json";
  const Outcome r = run_command(seed("--threads 1 bench forward --model " + model_dir_->string() +
                                     " --repeats 1 --decode-tokens 2 --prefill-tokens 8 --context-tokens 8 32 --json " +
                                     json.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(json);
  const nlohmann::json figures = nlohmann::json::parse(in);
  const nlohmann::json& contexts = figures["contexts"];
  ASSERT_EQ(contexts.size(), 2u);
  EXPECT_EQ(contexts[0]["context_tokens"], 8);
  EXPECT_EQ(contexts[1]["context_tokens"], 32);
  EXPECT_EQ(contexts[1]["kv_bytes"].get<int64_t>(), 4 * contexts[0]["kv_bytes"].get<int64_t>());
  EXPECT_DOUBLE_EQ(contexts[0]["decode_relative"].get<double>(), 1.0);
  // One repeat: the ratio of the two decode rates.
  EXPECT_NEAR(contexts[1]["decode_relative"].get<double>(),
              contexts[1]["decode_tokens_per_s"].get<double>() / contexts[0]["decode_tokens_per_s"].get<double>(), 1e-9);
  // The top level is the first context's run.
  EXPECT_EQ(figures["context_tokens"], 8);
  EXPECT_EQ(figures["decode_tokens_per_s"], contexts[0]["decode_tokens_per_s"]);
}

TEST_F(CliTest, BenchSpecWritesTheDocumentedJsonRows) {
  const fs::path json = *model_dir_ / "spec.json";
  const std::string zoo = SEED_ZOO_DIR;
  const Outcome r = run_command(seed("--threads 1 bench spec --target " + zoo + "/tiny-target --draft " + zoo +
                                     "/tiny-draft --engines ar sd seed --n 2 --temperatures 1.0 --repeats 1 "
                                     "--thought-tokens 12 --evaluation-tokens 2 --json " + json.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tau_max"), std::string::npos) << r.output;
  // The engines, side by side, hold one copy of each model.
  EXPECT_NE(r.output.find("--target " + zoo + "/tiny-target: reusing the model already loaded"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--draft " + zoo + "/tiny-draft: reusing the model already loaded"),
            std::string::npos)
      << r.output;
  std::ifstream in(json);
  const nlohmann::json result = nlohmann::json::parse(in);
  ASSERT_EQ(result["rows"].size(), 3u);
  for (const nlohmann::json& row : result["rows"]) {
    for (const char* key : {"engine", "n", "temperature", "tokens_per_s", "repeat_tokens_per_s", "speedup_vs_ar",
                            "speedup_vs_ar_batch", "alpha", "tau", "tau_max", "target_busy"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    EXPECT_EQ(row["n"], 2);
    EXPECT_GT(row["tokens_per_s"].get<double>(), 0.0);
  }
  EXPECT_EQ(result["rows"][0]["engine"], "ar");
  EXPECT_DOUBLE_EQ(result["rows"][0]["speedup_vs_ar"].get<double>(), 1.0);
  EXPECT_GT(result["rows"][1]["alpha"].get<double>(), 0.0);
}

// The target drafts its own steps, greedily, and exact comparison judges
// them: drafted steps are the target's and are accepted (except where the
// request's token budget cuts one short), so a round commits more than one
// step.
TEST_F(CliTest, BenchSpecLookaheadRowsCarryStepFigures) {
  const fs::path json = *model_dir_ / "lookahead.json";
  const std::string target = std::string(SEED_ZOO_DIR) + "/tiny-target";
  const Outcome r = run_command(seed("--threads 1 bench spec --target " + target + " --draft " + target +
                                     " --engines ar sd --n 1 --temperatures 0 --repeats 1 --thought-tokens 24 "
                                     "--evaluation-tokens 2 --lookahead 2 --step-verifier exact --json " +
                                     json.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("lookahead 2: step acceptance"), std::string::npos) << r.output;
  std::ifstream in(json);
  const nlohmann::json rows = nlohmann::json::parse(in)["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].contains("lookahead")) << "ar, the baseline, runs without it";
  EXPECT_EQ(rows[1]["lookahead"], "2");
  EXPECT_GT(rows[1]["step_acceptance"].get<double>(), 0.0);
  EXPECT_GT(rows[1]["steps_per_round"].get<double>(), 1.0);
  const Outcome bad = run_command(seed("bench spec --lookahead often"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--lookahead"), std::string::npos) << bad.output;
}

TEST_F(CliTest, BenchSpecTreeRowsNameTheirTree) {
  const fs::path json = *model_dir_ / "trees.json";
  const std::string zoo = SEED_ZOO_DIR;
  const Outcome r = run_command(seed("--threads 1 bench spec --target " + zoo + "/tiny-target --draft " + zoo +
                                     "/tiny-draft --engines ar sd mcsd --drafter model lookup --trees shape fixed pct "
                                     "--n 1 --temperatures 0 --repeats 1 --thought-tokens 12 --evaluation-tokens 2 "
                                     "--json " + json.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(json);
  const nlohmann::json rows = nlohmann::json::parse(in)["rows"];
  // ar; per drafting engine: model with each tree, lookup without pruned
  // trees; greedy chains of 0 to 7 tokens, or of 7 (fixed: chains only).
  std::vector<std::string> trees;
  for (const nlohmann::json& row : rows) trees.push_back(row["drafter"].get<std::string>() + ":" + row["tree"].get<std::string>());
  EXPECT_EQ(trees, (std::vector<std::string>{":", "model:chain 0-7", "model:chain 7", "model:pct", "lookup:chain 0-7",
                                              "lookup:chain 7", "model:2,2,1", "model:pct", "lookup:2,2,1"}));
  for (const nlohmann::json& row : rows) {
    if (row["tree"] != "pct") continue;
    EXPECT_GT(row["pct_threshold"].get<double>(), 0.0) << "measured at start";
    EXPECT_LE(row["pct_threshold"].get<double>(), 1.0);
  }
  const Outcome bad = run_command(seed("bench spec --trees bushy"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--trees"), std::string::npos) << bad.output;
}

TEST_F(CliTest, BenchSpecBestOfNWritesDrafterAndTrajectories) {
  const fs::path json = *model_dir_ / "best_of_n.json";
  const std::string zoo = SEED_ZOO_DIR;
  const Outcome r = run_command(seed("--threads 1 bench spec --target " + zoo + "/tiny-target --draft " + zoo +
                                     "/tiny-draft --workload best-of-n --trajectories 1 3 --engines ar sd "
                                     "--drafter stand aded --repeats 1 --thought-tokens 12 --json " + json.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(json);
  const nlohmann::json result = nlohmann::json::parse(in);
  ASSERT_EQ(result["rows"].size(), 6u) << "per N: ar, then sd with each drafter";
  for (size_t i = 0; i < result["rows"].size(); ++i) {
    const nlohmann::json& row = result["rows"][i];
    EXPECT_EQ(row["trajectories"], row["n"]);
    EXPECT_FLOAT_EQ(row["temperature"].get<float>(), 0.7f);
    EXPECT_EQ(row["drafter"], std::vector<std::string>({"", "stand", "aded"})[i % 3]);
    EXPECT_TRUE(row.contains("draft_ms_per_token"));
  }
  EXPECT_EQ(result["rows"][3]["trajectories"], 3);
  const Outcome bad = run_command(seed("bench spec --drafter ngram"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--drafter"), std::string::npos) << bad.output;
}

TEST_F(CliTest, TrigramsWritesAdedsTableAndNamesTheCorpusLineAtFault) {
  const fs::path corpus = *model_dir_ / "corpus.jsonl";
  std::ofstream(corpus) << R"j({"prompt": "4 9 10 13\n", "completion": "13 - 9 = 4 (left: 4 4 10)"})j" << "\n"
                        << R"j({"prompt": "1 1 4 6\n", "completion": "4 * 6 = 24 (left: 1 1 24)"})j" << "\n";
  const fs::path table = *model_dir_ / "trigrams.bin";
  const std::string zoo = SEED_ZOO_DIR;
  const Outcome r = run_command(seed("trigrams --model " + zoo + "/tiny-target --corpus " + corpus.string() +
                                     " --out " + table.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from 2 documents"), std::string::npos) << r.output;
  std::ifstream in(table, std::ios::binary);
  std::array<char, 8> magic{};
  in.read(magic.data(), magic.size());
  EXPECT_EQ(std::string(magic.data(), 7), "SEEDTRI");

  std::ofstream(corpus, std::ios::app) << R"({"prompt": 3})" << "\n";
  const Outcome bad = run_command(seed("trigrams --model " + zoo + "/tiny-target --corpus " + corpus.string() +
                                       " --out " + table.string()));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find(corpus.string() + ":3"), std::string::npos) << bad.output;
}

TEST_F(CliTest, EvalWritesEveryValueJudgmentAndChecksItsOutputPathsFirst) {
  const fs::path csv = *model_dir_ / "24.csv";
  seed::testing::write_synthetic_game24_csv(csv);
  const fs::path judgments = *model_dir_ / "values.jsonl";
  const std::string eval = "--threads 1 eval game24 --model " + std::string(SEED_ZOO_DIR) +
                           "/tiny-target --game24-csv " + csv.string() + " --limit 1 --max-value-states 3";
  const Outcome r = run_command(seed(eval + " --value-out " + judgments.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(judgments);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["state"], "4 5 6 10");  // the puzzle, then states one step away
  EXPECT_EQ(lines[0]["solver"], "sure");
  for (const auto& j : lines) EXPECT_TRUE(j.contains("model")) << j;

  const Outcome bad = run_command(seed(eval + " --value-out /nonexistent/dir/values.jsonl"));
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("--value-out"), std::string::npos) << bad.output;
  EXPECT_EQ(bad.output.find("propose"), std::string::npos) << "evaluated before failing: " << bad.output;
}

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (const char* sub : {"", "generate", "bench", "bench forward", "bench gemm", "bench attention", "bench spec", "corpus", "train", "eval", "eval game24"}) {
    const Outcome r = run_command(seed(std::string(sub) + " --help"));
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << sub;
  }
}

TEST_F(CliTest, UnknownFlagIsRejected) {
  const Outcome r = run_command(seed("generate --model " + model_dir_->string() + " --prompt hi --temprature 2"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("temprature"), std::string::npos) << r.output;
}

}  // namespace

namespace {

TEST_F(CliTest, ConvertWritesHalfSizeMatricesThatRunAndRefusesAFullFolder) {
  const fs::path out = fs::temp_directory_path() / ("seed_cli_convert_" + std::to_string(getpid()));
  fs::remove_all(out);
  const Outcome r = run_command(seed("convert --model " + model_dir_->string() + " --out " + out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream config((out / "config.json").string());
  EXPECT_EQ(nlohmann::json::parse(config).at("torch_dtype"), "bfloat16");
  EXPECT_TRUE(fs::exists(out / "tokenizer.model"));
  const auto before = fs::file_size(*model_dir_ / "model.safetensors");
  const auto after = fs::file_size(out / "model.safetensors");
  EXPECT_LT(after, before * 6 / 10) << before << " -> " << after;
  const Outcome g = run_command(seed("--threads 1 generate --model " + out.string() + " --prompt hi --max-new-tokens 4"));
  EXPECT_EQ(g.exit_code, 0) << g.output;
  const Outcome b = run_command(seed("bench forward --model " + out.string() + " --repeats 1 --decode-tokens 2"));
  EXPECT_NE(b.output.find("bfloat16 weights"), std::string::npos) << b.output;
  const Outcome again = run_command(seed("convert --model " + model_dir_->string() + " --out " + out.string()));
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("exists and is not empty"), std::string::npos) << again.output;
  fs::remove_all(out);
}

// A draft's head cut to the tokens a corpus uses most: its folder says so,
// and `seed` drafts with it.
TEST_F(CliTest, ConvertCutsADraftsHeadToACorpussTokens) {
  const fs::path dir = fs::temp_directory_path() / ("seed_cli_head_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream((dir / "corpus.jsonl").string()) << "{\"q\": \"4 + 8 = 12 (left: 12 12 8)\"}\n"
                                                    "{\"q\": \"12 * 2 = 24 (left: 24)\"}\n";
  const std::string draft = std::string(SEED_ZOO_DIR) + "/tiny-draft";
  const std::string out = (dir / "draft").string();
  const std::string corpus = (dir / "corpus.jsonl").string();
  // Held out: two of the corpus's strings again, so every token is kept.
  std::ofstream((dir / "held_out.jsonl").string()) << "{\"q\": [\"12 * 2 = 24\", \"(left: 12 12 8)\"]}\n";
  const Outcome r = run_command(seed("convert --model " + draft + " --out " + out +
                                     " --draft-vocab-size 200 --corpus " + corpus + " --held-out " +
                                     (dir / "held_out.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("keeps 200 of 512 tokens: 100.00% of the"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("they are 100.00% of the"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tokens of the held-out text"), std::string::npos) << r.output;
  std::ifstream config(out + "/config.json");
  EXPECT_EQ(nlohmann::json::parse(config).at("draft_vocab_size"), 200);
  const Outcome b = run_command(seed("bench spec --target " + std::string(SEED_ZOO_DIR) + "/tiny-target --draft " +
                                     out + " --engines ar sd --n 1 --repeats 1 --thought-tokens 8 --evaluation-tokens 8"));
  EXPECT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("sd"), std::string::npos) << b.output;
  // As a target, such a head would never write the tokens it lacks.
  const Outcome target = run_command(seed("bench spec --target " + out + " --draft " + draft +
                                          " --engines ar --n 1 --repeats 1 --thought-tokens 4 --evaluation-tokens 4"));
  EXPECT_EQ(target.exit_code, 0) << target.output;
  EXPECT_NE(target.output.find("scores 200 of its 512 tokens"), std::string::npos) << target.output;
  const Outcome alone = run_command(seed("convert --model " + draft + " --out " + (dir / "x").string() +
                                         " --draft-vocab-size 200"));
  EXPECT_EQ(alone.exit_code, 1);
  EXPECT_NE(alone.output.find("--draft-vocab-size and --corpus go together"), std::string::npos) << alone.output;
  const Outcome large = run_command(seed("convert --model " + draft + " --out " + (dir / "y").string() +
                                         " --draft-vocab-size 600 --corpus " + corpus));
  EXPECT_EQ(large.exit_code, 1);
  EXPECT_NE(large.output.find("--draft-vocab-size is 600"), std::string::npos) << large.output;
  fs::remove_all(dir);
}

TEST_F(CliTest, UnknownKernelOrDtypeNamesTheFlag) {
  const std::string args = " generate --model " + model_dir_->string() + " --prompt hi --max-new-tokens 2";
  const Outcome kernel = run_command(seed("--cpu-kernel sse9" + args));
  EXPECT_EQ(kernel.exit_code, 1);
  EXPECT_NE(kernel.output.find("--cpu-kernel: unknown kernel 'sse9'"), std::string::npos) << kernel.output;
  const Outcome dtype = run_command(seed("--weights-dtype int4" + args));
  EXPECT_EQ(dtype.exit_code, 1);
  EXPECT_NE(dtype.output.find("--weights-dtype: unknown weight dtype 'int4'"), std::string::npos) << dtype.output;
}

TEST_F(CliTest, UnknownDraftTablesModeNamesTheFlagAndTheModes) {
  const Outcome bad = run_command(seed("run --draft-tables global --task x"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--draft-tables: global not in {shared,per-rank}"), std::string::npos) << bad.output;
}

// A number out of range is refused by its flag, named once, with what it
// expected: no range up to the largest double.
TEST_F(CliTest, NumericFlagErrorsNameTheFlagAndWhatItExpects) {
  const std::string generate = "generate --model " + model_dir_->string() + " --prompt hi ";
  const std::pair<std::string, std::string> cases[] = {
      {generate + "--max-new-tokens 0", "--max-new-tokens: expected a positive integer, got 0"},
      {"run --task x --limit -1", "--limit: -1 is negative; expected 0 or more"},
      {"run --task x --limit abc", "--limit: expected an integer 0 or more, got abc"},
      {"--threads 1.5 " + generate, "--threads: expected an integer 0 or more, got 1.5"},
      {"bench spec --repeats 0", "--repeats: expected a positive integer, got 0"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome r = run_command(seed(args));
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
    const std::string flag = message.substr(0, message.find(':'));
    EXPECT_EQ(r.output.find(flag, r.output.find(flag) + 1), std::string::npos) << "named twice: " << r.output;
    EXPECT_EQ(r.output.find("not in range"), std::string::npos) << r.output;
  }
}

// --draft-length is checked before the evaluation, by its name.
TEST_F(CliTest, EvalDraftLengthIsCheckedBeforeTheEvaluation) {
  const std::string zoo = SEED_ZOO_DIR;
  for (const std::string length : {"-1", "0"}) {
    const Outcome r = run_command(seed("eval game24 --model " + zoo + "/tiny-target --draft " + zoo +
                                       "/tiny-draft --limit 1 --draft-length " + length));
    EXPECT_NE(r.exit_code, 0) << length;
    EXPECT_NE(r.output.find("--draft-length: expected a positive integer, got " + length), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("propose"), std::string::npos) << "evaluated before failing: " << r.output;
  }
}

// bench spec checks its options before it prints anything, by their flags.
TEST_F(CliTest, BenchSpecChecksItsOptionsBeforePrinting) {
  const std::string model = model_dir_->string();
  const Outcome r = run_command(seed("bench spec --target " + model + " --draft " + model + " --engines ar foo"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--engines: unknown engine 'foo'; expected ar, ar-batch"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("workload"), std::string::npos) << "printed before the check: " << r.output;
}

// A negative temperature is refused wherever one is given, by the flag
// that gave it, before any model runs.
TEST_F(CliTest, NegativeTemperaturesAndBadSamplingFlagsAreRefusedByName) {
  const std::string model = model_dir_->string();
  const std::string zoo = SEED_ZOO_DIR;
  const std::pair<std::string, std::string> cases[] = {
      {"generate --model " + model + " --prompt hi --temperature -1", "--temperature: -1 is negative"},
      {"generate --model " + model + " --prompt hi --top-p 2", "--top-p: expected a value in (0, 1]"},
      {"generate --model " + model + " --prompt hi --top-k -3", "--top-k: -3 is negative"},
      {"eval game24 --model " + model + " --limit 1 --temperature -0.5", "--temperature: -0.5 is negative"},
      {"tree --target " + model + " --temperature -1", "--temperature: -1 is negative"},
      {"bench spec --target " + model + " --draft " + model + " --temperatures 0 -1",
       "--temperatures: -1 is negative"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome r = run_command(seed(args));
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(r.output.find("workload"), std::string::npos) << "printed before the check: " << r.output;
  }
}

// A puzzle is four numbers in one argument; unquoted numbers are not four
// puzzles of one number.
TEST_F(CliTest, PuzzlesThatAreNotFourNumbersAreRefusedWithTheQuotedForm) {
  const std::string model = model_dir_->string();
  for (const std::string& command : {"tree --target " + model, "bench spec --target " + model + " --draft " + model}) {
    const Outcome unquoted = run_command(seed(command + " --puzzles 1 1 4 6"));
    EXPECT_NE(unquoted.exit_code, 0) << command;
    EXPECT_NE(unquoted.output.find("--puzzles: '1' is 1 number; a Game-of-24 puzzle is 4, quoted: "
                                   "--puzzles \"1 1 4 6\" \"2 3 5 12\""),
              std::string::npos)
        << unquoted.output;
    const Outcome three = run_command(seed(command + " --puzzles '1 1 4 6' '2 3 5'"));
    EXPECT_NE(three.exit_code, 0) << command;
    EXPECT_NE(three.output.find("--puzzles: '2 3 5' is 3 numbers"), std::string::npos) << three.output;
  }
}

// --chat on a folder without tokenizer_config.json says the file is missing.
TEST_F(CliTest, ChatWithoutTokenizerConfigSaysTheFileIsMissing) {
  const Outcome r = run_command(seed("generate --model " + model_dir_->string() + " --prompt hi --chat"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--chat: " + (*model_dir_ / "tokenizer_config.json").string() +
                          " does not exist, so the model has no chat template"),
            std::string::npos)
      << r.output;
}

TEST_F(CliTest, ThreadFlagsThatOversubscribeWarnWithTheAutomaticPlan) {
  const Outcome b = run_command(seed("--threads 64 bench spec --target " + model_dir_->string() + " --draft " +
                                     model_dir_->string() + " --engines ar seed --n 1 --temperatures 0 --repeats 1 "
                                     "--thought-tokens 4 --evaluation-tokens 4"));
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("the thread flags oversubscribe this machine"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("without thread flags seed would run"), std::string::npos) << b.output;
}

// bench spec's threads column is target+drafters x threads: on one core the
// drafter shares the target's; eight cores give the target seven (n = 1
// keeps one drafter busy), whatever this machine has.
TEST_F(CliTest, OmpNumThreadsSetsTheCoresTheThreadPlanSplits) {
  const std::string bench = "bench spec --target " + model_dir_->string() + " --draft " + model_dir_->string() +
                            " --engines seed --n 1 --temperatures 0 --repeats 1 --thought-tokens 4 "
                            "--evaluation-tokens 4";
  const Outcome one = run_command("OMP_NUM_THREADS=1 " + seed(bench));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find(" 1+1x1 "), std::string::npos) << one.output;
  const Outcome eight = run_command("OMP_NUM_THREADS=8 " + seed(bench));
  ASSERT_EQ(eight.exit_code, 0) << eight.output;
  EXPECT_NE(eight.output.find(" 7+1x1 "), std::string::npos) << eight.output;
}

}  // namespace
