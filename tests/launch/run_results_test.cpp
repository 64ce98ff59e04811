// results.jsonl keeps every finished problem, even one whose model output is
// not valid UTF-8, and a resumed run reads it back.
#include "launch/run_results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace seed::launch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(RunResultsTest, ModelOutputThatIsNotUtf8IsKeptWithReplacementCharacters) {
  const fs::path dir = fs::temp_directory_path() / ("seed_run_results_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const json settings = {{"task", "game24"}, {"search", "cot"}, {"engine", "ar"}};
  // A byte-fallback token can stop mid-character: 0xE2 opens a 3-byte
  // sequence that the quote after it does not continue.
  const std::string torn = std::string("4 + 9 = 13 \xE2") + "' (left: 13)";
  {
    RunResults results(dir.string(), settings, /*resume=*/false);
    results.append({{"index", 0}, {"answer", "fine"}});
    results.append({{"index", 1}, {"answer", torn}});
  }
  RunResults resumed(dir.string(), settings, /*resume=*/true);
  ASSERT_EQ(resumed.done().size(), 2u);
  EXPECT_EQ(resumed.done().at(0).at("answer"), "fine");
  EXPECT_EQ(resumed.done().at(1).at("answer"), "4 + 9 = 13 \xEF\xBF\xBD' (left: 13)");  // U+FFFD
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seed::launch
