// `seed tokenize`: a model folder's tokenizer as a line filter, for checks
// against other implementations. Encoding reads one JSON string per line
// and writes one JSON array of ids; --decode the reverse.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "launch/tokenize_commands.h"
#include "models/base/error.h"
#include "models/hf_tokenizer/hf_tokenizer.h"
#include "models/tokenizer.h"

namespace seed::launch {
namespace {

struct TokenizeOptions {
  std::string model_dir;
  bool decode = false;
  bool no_special = false;    // encode without the special tokens (bos, template)
  bool keep_special = false;  // decode special tokens to their text
};

std::string to_json_line(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json parse_line(const std::string& line, int64_t number) {
  try {
    return nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    SEED_FAIL(kInvalidArgument) << "stdin line " << number << ": not valid JSON: " << e.what();
  }
}

void run_tokenize(const TokenizeOptions& options) {
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
  cmd->add_option("--model", options->model_dir, "Model folder (tokenizer.model, or tokenizer.json [+ tokenizer_config.json])")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--decode", options->decode, "Read lists of ids, write JSON strings");
  cmd->add_flag("--no-special", options->no_special, "Encode without special tokens (no BOS, no template)");
  cmd->add_flag("--keep-special", options->keep_special, "Decode special tokens to their text instead of dropping them");
  cmd->callback([options] { run_tokenize(*options); });
}

}  // namespace seed::launch
