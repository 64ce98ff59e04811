// tokenizer_config.json (TokenizerConfig::from_json).
#include "models/hf_tokenizer/tokenizer_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto json = seed::fuzz::as_json(data, size);
  if (!json) return 0;
  seed::fuzz::refuse_only_with_seed_error(
      [&] { seed::models::hf::TokenizerConfig::from_json(*json, "tokenizer_config.json"); });
  return 0;
}
