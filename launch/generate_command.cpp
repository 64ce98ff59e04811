// `seed generate`: stream a completion of one prompt from one model. With
// --chat the prompt is the user's turn of a conversation (after an optional
// --system turn) rendered by the model's chat template.
#include <cstdint>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "launch/commands.h"
#include "launch/runtime.h"
#include "models/autoregressive.h"
#include "models/causal_lm.h"
#include "models/chat_template/chat_template.h"
#include "models/generation_config.h"
#include "models/base/error.h"
#include "models/base/sampling.h"
#include "models/tokenizer.h"

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
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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

void run_generate(const GenerateOptions& options, const GlobalOptions& global) {
  options.sampling.validate();
  const models::GenerationConfig generation =
      models::GenerationConfig::from_file(options.model_dir + "/generation_config.json");
  std::optional<models::ChatTemplate> chat;
  if (options.chat) {  // before the weights: a folder without a template fails at once
    chat = models::ChatTemplate::load(options.model_dir);
    SEED_CHECK(chat.has_value(), kInvalidArgument)
        << "--chat: " << options.model_dir << "/tokenizer_config.json has no chat_template";
  }
  auto model = models::CausalLM::load(options.model_dir, model_load_options(global, options.device));
  auto tokenizer = models::load_tokenizer(options.model_dir);
  const models::ModelConfig& config = model->config();
  SEED_CHECK(tokenizer->vocab_size() <= config.vocab_size, kInvalidArgument)
      << options.model_dir << ": tokenizer has " << tokenizer->vocab_size()
      << " tokens but config.json vocab_size is " << config.vocab_size;

  std::vector<int32_t> prompt;
  if (chat.has_value()) {
    const std::string text = chat->render_prompt(options.system, options.prompt);
    spdlog::info("chat prompt: {}", nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    prompt = chat->encode(*tokenizer, text);
  } else {
    prompt = tokenizer->encode(options.prompt, !options.no_bos);
  }
  SEED_CHECK(!prompt.empty(), kInvalidArgument) << "the prompt is empty; pass --prompt TEXT";
  const int64_t context = config.max_position_embeddings;
  SEED_CHECK(static_cast<int64_t>(prompt.size()) < context, kOutOfRange)
      << "the prompt has " << prompt.size() << " tokens but the model's context is " << context
      << " (max_position_embeddings in " << options.model_dir << "/config.json)";
  const int64_t budget = std::min<int64_t>(options.max_new_tokens, context - static_cast<int64_t>(prompt.size()));
  if (budget < options.max_new_tokens) {
    spdlog::warn("generation capped at {} tokens by the model's context of {}", budget, context);
  }

  models::KvCache cache = model->make_cache();
  models::TextStream stream(*tokenizer);
  if (!options.chat) std::cout << options.prompt << std::flush;  // a chat prints the reply alone
  models::DecodeOptions decode;
  decode.max_new_tokens = budget;
  decode.sampling = choose_sampling(options, generation);
  decode.seed = options.seed;
  decode.stop_tokens = models::stop_token_ids(tokenizer->eos_id(), generation);
  int64_t generated = 0;
  Clock::time_point first_token;
  const auto start = Clock::now();
  const models::DecodeFinish finish = models::decode_autoregressive(*model, cache, prompt, decode, [&](int32_t token) {
    if (generated++ == 0) first_token = Clock::now();
    std::cout << stream.push(token) << std::flush;
    return true;
  });
  std::cout << stream.finish() << std::endl;
  const double prefill_s = generated > 0 ? std::chrono::duration<double>(first_token - start).count() : seconds_since(start);
  const double decode_s = generated > 1 ? seconds_since(first_token) : 0.0;
  spdlog::info("prompt {} tokens ({:.1f} tokens/s prefill); generated {} tokens ({:.1f} tokens/s decode); finish: {}",
               prompt.size(), prompt.size() / prefill_s, generated, decode_s > 0 ? (generated - 1) / decode_s : 0.0,
               models::decode_finish_name(finish));
}

}  // namespace

void add_generate_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Stream a completion of a prompt from a model folder");
  cmd->add_option("--model", options->model_dir, "Hugging Face model folder (config.json, safetensors, tokenizer.model)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--prompt", options->prompt, "Prompt text")->required();
  cmd->add_option("--max-new-tokens", options->max_new_tokens, "Tokens to generate at most")
      ->check(CLI::PositiveNumber)
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
  CLI::Option* no_bos = cmd->add_flag("--no-bos", options->no_bos, "Do not prepend the BOS token");
  CLI::Option* chat = cmd->add_flag("--chat", options->chat,
                                    "Render the prompt as a user turn with the model's chat template "
                                    "(tokenizer_config.json); prints the reply alone");
  cmd->add_option("--system", options->system, "With --chat: a system turn before the prompt")->needs(chat);
  chat->excludes(no_bos);
  cmd->callback([options, &global, temperature, top_k, top_p] {
    options->sampling_given = temperature->count() + top_k->count() + top_p->count() > 0;
    run_generate(*options, global);
  });
}

}  // namespace seed::launch
