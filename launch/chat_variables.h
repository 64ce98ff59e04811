// Template variables for the chat template, from the command line:
// `--chat-var NAME=JSON`, repeatable, as the keyword arguments of
// transformers' apply_chat_template(messages, **kwargs). Qwen3's template
// reads `enable_thinking` (`--chat-var enable_thinking=false` writes the
// empty <think> block that turns its reasoning off); others read `tools`,
// `date_string` and the like.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace seed::launch {

// Adds `--chat-var NAME=JSON` to `cmd`, collected into `assignments`, allowed
// only with `chat` (the --chat flag), or where `chat` is null, over the
// variables the command's chat prompts already have (`seed run`: task.json's
// chat.variables). `assignments` must outlive `cmd`.
void add_chat_variable_option(CLI::App& cmd, CLI::Option* chat, std::vector<std::string>* assignments);

// The variables of NAME=JSON `assignments` as one object, for
// ChatTemplate::render's `extra`; a later NAME overrides an earlier one.
// kInvalidArgument naming the assignment for one without '=', a NAME that
// is not an identifier or that the command sets itself (messages,
// add_generation_prompt), or a value that is not JSON (a string is quoted:
// NAME='"text"').
nlohmann::ordered_json parse_chat_variables(const std::vector<std::string>& assignments);

}  // namespace seed::launch
