// `seed generate`: a completion of one prompt from one model, written by the
// `ar` engine, so the same seed gives the text `seed run --engine ar` gives
// a request of that seed and stream 0. With --chat the prompt is the user's
// turn of a conversation (after an optional --system turn) rendered by the
// model's chat template, given any --chat-var template variables.
#include <cstdint>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "launch/chat_variables.h"
#include "launch/commands.h"
#include "launch/model_option.h"
#include "launch/runtime.h"
#include "models/chat_template/chat_template.h"
#include "models/generation_config.h"
#include "models/model_config.h"
#include "models/base/error.h"
#include "models/base/sampling.h"
#include "models/tokenizer.h"
#include "spec/engine/engine_factory.h"

namespace seed::launch {
namespace {

struct GenerateOptions {
  std::string model_dir;
  std::string prompt;
  int max_new_tokens = 128;
  SamplingParams sampling;
  bool sampling_given = false;  // any of --temperature, --top-k, --top-p
  uint64_t seed = 0;
  std::string device = "cpu";
  bool no_bos = false;
  bool chat = false;
  std::string system;  // with chat: the system turn ("" for none)
  std::vector<std::string> chat_variables;  // with chat: NAME=JSON template variables
};

// The flag of a SamplingParams field: "top_k" -> "--top-k".
std::string sampling_flag(const std::string& field) {
  std::string flag = "--" + field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// The user's sampling settings if they gave any, else the model's
// generation_config.json defaults, else seed's; logged with where they came from.
SamplingParams choose_sampling(const GenerateOptions& options, const models::GenerationConfig& generation) {
  const bool from_model = !options.sampling_given && generation.sampling.has_value();
  const SamplingParams sampling = from_model ? *generation.sampling : options.sampling;
  spdlog::info("sampling: temperature {} top_k {} top_p {} ({})", sampling.temperature, sampling.top_k, sampling.top_p,
               options.sampling_given ? "command line"
               : from_model           ? options.model_dir + "/generation_config.json"
                                      : "seed's defaults");
  return sampling;
}

// The prompt's tokens: the chat template's rendering (logged), or the text
// with BOS unless --no-bos.
std::vector<int32_t> prompt_tokens(const GenerateOptions& options, const models::Tokenizer& tokenizer,
                                   const std::optional<models::ChatTemplate>& chat,
                                   const nlohmann::ordered_json& chat_variables) {
  if (!chat.has_value()) return tokenizer.encode(options.prompt, !options.no_bos);
  const std::string text = chat->render_prompt(options.system, options.prompt, chat_variables);
  spdlog::info("chat prompt: {}", nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return chat->encode(tokenizer, text);
}

void run_generate(const GenerateOptions& options, const GlobalOptions& global) {
  options.sampling.validate(sampling_flag);
  const models::GenerationConfig generation =
      models::GenerationConfig::from_file(options.model_dir + "/generation_config.json");
  std::optional<models::ChatTemplate> chat;
  const nlohmann::ordered_json chat_variables = parse_chat_variables(options.chat_variables);
  // Before the weights: a folder without a template fails at once.
  if (options.chat) chat = models::ChatTemplate::load_required(options.model_dir, "--chat");
  const models::ModelConfig config = models::ModelConfig::from_file(options.model_dir + "/config.json");
  check_text_model_folder(options.model_dir, "--model");
  auto tokenizer = models::load_tokenizer(options.model_dir);
  SEED_CHECK(tokenizer->vocab_size() <= config.vocab_size, kInvalidArgument)
      << options.model_dir << ": tokenizer has " << tokenizer->vocab_size()
      << " tokens but config.json vocab_size is " << config.vocab_size;

  spec::GenRequest request;
  request.prompt_tokens = prompt_tokens(options, *tokenizer, chat, chat_variables);
  SEED_CHECK(!request.prompt_tokens.empty(), kInvalidArgument) << "the prompt is empty; pass --prompt TEXT";
  const int64_t prompt_size = static_cast<int64_t>(request.prompt_tokens.size());
  const int64_t context = config.max_position_embeddings;
  SEED_CHECK(prompt_size < context, kOutOfRange)
      << "the prompt has " << prompt_size << " tokens but the model's context is " << context
      << " (max_position_embeddings in " << options.model_dir << "/config.json)";
  request.max_new_tokens = std::min<int64_t>(options.max_new_tokens, context - prompt_size);
  if (request.max_new_tokens < options.max_new_tokens) {
    spdlog::warn("generation capped at {} tokens by the model's context of {}", request.max_new_tokens, context);
  }
  request.sampling = choose_sampling(options, generation);
  request.seed = options.seed;

  spec::EngineOptions engine;
  engine.engine = spec::EngineKind::kAr;
  engine.target = options.model_dir;
  engine.device = options.device;
  use_global_model_options(global, engine);
  const spec::Completion completion = spec::make_engine(engine)->generate({request}).front();
  SEED_CHECK(completion.finish != spec::FinishReason::kError, kInternal) << completion.error;
  // A chat prints the reply alone.
  std::cout << (chat.has_value() ? "" : options.prompt) << completion.text << std::endl;
  const spec::RequestStats& s = completion.stats;
  // A length cut short by the context is the context's doing.
  const bool context_full =
      completion.finish == spec::FinishReason::kLength && request.max_new_tokens < options.max_new_tokens;
  spdlog::info("prompt {} tokens; generated {} tokens in {:.2f} s ({:.1f} tokens/s); finish: {}", s.prompt_tokens,
               s.generated_tokens, s.wall_s, s.wall_s > 0 ? s.generated_tokens / s.wall_s : 0.0,
               context_full ? fmt::format("context ({} tokens, prompt and generated)", context)
                            : std::string(spec::finish_reason_name(completion.finish)));
}

}  // namespace

void add_generate_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Complete a prompt with a model folder (the ar engine)");
  add_model_option(cmd, &options->model_dir, "Hugging Face model folder (config.json, safetensors, tokenizer.model or tokenizer.json)");
  cmd->add_option("--prompt", options->prompt, "Prompt text")->required();
  cmd->add_option("--max-new-tokens", options->max_new_tokens, "Tokens to generate at most")
      ->check(positive_integer())
      ->capture_default_str();
  // Unset, the three come from the model's generation_config.json if it has any.
  CLI::Option* temperature =
      cmd->add_option("--temperature", options->sampling.temperature, "Sampling temperature; 0 = greedy")
          ->capture_default_str();
  CLI::Option* top_k =
      cmd->add_option("--top-k", options->sampling.top_k, "Keep the k most likely tokens; 0 = all")->capture_default_str();
  CLI::Option* top_p =
      cmd->add_option("--top-p", options->sampling.top_p, "Nucleus sampling mass; 1 = off")->capture_default_str();
  cmd->add_option("--seed", options->seed, "Random seed (same seed, same text)")->capture_default_str();
  cmd->add_option("--device", options->device, "cpu or cuda:N")->capture_default_str();
  CLI::Option* no_bos = cmd->add_flag("--no-bos", options->no_bos, "Do not prepend the BOS token (where the tokenizer adds one: tokenizer.model, or tokenizer.json's post_processor)");
  CLI::Option* chat = cmd->add_flag("--chat", options->chat,
                                    "Render the prompt as a user turn with the model's chat template "
                                    "(tokenizer_config.json); prints the reply alone");
  cmd->add_option("--system", options->system, "With --chat: a system turn before the prompt")->needs(chat);
  add_chat_variable_option(*cmd, chat, &options->chat_variables);
  chat->excludes(no_bos);
  cmd->callback([options, &global, temperature, top_k, top_p] {
    options->sampling_given = temperature->count() + top_k->count() + top_p->count() > 0;
    run_generate(*options, global);
  });
}

}  // namespace seed::launch
