// results.jsonl as `seed run --resume` reads it back, then totals it for
// summary.json.
#include <filesystem>

#include "launch/run_results.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::json settings = {{"task", "game24"}, {"search", "cot"}, {"engine", "ar"}};
  const std::string results = seed::fuzz::write_scratch("run/results.jsonl", seed::fuzz::as_text(data, size));
  seed::fuzz::write_scratch("run/run.json", settings.dump());
  const std::string dir = std::filesystem::path(results).parent_path().string();
  seed::fuzz::refuse_only_with_seed_error([&] {
    const seed::launch::RunResults resumed(dir, settings, /*resume=*/true);
    resumed.summary(settings);
  });
  return 0;
}
