// --puzzles, the option of the commands that run on Game-of-24 puzzles.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "launch/counted.h"
#include "models/base/error.h"
#include "tasks/game24.h"

namespace seed::launch {

// Adds --puzzles: puzzles of four integers, each one argument. Unquoted,
// `--puzzles 1 1 4 6` is four arguments, so a puzzle that is not four
// numbers is refused, its message showing the quoted form.
inline CLI::Option* add_puzzles_option(CLI::App* command, std::vector<std::string>* puzzles, const std::string& help) {
  const CLI::Validator four_numbers(
      [](std::string& text) -> std::string {
        size_t numbers = 0;
        try {
          numbers = tasks::parse_puzzle(text).size();
        } catch (const Error& e) {
          return e.what();
        }
        if (numbers == tasks::kGame24PuzzleNumbers) return "";
        return "'" + text + "' is " + counted(static_cast<int64_t>(numbers), "number") + "; a Game-of-24 puzzle is " +
               std::to_string(tasks::kGame24PuzzleNumbers) + ", quoted: --puzzles \"1 1 4 6\" \"2 3 5 12\"";
      },
      "");
  return command->add_option("--puzzles", *puzzles, help)->check(four_numbers)->capture_default_str();
}

}  // namespace seed::launch
