// A `seed train` config (TrainConfig::from_json), its paths resolved against
// a folder that holds one corpus file and one tokenizer folder.
#include "models/training/train_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base_dir = [] {
    seed::fuzz::write_scratch("train/game24.jsonl", "{\"prompt\": \"4 9 10 13\", \"completion\": \"13 - 9 = 4\"}\n");
    seed::fuzz::write_scratch("train/tiny-target/tokenizer.model", "");
    return (seed::fuzz::scratch_dir() / "train").string();
  }();
  const auto json = seed::fuzz::as_json(data, size);
  if (!json) return 0;
  seed::fuzz::refuse_only_with_seed_error([&] {
    const auto config = seed::models::TrainConfig::from_json(*json, "train.json", base_dir);
    config.to_json();
  });
  return 0;
}
