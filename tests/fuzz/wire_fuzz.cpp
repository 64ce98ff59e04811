// Every wire message type, decoded as from a draft rank. A message that
// decodes must encode back to bytes that decode and encode to the same bytes.
#include <cstdlib>
#include <vector>

#include "parallel/wire.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int kSender = 3;
  const std::vector<uint8_t> bytes(data, data + size);
  seed::fuzz::refuse_only_with_seed_error([&] {
    const seed::parallel::wire::Message message = seed::parallel::wire::decode(bytes, kSender);
    seed::parallel::wire::message_name(message);
    const std::vector<uint8_t> encoded = seed::parallel::wire::encode(message);
    if (seed::parallel::wire::encode(seed::parallel::wire::decode(encoded, kSender)) != encoded) std::abort();
  });
  return 0;
}
