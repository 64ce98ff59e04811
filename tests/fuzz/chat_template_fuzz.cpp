// The chat-template (Jinja) interpreter: the input is a chat_template, parsed
// as at load and rendered for a short conversation, as `seed run` renders
// each prompt.
#include <nlohmann/json.hpp>

#include "models/chat_template/chat_template.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const seed::models::hf::TokenizerConfig config = [] {
    seed::models::hf::TokenizerConfig c;
    c.bos_token = "<s>";
    c.eos_token = "</s>";
    return c;
  }();
  static const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "4 9 10 13"},
          {"role": "assistant", "content": "13 - 9 = 4"}, {"role": "user", "content": "next?"}])");
  seed::fuzz::refuse_only_with_seed_error([&] {
    const seed::models::ChatTemplate chat(seed::fuzz::as_text(data, size), config, "tokenizer_config.json");
    chat.render(messages, /*add_generation_prompt=*/true);
  });
  return 0;
}
