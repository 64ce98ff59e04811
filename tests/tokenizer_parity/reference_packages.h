// What the parity tests share: the pinned npm packages of the Hugging Face
// reference, installed once into the test folder, and JSON-lines files.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/launch/command_outcome.h"

namespace seed::testing {

constexpr int kNoReferenceExitCode = 77;  // npm_ci.sh: no node, or the registry is unreachable

// Installs the packages of tests/tokenizer_parity/package-lock.json into
// `dir`; an exit code of kNoReferenceExitCode means the test should skip.
// flock: ctest -j runs several parity tests at once.
inline Outcome install_reference_packages(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  return run_command("flock " + dir.string() + "/.lock sh " SEED_SOURCE_DIR "/tests/tokenizer_parity/npm_ci.sh " +
                     dir.string());
}

template <typename Json>
void write_lines(const std::filesystem::path& path, const std::vector<Json>& values) {
  std::ofstream out(path);
  for (const Json& value : values) out << value.dump() << '\n';
}

}  // namespace seed::testing
