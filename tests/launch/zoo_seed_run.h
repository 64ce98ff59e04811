// `seed run` of the seed engine on the zoo pair over a synthetic 24.csv
// (synthetic_game24_csv.h), for the tests that interrupt runs. Needs
// SEED_SOURCE_DIR and SEED_BINARY (tests/CMakeLists.txt, seed_add_binary_test).
#pragma once

#include <filesystem>
#include <string>

namespace seed::testing {

// Reads dir/24.csv and writes dir/out; `search` names the search and its
// parameters.
inline std::string zoo_seed_run(const std::filesystem::path& dir, const std::string& search, int problems,
                                const std::string& extra) {
  const std::string src = SEED_SOURCE_DIR;
  return std::string(SEED_BINARY) + " --threads 1 run --task " + src + "/tasks/game24 --target " + src +
         "/models/zoo/tiny-target --draft " + src + "/models/zoo/tiny-draft --data " + (dir / "24.csv").string() +
         " --search " + search + " --engine seed --limit " + std::to_string(problems) + " --out " +
         (dir / "out").string() + " " + extra;
}

}  // namespace seed::testing
