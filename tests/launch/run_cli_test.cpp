// `seed run` end to end on the shipped zoo pair and the game24 task folder:
// output files, --resume, --tree-out, answers that do not depend on the
// engine (greedy decoding: ar and seed must agree), and one copy of the
// target for its engine and a hidden-state step verifier.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/launch/command_outcome.h"
#include "tests/launch/synthetic_game24_csv.h"

namespace {

namespace fs = std::filesystem;
using seed::testing::Outcome;
using seed::testing::read_lines;
using seed::testing::results_by_index;
using seed::testing::run_command;
using nlohmann::json;

class RunCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("seed_run_test_" + std::to_string(getpid()));
    fs::remove_all(out_);
    fs::create_directories(out_);
    csv_ = out_ / "24.csv";
    seed::testing::write_synthetic_game24_csv(csv_);
  }
  void TearDown() override { fs::remove_all(out_); }
  // A small greedy ToT-BFS: one proposal step, two thoughts, one kept.
  std::string seed_run(const std::string& engine, const std::string& out, const std::string& extra) const {
    const std::string src = SEED_SOURCE_DIR;
    return std::string(SEED_BINARY) + " --threads 1 --log-level warn run --task " + src + "/tasks/game24" +
           " --target " + src + "/models/zoo/tiny-target --draft " + src + "/models/zoo/tiny-draft" +
           " --data " + csv_.string() + " --search bfs --depth 1 --n 2 --b 1 --engine " + engine + " --out " + out +
           " " + extra;
  }
  fs::path out_;
  fs::path csv_;
};

