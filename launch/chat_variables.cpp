#include "launch/chat_variables.h"

#include <cctype>

#include "models/base/error.h"

namespace seed::launch {

void add_chat_variable_option(CLI::App& cmd, CLI::Option* chat, std::vector<std::string>* assignments) {
  const std::string what = chat != nullptr ? "With --chat: a chat template variable NAME=JSON"
                                           : "A chat template variable NAME=JSON over task.json's chat.variables";
  CLI::Option* option =
      cmd.add_option("--chat-var", *assignments,
                     what + ", as apply_chat_template's keyword arguments (repeatable; e.g. enable_thinking=false "
                            "for Qwen3, a string quoted: NAME='\"text\"')")
          ->allow_extra_args(false);  // one NAME=JSON per --chat-var
  if (chat != nullptr) option->needs(chat);
}

nlohmann::ordered_json parse_chat_variables(const std::vector<std::string>& assignments) {
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  for (const std::string& assignment : assignments) {
    const size_t equals = assignment.find('=');
    SEED_CHECK(equals != std::string::npos, kInvalidArgument)
        << "--chat-var " << assignment << ": expected NAME=JSON, e.g. enable_thinking=false";
    const std::string name = assignment.substr(0, equals);
    bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (const char c : name) identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    SEED_CHECK(identifier, kInvalidArgument)
        << "--chat-var " << assignment << ": '" << name << "' is not a template variable name (letters, digits, _)";
    SEED_CHECK(name != "messages" && name != "add_generation_prompt", kInvalidArgument)
        << "--chat-var " << assignment << ": the command sets " << name << " itself";
    try {
      variables[name] = nlohmann::ordered_json::parse(assignment.substr(equals + 1));
    } catch (const nlohmann::json::parse_error&) {
      SEED_FAIL(kInvalidArgument) << "--chat-var " << assignment << ": the value is not JSON (quote a string: " << name
                                  << "='\"" << assignment.substr(equals + 1) << "\"')";
    }
  }
  return variables;
}

}  // namespace seed::launch
