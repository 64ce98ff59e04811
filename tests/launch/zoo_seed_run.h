// `seed run` on the zoo pair over a synthetic 24.csv
// (synthetic_game24_csv.h), as the tests that run it whole build the
// command. Needs SEED_SOURCE_DIR and SEED_BINARY (tests/CMakeLists.txt,
// seed_add_binary_test).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace seed::testing {

// `seed run` on one thread with the zoo target and draft, reading
// dir/24.csv and writing the run folder `out`; `args` add the task, search,
// engine and the rest.
inline std::string zoo_run(const std::filesystem::path& dir, const std::filesystem::path& out,
                           const std::string& args) {
  const std::string src = SEED_SOURCE_DIR;
  return std::string(SEED_BINARY) + " --threads 1 run --target " + src + "/models/zoo/tiny-target --draft " + src +
         "/models/zoo/tiny-draft --data " + (dir / "24.csv").string() + " --out " + out.string() + " " + args;
}

// Reads dir/24.csv and writes dir/out with the seed engine on the Game-of-24
// task; `search` names the search and its parameters.
inline std::string zoo_seed_run(const std::filesystem::path& dir, const std::string& search, int problems,
                                const std::string& extra) {
  return zoo_run(dir, dir / "out",
                 "--task " + std::string(SEED_SOURCE_DIR) + "/tasks/game24 --search " + search +
                     " --engine seed --limit " + std::to_string(problems) + " " + extra);
}

// zoo_run into dir/name under `launcher` (say "launch/mpirun.sh -n 3 -- ",
// or ""), its output in dir/name.log, stopped after `timeout_s`: its exit
// status.
inline int zoo_run_logged(const std::string& launcher, const std::filesystem::path& dir, const std::string& name,
                          const std::string& args, int timeout_s) {
  const std::string command = "timeout -k 10 " + std::to_string(timeout_s) + " " + launcher +
                              zoo_run(dir, dir / name, args) + " > " + (dir / (name + ".log")).string() + " 2>&1";
  return std::system(command.c_str());
}

}  // namespace seed::testing