TEST_F(RunCliTest, WritesOneLinePerProblemAndASummary) {
  const Outcome r = run_command(seed_run("ar", (out_ / "a").string(), "--limit 2 --tree-out " +
                                                                           (out_ / "tree.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::map<int64_t, json> lines = results_by_index(out_ / "a" / "results.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  ASSERT_EQ(lines.count(0), 1u);
  for (const char* key : {"problem", "answer", "correct", "tree", "tokens", "target_forwards", "alpha", "wall_s"}) {
    EXPECT_TRUE(lines.at(0).contains(key)) << key;
  }
  EXPECT_EQ(lines.at(0)["problem"]["input"], "4 5 6 10");  // row 900, the first test puzzle
  std::ifstream summary_file(out_ / "a" / "summary.json");
  const json summary = json::parse(summary_file);
  for (const char* key : {"task", "search", "engine", "problems", "correct", "accuracy", "tokens", "tokens_per_s",
                          "wall_s"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  EXPECT_EQ(summary["problems"], 2);
  // Progress: no estimate before a problem finishes, one after, the time
  // taken at the end.
  const std::regex progress(R"(\] 0/2  accuracy 0\.0%  0 in flight  0 tokens/s  ETA \?\n(.|\n)*)"
                            R"(\] 1/2  accuracy .* ETA \d+m\d\ds\n(.|\n)*\] 2/2  accuracy .* in \d+ s\n)");
  EXPECT_TRUE(std::regex_search(r.output, progress)) << r.output;
  std::ifstream tree_file(out_ / "tree.json");
  const json trees = json::parse(tree_file);
  ASSERT_EQ(trees["problems"].size(), 2u);
  EXPECT_EQ(trees["problems"][0]["tree"]["chosen_path"].size(), 2u);  // root and one thought
}

// --schedule-out: every proposal is queued by a drafter and verified once,
// after it was queued, and the forwards numbered in the trace are the
// forwards summary.json counts.
TEST_F(RunCliTest, TheScheduleTraceHasEveryProposalQueuedThenVerifiedOnce) {
  const fs::path trace = out_ / "schedule.jsonl";
  const Outcome r = run_command(seed_run("seed-batch", (out_ / "s").string(),
                                         "--limit 3 --drafters 2 --schedule-out " + trace.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<uint64_t, int> queued;  // slot -> proposals queued and not yet verified
  std::set<int> forwards;
  size_t verified = 0;
  for (const json& event : read_lines(trace)) {
    const uint64_t slot = event["slot"];
    if (event["event"] == "proposed") {
      EXPECT_GE(event["drafter"].get<int>(), 0);
      EXPECT_LT(event["drafter"].get<int>(), 2);
      ++queued[slot];
    } else {
      ASSERT_EQ(event["event"], "verified");
      ASSERT_GT(queued[slot], 0) << "slot " << slot << " verified before it was proposed";
      --queued[slot];
      ++verified;
      forwards.insert(event["forward"].get<int>());
    }
  }
  EXPECT_GT(verified, 0u);
  for (const auto& [slot, left] : queued) EXPECT_EQ(left, 0) << "slot " << slot << " queued and never verified";
  std::ifstream summary_file(out_ / "s" / "summary.json");
  const json summary = json::parse(summary_file);
  EXPECT_EQ(static_cast<int64_t>(forwards.size()), summary["engine_invocation"]["target_forwards"].get<int64_t>());
  EXPECT_EQ(*forwards.rbegin() + 1, static_cast<int>(forwards.size())) << "forwards are numbered 0, 1, ...";
}

TEST_F(RunCliTest, ResumeComputesOnlyTheMissingProblemsAndRefusesOtherSettings) {
  const std::string out = (out_ / "r").string();
  ASSERT_EQ(run_command(seed_run("ar", out, "--limit 1")).exit_code, 0);
  // A torn last line, as an interrupted write leaves it, is dropped and redone.
  { std::ofstream(out_ / "r" / "results.jsonl", std::ios::app) << R"({"index": 1, "answ)"; }
  const Outcome again = run_command(seed_run("ar", out, "--limit 2"));
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("--resume"), std::string::npos) << again.output;
  const Outcome resumed = run_command(seed_run("ar", out, "--limit 2 --resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const std::vector<json> lines = read_lines(out_ / "r" / "results.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["index"], 0);
  EXPECT_EQ(lines[1]["index"], 1);
  const Outcome other = run_command(seed_run("ar", out, "--limit 2 --resume --seed 9"));
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.output.find("'seed'"), std::string::npos) << other.output;
  // A setting that is an object is named down to the key that differs.
  std::string with_n3 = seed_run("ar", out, "--limit 2 --resume");
  with_n3.replace(with_n3.find(" --n 2 "), 7, " --n 3 ");
  const Outcome wider = run_command(with_n3);
  EXPECT_EQ(wider.exit_code, 1);
  EXPECT_NE(wider.output.find("--resume: setting 'params.n' is 3 but the run in " + out + " used 2"),
            std::string::npos)
      << wider.output;
}

// As on a full disk: the run ends with an error naming results.jsonl (not
// SIGXFSZ's core dump), keeps the whole lines, and --resume finishes it.
TEST_F(RunCliTest, AFileSizeLimitEndsTheRunWithAnErrorNamingTheFileAndTheRunResumes) {
  const std::string out = (out_ / "full").string();
  // 2 KiB: run.json (about 1 KiB) fits, the fourth result line (about 600 bytes each) does not.
  const Outcome full = run_command("sh -c 'ulimit -f 2; exec " + seed_run("seed", out, "--limit 4") + "'");
  EXPECT_EQ(full.exit_code, 1) << full.output;
  EXPECT_NE(full.output.find("cannot write " + out + "/results.jsonl: File too large"), std::string::npos)
      << full.output;
  const Outcome resumed = run_command(seed_run("seed", out, "--limit 4 --resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const std::vector<json> lines = read_lines(out_ / "full" / "results.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  // Problems in flight together append in the order they finish.
  std::vector<int> indices;
  for (const json& line : lines) indices.push_back(line["index"].get<int>());
  std::sort(indices.begin(), indices.end());
  EXPECT_EQ(indices, std::vector<int>({0, 1, 2, 3}));
}

// Step speculation judged by the target's hidden states reads them with the
// target engine's own model, not a second copy.
TEST_F(RunCliTest, AHiddenStateStepVerifierReadsWithTheTargetEnginesModel) {
  const std::string src = SEED_SOURCE_DIR;
  const Outcome r = run_command(std::string(SEED_BINARY) + " --threads 1 --log-level info run --task " + src +
                                "/tasks/game24 --target " + src + "/models/zoo/tiny-target --draft " + src +
                                "/models/zoo/tiny-draft --data " + csv_.string() +
                                " --search bfs --depth 1 --n 2 --b 1 --limit 1 --lookahead 2 --step-verifier hidden" +
                                " --out " + (out_ / "hidden").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--target " + src + "/models/zoo/tiny-target: reusing the model already loaded"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(read_lines(out_ / "hidden" / "results.jsonl").size(), 1u);
}

TEST_F(RunCliTest, SpeculationNeverChangesGreedyAnswers) {
  const std::string ar = (out_ / "ar").string(), seed = (out_ / "seed").string();
  ASSERT_EQ(run_command(seed_run("ar", ar, "--limit 2")).exit_code, 0);
  // The target alone gains one token a forward, the end-of-sequence token
  // that ends a request included.
  std::ifstream ar_summary(out_ / "ar" / "summary.json");
  EXPECT_EQ(json::parse(ar_summary)["tau"].get<double>(), 1.0);
  const Outcome r = run_command(seed_run("seed", seed, "--limit 2 --baseline " + ar));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::map<int64_t, json> a = results_by_index(out_ / "ar" / "results.jsonl");
  const std::map<int64_t, json> s = results_by_index(out_ / "seed" / "results.jsonl");
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(s.size(), 2u);
  for (const auto& [index, line] : a) EXPECT_EQ(line["answer_text"], s.at(index)["answer_text"]) << index;
  EXPECT_NE(r.output.find("identical answers: 2 of 2"), std::string::npos) << r.output;
  // A model-free drafter too; the summary reports its acceptance and time.
  const std::string aded = (out_ / "aded").string();
  const Outcome m = run_command(seed_run("seed", aded, "--limit 2 --drafter aded --baseline " + ar));
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_NE(m.output.find("identical answers: 2 of 2"), std::string::npos) << m.output;
  std::ifstream summary_file(out_ / "aded" / "summary.json");
  const json summary = json::parse(summary_file);
  EXPECT_EQ(summary["drafter"], "aded");
  EXPECT_GT(summary["drafted_tokens"].get<int64_t>(), 0);
  EXPECT_GT(summary["draft_ms_per_token"].get<double>(), 0.0);
  // Pruned candidate trees too; the run records their thresholds, and a
  // resume with other ones is refused.
  const std::string pct = (out_ / "pct").string();
  const Outcome p = run_command(seed_run("seed", pct, "--limit 2 --tree pct --pct-threshold 0.1 --baseline " + ar));
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_NE(p.output.find("identical answers: 2 of 2"), std::string::npos) << p.output;
  const Outcome other = run_command(seed_run("seed", pct, "--limit 2 --tree pct --pct-threshold 0.2 --resume"));
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.output.find("pct"), std::string::npos) << other.output;
}

// Sampled requests (chains of thought at T = 0.7) keep `ar`'s tokens too;
// drawing their drafts from the draft's q is an option the run records.
TEST_F(RunCliTest, SpeculationNeverChangesSampledAnswers) {
  const std::string src = SEED_SOURCE_DIR;
  const auto cot_run = [&](const std::string& engine, const std::string& out, const std::string& extra) {
    return std::string(SEED_BINARY) + " --threads 1 --log-level warn run --task " + src + "/tasks/game24" +
           " --target " + src + "/models/zoo/tiny-target --draft " + src + "/models/zoo/tiny-draft" +
           " --data " + csv_.string() + " --search cot --limit 2 --engine " + engine + " --out " + out + " " + extra;
  };
  const std::string ar = (out_ / "ar").string();
  ASSERT_EQ(run_command(cot_run("ar-batch", ar, "")).exit_code, 0);
  for (const std::string engine : {"seed-batch", "sd"}) {
    const std::string out = (out_ / engine).string();
    const Outcome r = run_command(cot_run(engine, out, "--baseline " + ar));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("identical answers: 2 of 2"), std::string::npos) << r.output;
    const std::map<int64_t, json> a = results_by_index(out_ / "ar" / "results.jsonl");
    const std::map<int64_t, json> s = results_by_index(out_ / engine / "results.jsonl");
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(s.size(), 2u);
    for (const auto& [index, line] : a) {
      EXPECT_EQ(line["answer_text"], s.at(index)["answer_text"]) << engine << " " << index;
      EXPECT_EQ(line["tokens"], s.at(index)["tokens"]) << engine << " " << index;
    }
  }
  const std::string drawn = (out_ / "drawn").string();
  const Outcome d = run_command(cot_run("seed-batch", drawn, "--sampled-drafts"));
  ASSERT_EQ(d.exit_code, 0) << d.output;
  std::ifstream run_file(out_ / "drawn" / "run.json");
  EXPECT_EQ(json::parse(run_file).value("sampled_drafts", false), true);
  const Outcome lookup = run_command(cot_run("seed-batch", (out_ / "lookup").string(), "--sampled-drafts --drafter lookup"));
  EXPECT_NE(lookup.exit_code, 0);
  EXPECT_NE(lookup.output.find("--sampled-drafts"), std::string::npos) << lookup.output;
}

// The prefix cache and its budget change what the target computes, never
// what a search answers; summary.json says how much prompt work was saved.
TEST_F(RunCliTest, PrefixCacheAndKvBudgetChangeNoAnswer) {
  const std::string shared = (out_ / "shared").string(), full = (out_ / "full").string();
  const std::string small = (out_ / "small").string();
  ASSERT_EQ(run_command(seed_run("seed", shared, "--limit 2")).exit_code, 0);
  ASSERT_EQ(run_command(seed_run("seed", full, "--limit 2 --no-prefix-cache")).exit_code, 0);
  const Outcome r = run_command(seed_run("seed", small, "--limit 2 --kv-cache-mb 4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::map<int64_t, json> a = results_by_index(out_ / "shared" / "results.jsonl");
  const std::map<int64_t, json> b = results_by_index(out_ / "full" / "results.jsonl");
  const std::map<int64_t, json> c = results_by_index(out_ / "small" / "results.jsonl");
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  ASSERT_EQ(c.size(), 2u);
  for (const auto& [i, line] : a) {
    EXPECT_EQ(line["answer_text"], b.at(i)["answer_text"]) << i;
    EXPECT_EQ(line["answer_text"], c.at(i)["answer_text"]) << i;
    EXPECT_EQ(line["tokens"], b.at(i)["tokens"]) << i;
  }
  const auto summary = [](const fs::path& dir) { return json::parse(std::ifstream(dir / "summary.json")); };
  const json with = summary(out_ / "shared"), without = summary(out_ / "full");
  EXPECT_EQ(with["prompt_tokens"], without["prompt_tokens"]);
  EXPECT_EQ(without["prefill_tokens"], without["prompt_tokens"]);
  EXPECT_LT(with["prefill_tokens"].get<int64_t>(), with["prompt_tokens"].get<int64_t>());
  const Outcome bad = run_command(seed_run("seed", (out_ / "bad").string(), "--limit 1 --kv-cache-mb -1"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--kv-cache-mb"), std::string::npos) << bad.output;
}

TEST_F(RunCliTest, BenchSearchWritesTheDocumentedJsonRows) {
  const std::string src = SEED_SOURCE_DIR;
  const fs::path json_path = out_ / "search.json";
  const Outcome r = run_command(std::string(SEED_BINARY) + " --threads 1 --log-level warn bench search --task " +
                                src + "/tasks/game24 --data " + csv_.string() + " --search cot --limit 2 --target " +
                                src + "/models/zoo/tiny-target --draft " + src + "/models/zoo/tiny-draft --json " +
                                json_path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json rows = json::parse(std::ifstream(json_path))["rows"];
  ASSERT_EQ(rows.size(), 2u);
  for (const char* key : {"task", "search", "engine", "prefix_cache", "prefill_tokens", "prompt_tokens", "tokens",
                          "correct", "wall_s", "concurrency"}) {
    EXPECT_TRUE(rows[0].contains(key)) << key;
  }
  // auto on `seed-batch` (the default): chains of thought share forwards, both problems at once.
  EXPECT_EQ(rows[0]["concurrency"], 2);
  EXPECT_FALSE(rows[0]["prefix_cache"].get<bool>());
  EXPECT_TRUE(rows[1]["prefix_cache"].get<bool>());
  EXPECT_EQ(rows[0]["tokens"], rows[1]["tokens"]);
  EXPECT_NE(r.output.find("identical"), std::string::npos) << r.output;
  // The last line gives both wall times, the cache's first, and its speed over the run without.
  std::array<char, 160> times;
  std::snprintf(times.data(), times.size(), "wall time %.1f s with the cache against %.1f s without (",
                rows[1]["wall_s"].get<double>(), rows[0]["wall_s"].get<double>());
  EXPECT_NE(r.output.find(times.data()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x the speed)"), std::string::npos) << r.output;
}

// A model folder that is not there, a target without a tokenizer, or a
// draft of another vocabulary is named by its flag, before the run loads or
// writes anything.
TEST_F(RunCliTest, AMissingModelFolderIsNamedByItsFlag) {
  const std::string src = SEED_SOURCE_DIR;
  const std::string missing = (out_ / "nope").string();
  const std::string zoo = src + "/models/zoo/";
  const fs::path untokenized = out_ / "untokenized";
  fs::create_directories(untokenized);
  for (const char* file : {"config.json", "model.safetensors"}) {
    fs::copy_file(zoo + "tiny-target/" + file, untokenized / file, fs::copy_options::overwrite_existing);
  }
  // A draft of another vocabulary: its config says so, before anything loads.
  const fs::path other_vocabulary = out_ / "other-vocabulary";
  fs::create_directories(other_vocabulary);
  json draft_config = json::parse(std::ifstream(zoo + "tiny-draft/config.json"));
  draft_config["vocab_size"] = 320;
  std::ofstream(other_vocabulary / "config.json") << draft_config.dump();
  const std::pair<std::string, std::string> cases[] = {
      {"--target " + missing + " --draft " + zoo + "tiny-draft", "--target: " + missing + ": no such folder"},
      {"--target " + zoo + "tiny-target --draft " + other_vocabulary.string(),
       "--draft: " + other_vocabulary.string() + " has a vocabulary of 320 tokens, the target " + zoo +
           "tiny-target has 512; speculative decoding needs the target's tokenizer: pass a --draft that shares it, "
           "or an engine that does not draft (--engine ar-batch)"},
      {"--target " + zoo + "tiny-target --draft " + missing, "--draft: " + missing + ": no such folder"},
      {"--target " + untokenized.string() + " --draft " + zoo + "tiny-draft",
       "--target: " + untokenized.string() + " has no tokenizer (tokenizer.model or tokenizer.json)"},
  };
  for (const auto& [models, message] : cases) {
    const fs::path out = out_ / "run";
    const Outcome r = run_command(std::string(SEED_BINARY) + " --threads 1 run --task " + src + "/tasks/game24 " +
                                  models + " --data " + csv_.string() + " --limit 1 --out " + out.string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(out)) << "wrote before failing: " << r.output;
    const Outcome bench = run_command(std::string(SEED_BINARY) + " --threads 1 bench search --task " + src +
                                      "/tasks/game24 " + models + " --data " + csv_.string() + " --limit 1");
    EXPECT_EQ(bench.exit_code, 1) << bench.output;
    EXPECT_NE(bench.output.find(message), std::string::npos) << bench.output;
  }
}

TEST_F(RunCliTest, SeedDataDirHoldsTheDataSetsTheRepositoryDoesNotShip) {
  const std::string src = SEED_SOURCE_DIR;
  const fs::path sets = out_ / "sets";
  fs::create_directories(sets / "gsm8k");
  std::ofstream(sets / "gsm8k" / "test.jsonl") << json{{"question", "What is 1 + 1?"}, {"answer", "#### 2"}}.dump();
  const std::string run = " --threads 1 --log-level warn run --task " + src + "/tasks/gsm8k --target " + src +
                          "/models/zoo/tiny-target --search cot --limit 1 --engine ar --out ";
  const Outcome found =
      run_command("SEED_DATA_DIR=" + sets.string() + " " + SEED_BINARY + run + (out_ / "found").string());
  ASSERT_EQ(found.exit_code, 0) << found.output;
  EXPECT_EQ(json::parse(std::ifstream(out_ / "found" / "run.json"))["data"], (sets / "gsm8k" / "test.jsonl").string());
  EXPECT_EQ(read_lines(out_ / "found" / "results.jsonl").size(), 1u);

  const Outcome missing = run_command("env -u SEED_DATA_DIR " + std::string(SEED_BINARY) + run +
                                      (out_ / "missing").string());
  EXPECT_EQ(missing.exit_code, 1);
  for (const std::string& needle : {src + "/tasks/gsm8k/task.json: field 'data.path'", std::string("--data"),
                                    std::string("SEED_DATA_DIR is not set"), src + "/tasks/gsm8k/README.md"}) {
    EXPECT_NE(missing.output.find(needle), std::string::npos) << needle << "\n" << missing.output;
  }
}

// A copy of tasks/game24 with `"chat": chat`.
fs::path chat_task(const fs::path& dir, const json& chat) {
  fs::create_directories(dir);
  json task = json::parse(std::ifstream(std::string(SEED_SOURCE_DIR) + "/tasks/game24/task.json"));
  task["chat"] = chat;
  std::ofstream(dir / "task.json") << task.dump();
  return dir;
}

TEST_F(RunCliTest, AChatTaskNeedsATargetWithAChatTemplate) {
  const fs::path task = chat_task(out_ / "chat_task", true);
  const std::string src = SEED_SOURCE_DIR;
  const Outcome r = run_command(std::string(SEED_BINARY) + " --threads 1 run --task " + task.string() + " --target " +
                                src + "/models/zoo/tiny-target --data " + csv_.string() + " --search cot --limit 1" +
                                " --engine ar --out " + (out_ / "chat").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(task.string() + "/task.json: field 'chat'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(src + "/models/zoo/tiny-target/tokenizer_config.json does not exist"), std::string::npos)
      << r.output;
}

TEST_F(RunCliTest, AChatTaskRendersEveryPromptWithTheTemplate) {
  // The zoo target behind a template that passes the user's turn through
  // after the BOS text, given the task's variable plain_turns (as Qwen3's
  // reads enable_thinking): the chat run must see exactly the plain run's
  // tokens.
  const std::string src = SEED_SOURCE_DIR;
  const fs::path model = out_ / "chat_model";
  fs::create_directories(model);
  for (const char* file : {"config.json", "model.safetensors", "tokenizer.model"}) {
    fs::create_symlink(src + "/models/zoo/tiny-target/" + file, model / file);
  }
  std::ofstream(model / "tokenizer_config.json")
      << json{{"bos_token", "<s>"},
              {"chat_template", "{{ bos_token }}{% if messages[0].role == 'system' %}"
                                "{{ raise_exception('no system turn here') }}{% endif %}{% if not plain_turns %}"
                                "{{ raise_exception('plain_turns unset') }}{% endif %}{{ messages[-1].content }}"}}
             .dump();
  const fs::path task = chat_task(out_ / "chat_task", {{"variables", {{"plain_turns", true}}}});
  const auto run = [&](const std::string& task_dir, const std::string& target, const std::string& out,
                       const std::string& more = "") {
    return run_command(std::string(SEED_BINARY) + " --threads 1 --log-level warn run --task " + task_dir +
                       " --target " + target + " --data " + csv_.string() +
                       " --search bfs --depth 1 --n 2 --b 1 --limit 2 --engine ar --out " + out + more);
  };
  const Outcome plain = run(src + "/tasks/game24", src + "/models/zoo/tiny-target", (out_ / "plain").string());
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const Outcome chat = run(task.string(), model.string(), (out_ / "chat").string());
  ASSERT_EQ(chat.exit_code, 0) << chat.output;
  const std::map<int64_t, json> a = results_by_index(out_ / "plain" / "results.jsonl");
  const std::map<int64_t, json> b = results_by_index(out_ / "chat" / "results.jsonl");
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  for (const auto& [index, line] : a) {
    EXPECT_EQ(line["answer_text"], b.at(index)["answer_text"]) << index;
    EXPECT_EQ(line["tokens"], b.at(index)["tokens"]) << index;
  }
  const auto summary = [](const fs::path& dir) { return json::parse(std::ifstream(dir / "summary.json")); };
  EXPECT_EQ(summary(out_ / "plain")["prompt_tokens"], summary(out_ / "chat")["prompt_tokens"]);
  // A system turn reaches the template: this one refuses it, naming its message.
  const fs::path with_system =
      chat_task(out_ / "system_task", {{"system", "Be brief."}, {"variables", {{"plain_turns", true}}}});
  const Outcome refused = run(with_system.string(), model.string(), (out_ / "refused").string());
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("no system turn here"), std::string::npos) << refused.output;
  // Without the variable the template refuses too: the task's reach it.
  const fs::path unset_task = chat_task(out_ / "unset_task", true);
  const Outcome unset = run(unset_task.string(), model.string(), (out_ / "unset").string());
  EXPECT_NE(unset.exit_code, 0);
  EXPECT_NE(unset.output.find("plain_turns unset"), std::string::npos) << unset.output;
  // --chat-var sets it over the task's (here none), and run.json records it.
  const Outcome given = run(unset_task.string(), model.string(), (out_ / "given").string(),
                            " --chat-var plain_turns=false --chat-var plain_turns=true");
  ASSERT_EQ(given.exit_code, 0) << given.output;
  const std::map<int64_t, json> c = results_by_index(out_ / "given" / "results.jsonl");
  ASSERT_EQ(c.size(), 2u);
  for (const auto& [index, line] : a) EXPECT_EQ(line["tokens"], c.at(index)["tokens"]) << index;
  EXPECT_EQ(json::parse(std::ifstream(out_ / "given" / "run.json"))["chat"]["variables"],
            json({{"plain_turns", true}}));
  // Over a variable the task sets, too.
  const Outcome over = run(task.string(), model.string(), (out_ / "over").string(), " --chat-var plain_turns=false");
  EXPECT_NE(over.exit_code, 0);
  EXPECT_NE(over.output.find("plain_turns unset"), std::string::npos) << over.output;
  // A task without chat has no template to take them.
  const Outcome plain_var = run(src + "/tasks/game24", src + "/models/zoo/tiny-target", (out_ / "plain_var").string(),
                                " --chat-var plain_turns=true");
  EXPECT_EQ(plain_var.exit_code, 1);
  EXPECT_NE(plain_var.output.find("--chat-var: " + src + "/tasks/game24/task.json has no field 'chat'"),
            std::string::npos)
      << plain_var.output;
}

TEST_F(RunCliTest, ATaskJsonErrorNamesTheFileAndField) {
  fs::create_directories(out_ / "bad");
  std::ofstream(out_ / "bad" / "task.json") << R"({"name": "bad", "dat": {}})";
  // Model folders that exist: a missing one is reported first.
  const std::string zoo = std::string(SEED_SOURCE_DIR) + "/models/zoo/";
  const Outcome r = run_command(std::string(SEED_BINARY) + " run --task " + (out_ / "bad").string() + " --target " +
                                zoo + "tiny-target --draft " + zoo + "tiny-draft");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("task.json"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'data'"), std::string::npos) << r.output;
}

// Options whose mistakes would surface only after the whole run, or never,
// are refused before any problem runs: nothing is written to --out.
TEST_F(RunCliTest, OptionsThatWouldFailLateOrBeIgnoredAreRefusedBeforeTheRun) {
  const std::string out = (out_ / "early").string();
  const auto refused = [&](const std::string& extra, const std::vector<std::string>& named) {
    const Outcome r = run_command(seed_run("ar", out, "--limit 1 " + extra));
    EXPECT_NE(r.exit_code, 0) << extra << "\n" << r.output;
    for (const std::string& text : named) EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
    EXPECT_FALSE(fs::exists(fs::path(out) / "results.jsonl")) << extra;
  };
  refused("--tree-out " + (out_ / "no-such-folder" / "t.json").string(), {"--tree-out", "no-such-folder"});
  refused("--schedule-out " + (out_ / "no-such-folder" / "s.jsonl").string(), {"--schedule-out"});
  refused("--baseline " + (out_ / "no-such-run").string(), {"--baseline", "no-such-run"});
  refused("--samples 4", {"--samples", "bfs"});  // a best-of-n parameter
  refused("--drafters -1", {"--drafters"});
  refused("--tree bogus", {"--tree bogus", "pct"});  // the model drafter's only tree
  refused("--step-verifier hidden", {"--step-verifier", "--lookahead"});
  refused("--concurrency 2x", {"--concurrency: '2x' is neither a number >= 1 nor auto"});
  refused("--kv-cache-mb -5", {"--kv-cache-mb: -5 is negative"});

  // A baseline of another search is refused, naming what differs.
  const std::string cot = (out_ / "cot").string();
  const std::string src = SEED_SOURCE_DIR;
  ASSERT_EQ(run_command(std::string(SEED_BINARY) + " --threads 1 --log-level warn run --task " + src +
                        "/tasks/game24 --target " + src + "/models/zoo/tiny-target --data " + csv_.string() +
                        " --search cot --engine ar --limit 1 --out " + cot)
                .exit_code,
            0);
  refused("--baseline " + cot, {"--baseline", "\"cot\"", "\"bfs\""});
  EXPECT_NE(run_command(seed_run("ar", "''", "--limit 1")).exit_code, 0);  // --out ""
}

// --tp splits the target over an mpirun job's ranks; a single process says
// it holds the whole target rather than ignoring the flag.
TEST_F(RunCliTest, TpOutsideMpirunSaysThisProcessHoldsTheWholeTarget) {
  std::string command = seed_run("ar", (out_ / "tp").string(), "--limit 1");
  command.replace(command.find(" --threads 1"), 0, " --tp 2");
  const Outcome r = run_command(command);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--tp 2: this process is not one of an mpirun job's ranks"), std::string::npos)
      << r.output;
}

// A request that cannot run (its prompt is longer than the target's
// context) fails alone: the run goes on, and says which problems lost
// requests and the engine's reason, in the log, the table and the line.
TEST_F(RunCliTest, AFailedRequestIsReportedWithTheEnginesReason) {
  const fs::path task = out_ / "long";
  fs::copy(fs::path(SEED_SOURCE_DIR) / "tasks" / "game24", task, fs::copy_options::recursive);
  json spec = json::parse(std::ifstream(task / "task.json"));
  spec["generate"]["prompt"] = std::string(4000, '7') + spec["generate"]["prompt"].get<std::string>();
  std::ofstream(task / "task.json") << spec.dump(2);
  const std::string src = SEED_SOURCE_DIR;
  const Outcome r = run_command(std::string(SEED_BINARY) + " --threads 1 run --task " + task.string() +
                                " --target " + src + "/models/zoo/tiny-target --data " + csv_.string() +
                                " --search bfs --depth 1 --n 2 --b 1 --engine ar --limit 1 --out " +
                                (out_ / "l").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The proposal fails; the answer prompt, which has no thoughts to follow, runs.
  EXPECT_NE(r.output.find("problem 0: 1 of 2 requests failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("longer than the target's context"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("failed requests: 1 of 2"), std::string::npos) << r.output;
  // The prompt that never reached the target is not counted as read from its cache.
  EXPECT_NE(r.output.find("(0.0% reused from its prefix cache)"), std::string::npos) << r.output;
  const std::vector<json> lines = read_lines(out_ / "l" / "results.jsonl");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0]["error"].get<std::string>().find("context"), std::string::npos) << lines[0].dump();
}

// A run resumed with a lower --limit reports the problems it was asked for.
TEST_F(RunCliTest, AResumedRunWithALowerLimitSummarisesItsOwnProblems) {
  const std::string out = (out_ / "lower").string();
  ASSERT_EQ(run_command(seed_run("ar", out, "--limit 2")).exit_code, 0);
  const Outcome r = run_command(seed_run("ar", out, "--limit 1 --resume"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json summary = json::parse(std::ifstream(out_ / "lower" / "summary.json"));
  EXPECT_EQ(summary["problems"], 1);
  EXPECT_EQ(read_lines(out_ / "lower" / "results.jsonl").size(), 2u) << "the other line stays in the file";
}

}  // namespace
