// results.jsonl keeps every finished problem, even one whose model output is
// not valid UTF-8, and a resumed run reads it back.
#include "launch/run_results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/throws_error.h"

namespace seed::launch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using seed::testing::throws_error;

// A results.jsonl line with the fields summary() totals.
json record(size_t index, const std::string& answer) {
  return {{"index", index}, {"answer", answer}, {"correct", true}, {"requests", 2},
          {"failed_requests", 0}, {"wall_s", 0.5}, {"tokens", 7}};
}

TEST(RunResultsTest, ModelOutputThatIsNotUtf8IsKeptWithReplacementCharacters) {
  const fs::path dir = fs::temp_directory_path() / ("seed_run_results_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const json settings = {{"task", "game24"}, {"search", "cot"}, {"engine", "ar"}};
  // A byte-fallback token can stop mid-character: 0xE2 opens a 3-byte
  // sequence that the quote after it does not continue.
  const std::string torn = std::string("4 + 9 = 13 \xE2") + "' (left: 13)";
  {
    RunResults results(dir.string(), settings, /*resume=*/false);
    results.append(record(0, "fine"));
    results.append(record(1, torn));
  }
  RunResults resumed(dir.string(), settings, /*resume=*/true);
  ASSERT_EQ(resumed.done().size(), 2u);
  EXPECT_EQ(resumed.done().at(0).at("answer"), "fine");
  EXPECT_EQ(resumed.done().at(1).at("answer"), "4 + 9 = 13 \xEF\xBF\xBD' (left: 13)");  // U+FFFD
  fs::remove_all(dir);
}

// A damaged line of a resumed run is an error naming the file, the line and
// the field, never an exception from deep inside the summary.
TEST(RunResultsTest, ResumingRefusesALineWithAMissingOrMistypedField) {
  const fs::path dir = fs::temp_directory_path() / ("seed_run_results_damaged_" + std::to_string(getpid()));
  const json settings = {{"task", "game24"}, {"search", "cot"}, {"engine", "ar"}};
  const std::string results = (dir / "results.jsonl").string();
  const auto resume_with = [&](const json& line) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "run.json") << settings.dump();
    std::ofstream(results) << record(0, "fine").dump() << "\n" << line.dump() << "\n";
    RunResults resumed(dir.string(), settings, /*resume=*/true);
  };
  json missing = record(1, "x");
  missing.erase("failed_requests");
  EXPECT_TRUE(throws_error([&] { resume_with(missing); }, ErrorKind::kCorruption,
                           {results, "line 2", "'failed_requests' is missing"}));
  json mistyped = record(1, "x");
  mistyped["correct"] = "yes";
  EXPECT_TRUE(throws_error([&] { resume_with(mistyped); }, ErrorKind::kCorruption, {results, "line 2", "'correct'"}));
  json negative = record(1, "x");
  negative["tokens"] = -4;
  EXPECT_TRUE(throws_error([&] { resume_with(negative); }, ErrorKind::kCorruption, {results, "line 2", "'tokens'"}));
  json huge = record(1, "x");
  huge["requests"] = uint64_t{1} << 63;  // would overflow the summary's int64 sums
  EXPECT_TRUE(throws_error([&] { resume_with(huge); }, ErrorKind::kCorruption, {results, "line 2", "'requests'"}));
  EXPECT_TRUE(throws_error([&] { resume_with(json::array({1})); }, ErrorKind::kCorruption,
                           {results, "line 2", "not a JSON object"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::launch
