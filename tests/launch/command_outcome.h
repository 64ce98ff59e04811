// Running the `seed` binary from a test as a user runs it: a shell command,
// its exit status and everything it printed; and results.jsonl's lines.
#pragma once

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace seed::testing {

struct Outcome {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};

inline Outcome run_command(const std::string& command) {
  Outcome result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// One JSON value per line of `path`.
inline std::vector<nlohmann::json> read_lines(const std::filesystem::path& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// A run's results.jsonl by problem index: problems in flight together
// append their lines in the order they finish.
inline std::map<int64_t, nlohmann::json> results_by_index(const std::filesystem::path& path) {
  std::map<int64_t, nlohmann::json> results;
  for (nlohmann::json& line : read_lines(path)) {
    const auto index = line["index"].get<int64_t>();
    results[index] = std::move(line);
  }
  return results;
}

}  // namespace seed::testing
