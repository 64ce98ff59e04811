// config.json (ModelConfig::from_json); an accepted config must survive its
// own to_json round trip.
#include <cstdlib>

#include "models/model_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto json = seed::fuzz::as_json(data, size);
  if (!json) return 0;
  seed::fuzz::refuse_only_with_seed_error([&] {
    const auto config = seed::models::ModelConfig::from_json(*json, "config.json");
    config.num_parameters();
    const auto again = seed::models::ModelConfig::from_json(config.to_json(), "config.json (written)");
    if (again.to_json() != config.to_json()) std::abort();
  });
  return 0;
}
