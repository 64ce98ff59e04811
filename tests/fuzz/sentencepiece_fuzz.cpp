// tokenizer.model through seed's SentencePiece entry point (the plugin's
// code, linked here directly: this program loads no libtorch, so no second
// protobuf). An accepted model encodes and decodes a short text.
#include <memory>

#include "models/sentencepiece_tokenizer.h"
#include "models/tokenizer.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = seed::fuzz::write_scratch("tokenizer.model", seed::fuzz::as_text(data, size));
  seed::fuzz::refuse_only_with_seed_error([&] {
    const std::unique_ptr<seed::models::Tokenizer> tokenizer(seed_sentencepiece_load(path.c_str()));
    tokenizer->decode(tokenizer->encode("4 + 9 = 13 (left: 10 13)\n", true));
  });
  return 0;
}
