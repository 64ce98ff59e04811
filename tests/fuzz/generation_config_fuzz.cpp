// generation_config.json (GenerationConfig::from_json) and the stop tokens
// it gives.
#include "models/generation_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto json = seed::fuzz::as_json(data, size);
  if (!json) return 0;
  seed::fuzz::refuse_only_with_seed_error([&] {
    const auto config = seed::models::GenerationConfig::from_json(*json, "generation_config.json");
    seed::models::stop_token_ids(2, config);
  });
  return 0;
}
