// tokenizer.json (HfTokenizer): building the pipeline, then encoding and
// decoding a text that touches each stage (spaces, digits, accents, bytes
// outside ASCII, special-token text).
#include <string>
#include <vector>

#include "models/hf_tokenizer/hf_tokenizer.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto json = seed::fuzz::as_json(data, size);
  if (!json) return 0;
  seed::fuzz::refuse_only_with_seed_error([&] {
    const seed::models::hf::HfTokenizer tokenizer(*json, "tokenizer.json");
    const std::vector<int32_t> ids = tokenizer.encode("<s> Hello  world 42, caf\u00e9 \u4f60\u597d\n</s>", true);
    tokenizer.decode(ids);
    std::vector<int32_t> every;
    for (int32_t id = 0; id < tokenizer.vocab_size() && id < 64; ++id) every.push_back(id);
    tokenizer.decode(every, /*skip_special=*/false);
  });
  return 0;
}
