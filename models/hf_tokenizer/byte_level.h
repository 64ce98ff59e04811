// GPT-2's byte-to-character map: every byte gets a printable character
// ('!'..'~', '¡'..'¬', '®'..'ÿ' keep their own; the rest, space included,
// map to U+0100 onwards: ' ' -> 'Ġ'), so that byte-level BPE vocabularies
// are strings of visible characters.
#pragma once

#include <array>
#include <string>

namespace seed::models::hf {

// UTF-8 of the character byte `b` maps to.
const std::array<std::string, 256>& byte_level_chars();
// The byte character `cp` stands for, or -1 if it is not in the map.
int byte_level_byte(char32_t cp);

}  // namespace seed::models::hf
