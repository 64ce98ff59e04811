// --model, the option of every command that reads one model folder.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace seed::launch {

// Adds --model: a model folder, required, that must exist.
inline CLI::Option* add_model_option(CLI::App* command, std::string* model_dir, const std::string& help) {
  return command->add_option("--model", *model_dir, help)->required()->check(CLI::ExistingDirectory);
}

}  // namespace seed::launch
