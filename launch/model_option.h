// --model, the option of every command that reads one model folder, and
// the same check for a model folder a command takes otherwise.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>

#include "models/base/error.h"
#include "models/tokenizer.h"

namespace seed::launch {

// Adds --model: a model folder, required, that must exist.
inline CLI::Option* add_model_option(CLI::App* command, std::string* model_dir, const std::string& help) {
  return command->add_option("--model", *model_dir, help)->required()->check(CLI::ExistingDirectory);
}

// Throws kNotFound naming `flag` unless `model_dir` is a folder: a missing
// one fails before anything loads, by the flag that named it.
inline void check_model_folder(const std::string& model_dir, const std::string& flag) {
  SEED_CHECK(std::filesystem::is_directory(model_dir), kNotFound) << flag << ": " << model_dir << ": no such folder";
}

// Throws kNotFound naming `flag` unless `model_dir` is a folder with a
// tokenizer, for a command whose prompts are text: a folder without one
// (random weights from make_tiny_model --config, say) would fail only after
// it loads.
inline void check_text_model_folder(const std::string& model_dir, const std::string& flag) {
  check_model_folder(model_dir, flag);
  SEED_CHECK(models::has_tokenizer(model_dir), kNotFound)
      << flag << ": " << model_dir << " has no tokenizer (tokenizer.model or tokenizer.json) to read the "
      << "prompts with";
}

}  // namespace seed::launch
