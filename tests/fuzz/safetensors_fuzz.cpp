// A .safetensors file: header length, JSON header, offsets; every tensor an
// accepted file lists is read back.
#include "models/safetensors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = seed::fuzz::write_scratch("model.safetensors", seed::fuzz::as_text(data, size));
  seed::fuzz::refuse_only_with_seed_error([&] {
    const auto file = seed::models::SafetensorsFile::open(path);
    for (const seed::models::TensorInfo& info : file.tensors()) file.read(info.name, info.shape);
  });
  return 0;
}
