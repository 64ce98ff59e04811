#include "models/hf_tokenizer/byte_level.h"

#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {
namespace {

struct Tables {
  std::array<std::string, 256> chars;
  std::array<int, 512> bytes;  // indexed by code point; every mapped one is < 0x144
};

Tables build() {
  Tables tables;
  tables.bytes.fill(-1);
  char32_t next_extra = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const char32_t cp = printable ? static_cast<char32_t>(b) : next_extra++;
    append_utf8(cp, &tables.chars[b]);
    tables.bytes[cp] = b;
  }
  return tables;
}

const Tables& tables() {
  static const Tables built = build();
  return built;
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() { return tables().chars; }

int byte_level_byte(char32_t cp) { return cp < tables().bytes.size() ? tables().bytes[cp] : -1; }

}  // namespace seed::models::hf
