// A 24.csv in Tree of Thoughts' layout, so that `seed run` tests need nothing
// outside the repository. Rows 901-1000 (the task's test split) cycle through
// the real file's first four test puzzles; every other row repeats the last.
#pragma once

#include <filesystem>
#include <fstream>

namespace seed::testing {

inline void write_synthetic_game24_csv(const std::filesystem::path& path) {
  std::ofstream csv(path);
  csv << "Rank,Puzzles,AMT (s),Solved rate,1-sigma Mean (s),1-sigma STD (s)\n";
  const char* puzzles[] = {"4 5 6 10", "4 9 10 13", "1 4 8 8", "2 5 7 11"};
  for (int rank = 1; rank <= 1000; ++rank) {
    csv << rank << "," << puzzles[rank < 901 ? 3 : (rank - 901) % 4] << ",10.0,90.00%,10.0,1.0\n";
  }
}

}  // namespace seed::testing
