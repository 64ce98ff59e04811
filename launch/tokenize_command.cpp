// `seed tokenize`: a model folder's tokenizer as a line filter, for checks
// against other implementations. Encoding reads one JSON string per line
// and writes one JSON array of ids; --decode the reverse. --chat reads one
// JSON list of messages per line and writes the chat template's text
// (--chat-var NAME=JSON adds template variables).
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "launch/chat_variables.h"
#include "launch/model_option.h"
#include "launch/tokenize_commands.h"
#include "models/base/error.h"
#include "models/chat_template/chat_template.h"
#include "models/hf_tokenizer/hf_tokenizer.h"
#include "models/tokenizer.h"

namespace seed::launch {
namespace {

struct TokenizeOptions {
  std::string model_dir;
  bool decode = false;
  bool no_special = false;    // encode without the special tokens (bos, template)
  bool keep_special = false;  // decode special tokens to their text
  bool chat = false;          // render lists of messages with the chat template
  bool no_generation_prompt = false;
  bool chat_ids = false;      // with chat: write the rendered prompt's ids
  std::vector<std::string> chat_variables;  // with chat: NAME=JSON template variables
};

std::string to_json_line(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

template <typename Json = nlohmann::json>
Json parse_line(const std::string& line, int64_t number) {
  try {
    return Json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    SEED_FAIL(kInvalidArgument) << "stdin line " << number << ": not valid JSON: " << e.what();
  }
}

// --chat: each line a list of messages; the template's text (or its ids).
void run_chat(const TokenizeOptions& options) {
  const models::ChatTemplate chat = models::ChatTemplate::load_required(options.model_dir, "--chat");
  const nlohmann::ordered_json variables = parse_chat_variables(options.chat_variables);
  std::unique_ptr<models::Tokenizer> tokenizer;
  if (options.chat_ids) tokenizer = models::load_tokenizer(options.model_dir);
  std::ios::sync_with_stdio(false);
  std::string line;
  for (int64_t number = 1; std::getline(std::cin, line); ++number) {
    const auto messages = parse_line<nlohmann::ordered_json>(line, number);
    SEED_CHECK(messages.is_array(), kInvalidArgument) << "stdin line " << number << ": expected a JSON list of messages";
    std::string text;
    try {
      text = chat.render(messages, !options.no_generation_prompt, variables);
    } catch (const Error& e) {
      SEED_FAIL(kInvalidArgument) << "stdin line " << number << ": " << e.what();
    }
    if (options.chat_ids) {
      std::cout << to_json_line(chat.encode(*tokenizer, text)) << '\n';
    } else {
      std::cout << to_json_line(text) << '\n';
    }
  }
  std::cout.flush();
}

void run_tokenize(const TokenizeOptions& options) {
  if (options.chat) return run_chat(options);
  const std::unique_ptr<models::Tokenizer> tokenizer = models::load_tokenizer(options.model_dir);
  const auto* hf = dynamic_cast<const models::hf::HfTokenizer*>(tokenizer.get());
  SEED_CHECK(!options.keep_special || hf != nullptr, kInvalidArgument)
      << "--keep-special needs a tokenizer.json folder; " << options.model_dir << " has a SentencePiece model";
  std::ios::sync_with_stdio(false);
  std::string line;
  for (int64_t number = 1; std::getline(std::cin, line); ++number) {
    const nlohmann::json value = parse_line(line, number);
    if (options.decode) {
      SEED_CHECK(value.is_array(), kInvalidArgument) << "stdin line " << number << ": expected a JSON list of token ids";
      std::vector<int32_t> ids;
      for (const auto& id : value) {
        SEED_CHECK(id.is_number_integer(), kInvalidArgument) << "stdin line " << number << ": ids must be integers";
        ids.push_back(id.get<int32_t>());
      }
      const std::string text = options.keep_special ? hf->decode(ids, /*skip_special=*/false) : tokenizer->decode(ids);
      std::cout << to_json_line(text) << '\n';
    } else {
      SEED_CHECK(value.is_string(), kInvalidArgument) << "stdin line " << number << ": expected a JSON string";
      std::cout << to_json_line(tokenizer->encode(value.get<std::string>(), !options.no_special)) << '\n';
    }
  }
  std::cout.flush();
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize", "Encode lines of JSON strings to JSON lists of ids (or --decode the reverse) with a model's tokenizer");
  add_model_option(cmd, &options->model_dir,
                   "Model folder (tokenizer.model, or tokenizer.json [+ tokenizer_config.json])");
  cmd->add_flag("--decode", options->decode, "Read lists of ids, write JSON strings");
  cmd->add_flag("--no-special", options->no_special, "Encode without special tokens (no BOS, no template)");
  cmd->add_flag("--keep-special", options->keep_special, "Decode special tokens to their text instead of dropping them");
  CLI::Option* chat = cmd->add_flag(
      "--chat", options->chat,
      "Read lines of JSON lists of messages ({\"role\", \"content\"}), write the chat template's text as JSON strings");
  cmd->add_flag("--no-generation-prompt", options->no_generation_prompt,
                "With --chat: do not open the assistant's turn (add_generation_prompt false)")
      ->needs(chat);
  cmd->add_flag("--chat-ids", options->chat_ids,
                "With --chat: write the prompt's token ids (no special tokens added: the template wrote them)")
      ->needs(chat);
  add_chat_variable_option(*cmd, chat, &options->chat_variables);
  chat->excludes("--decode");
  cmd->callback([options] { run_tokenize(*options); });
}

}  // namespace seed::launch
