// A 24.csv in Tree of Thoughts' layout with a few known puzzles, for `seed
// run` tests. Rows 901-1000 (the task's test split) cycle through
// the real file's first four test puzzles; every other row repeats the last.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace seed::testing {

inline void write_synthetic_game24_csv(const std::filesystem::path& path) {
  std::ofstream csv(path);
  csv << "Rank,Puzzles,AMT (s),Solved rate,1-sigma Mean (s),1-sigma STD (s)\n";
  const char* puzzles[] = {"4 5 6 10", "4 9 10 13", "1 4 8 8", "2 5 7 11"};
  for (int rank = 1; rank <= 1000; ++rank) {
    csv << rank << "," << puzzles[rank < 901 ? 3 : (rank - 901) % 4] << ",10.0,90.00%,10.0,1.0\n";
  }
}

// A test's scratch folder, fresh when made and removed with it, holding the
// synthetic puzzles as 24.csv.
class Game24ScratchDir {
 public:
  explicit Game24ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    write_synthetic_game24_csv(path_ / "24.csv");
  }
  ~Game24ScratchDir() { std::filesystem::remove_all(path_); }
  Game24ScratchDir(const Game24ScratchDir&) = delete;
  Game24ScratchDir& operator=(const Game24ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Each problem's `fields` from the run folder `run`'s results.jsonl, by
// problem index: what runs that must agree are compared on.
inline std::map<int64_t, nlohmann::json> result_fields(const std::filesystem::path& run,
                                                       const std::vector<std::string>& fields) {
  std::map<int64_t, nlohmann::json> out;
  std::ifstream in(run / "results.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    nlohmann::json kept = nlohmann::json::array();
    for (const std::string& field : fields) kept.push_back(row.at(field));
    out[row.at("index").get<int64_t>()] = std::move(kept);
  }
  return out;
}

// The run folder `run`'s summary.json.
inline nlohmann::json run_summary(const std::filesystem::path& run) {
  std::ifstream in(run / "summary.json");
  return nlohmann::json::parse(in);
}

}  // namespace seed::testing
