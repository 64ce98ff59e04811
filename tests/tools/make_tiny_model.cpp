// make_tiny_model: writes a random-weight model folder for tests and
// benchmarks. The weights are random, so the text it generates is gibberish;
// everything else (loading, tokenizing, decoding, timing) is the real path.
//   default          a small Llama (config.json, model.safetensors) with a
//                    SentencePiece tokenizer.model trained on Game-of-24 text
//   --config FILE    any config.json (real shapes: tests/models/golden) with
//                    portable weights; --tokenizer DIR copies a Hugging Face
//                    tokenizer (tokenizer.json, tokenizer_config.json) beside
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <random>

#include "models/causal_lm.h"
#include "models/base/error.h"
#include "models/tokenizer.h"
#include "tests/tools/portable_weights.h"

namespace {

// A few thousand lines shaped like the Game-of-24 prompts seed runs.
std::vector<std::string> tokenizer_corpus(uint64_t seed) {
  const std::vector<std::string> words = {"sure", "likely", "impossible", "left", "answer", "steps",
                                          "input", "possible", "next", "the", "numbers", "use"};
  const char ops[] = {'+', '-', '*', '/'};
  std::mt19937_64 rng(seed);
  std::vector<std::string> lines;
  for (int i = 0; i < 3000; ++i) {
    const int a = 1 + rng() % 13, b = 1 + rng() % 13;
    lines.push_back(std::to_string(a) + " " + ops[rng() % 4] + " " + std::to_string(b) + " = " +
                    std::to_string(a + b) + " (left: " + std::to_string(rng() % 24) + " " +
                    std::to_string(a + b) + ")");
    lines.push_back(words[rng() % words.size()] + " " + words[rng() % words.size()] + " " +
                    words[rng() % words.size()]);
  }
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Write a random-weight tiny Llama model folder"};
  std::string out;
  seed::models::ModelConfig config;
  config.vocab_size = 320;
  config.hidden_size = 128;
  config.intermediate_size = 352;
  config.num_hidden_layers = 4;
  config.num_attention_heads = 4;
  config.num_key_value_heads = 2;
  config.max_position_embeddings = 512;
  uint64_t seed = 0;
  std::string config_file, tokenizer_dir;
  app.add_option("--out", out, "Output folder")->required();
  app.add_option("--config", config_file, "config.json to build (portable weights; shape flags ignored)")
      ->check(CLI::ExistingFile);
  app.add_option("--tokenizer", tokenizer_dir, "With --config: folder whose tokenizer.json and "
                 "tokenizer_config.json to copy")->check(CLI::ExistingDirectory);
  app.add_option("--hidden", config.hidden_size, "hidden_size")->capture_default_str();
  app.add_option("--intermediate", config.intermediate_size, "intermediate_size")->capture_default_str();
  app.add_option("--layers", config.num_hidden_layers, "num_hidden_layers")->capture_default_str();
  app.add_option("--heads", config.num_attention_heads, "num_attention_heads")->capture_default_str();
  app.add_option("--kv-heads", config.num_key_value_heads, "num_key_value_heads")->capture_default_str();
  app.add_option("--context", config.max_position_embeddings, "max_position_embeddings")->capture_default_str();
  app.add_option("--seed", seed, "Weight seed")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (!config_file.empty()) {
      seed::models::testing::write_portable_model(config_file, out, seed);
      for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
        if (tokenizer_dir.empty()) break;
        std::filesystem::copy_file(std::filesystem::path(tokenizer_dir) / name, std::filesystem::path(out) / name,
                                   std::filesystem::copy_options::overwrite_existing);
      }
      std::cout << "wrote " << out << " ("
                << seed::models::ModelConfig::from_file(config_file).num_parameters() << " parameters)\n";
      return 0;
    }
    config.head_dim = config.hidden_size / config.num_attention_heads;
    std::filesystem::create_directories(out);
    seed::models::train_sentencepiece(tokenizer_corpus(seed), static_cast<int>(config.vocab_size),
                                      out + "/tokenizer.model");
    seed::models::CausalLM::random(config, seed)->save(out, torch::kFloat);
    std::cout << "wrote " << out << " (" << config.num_parameters() << " parameters)\n";
  } catch (const std::exception& e) {
    std::cerr << "make_tiny_model: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
