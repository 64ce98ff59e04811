// results.jsonl keeps every finished problem, even one whose model output is
// not valid UTF-8, and a resumed run reads it back; a write that the system
// refuses (a file size limit, as on a full disk) names the file and leaves
// the output folder resumable.
#include "launch/run_results.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Only the last line can be torn (each is written whole with its newline):
// a complete line that is not JSON is an error, and the lines after it,
// finished problems, stay in the file rather than being cut off and rerun.
TEST(RunResultsTest, ResumingRefusesACompleteLineThatIsNotJsonAndKeepsTheLinesAfterIt) {
  const fs::path dir = fs::temp_directory_path() / ("seed_run_results_garbled_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const json settings = {{"task", "game24"}, {"search", "cot"}, {"engine", "ar"}};
  std::ofstream(dir / "run.json") << settings.dump();
  const fs::path results = dir / "results.jsonl";
  std::ofstream(results) << record(0, "a").dump() << "\n{\"index\": 1, \"ans\n" << record(2, "c").dump() << "\n";
  const std::string before = read_file(results);
  EXPECT_TRUE(throws_error([&] { RunResults(dir.string(), settings, /*resume=*/true); }, ErrorKind::kCorruption,
                           {results.string(), "line 2", "not valid JSON"}));
  EXPECT_EQ(read_file(results), before);
  fs::remove_all(dir);
}

// Files this process writes cannot grow past `bytes` while it lives; writes
// beyond fail with EFBIG (as `seed` sets up: SIGXFSZ ignored).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_signal_ = signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit limit = previous_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &previous_);
    signal(SIGXFSZ, previous_signal_);
  }

 private:
  rlimit previous_;
  sighandler_t previous_signal_;
};

class RunResultsFullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seed_run_results_full_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  const json settings_ = {{"task", "game24"}, {"search", "cot"}, {"engine", "ar"}};
};

TEST_F(RunResultsFullDiskTest, ALineTheSystemCutsShortNamesTheFileAndResumeDropsIt) {
  const fs::path results = dir_ / "results.jsonl";
  {
    RunResults run(dir_.string(), settings_, /*resume=*/false);
    run.append(record(0, "kept"));
    const FileSizeLimit limit(fs::file_size(results) + 10);
    EXPECT_TRUE(seed::testing::throws_error([&] { run.append(record(1, std::string(500, 'x'))); },
                                            ErrorKind::kIo, {results.string(), "File too large", "--resume"}));
  }
  const std::string torn = read_file(results);
  ASSERT_NE(torn.back(), '\n') << "the second line was expected to be cut short";
  RunResults resumed(dir_.string(), settings_, /*resume=*/true);
  ASSERT_EQ(resumed.done().size(), 1u);
  EXPECT_EQ(resumed.done().at(0).at("answer"), "kept");
  EXPECT_EQ(read_file(results), torn.substr(0, torn.find('\n') + 1));
}

TEST_F(RunResultsFullDiskTest, ARunJsonThatCannotBeRewrittenStaysWholeAndTheRunStillResumes) {
  {
    RunResults run(dir_.string(), settings_, /*resume=*/false, json{{"threads", "before"}});
    run.append(record(0, "kept"));
  }
  const fs::path run_json = dir_ / "run.json";
  const std::string before = read_file(run_json);
  {
    const FileSizeLimit limit(10);
    EXPECT_TRUE(seed::testing::throws_error(
        [&] { RunResults(dir_.string(), settings_, /*resume=*/true, json{{"threads", "after"}}); }, ErrorKind::kIo,
        {run_json.string(), "File too large"}));
  }
  EXPECT_EQ(read_file(run_json), before);
  RunResults resumed(dir_.string(), settings_, /*resume=*/true);
  EXPECT_EQ(resumed.done().size(), 1u);
}

}  // namespace
}  // namespace seed::launch
