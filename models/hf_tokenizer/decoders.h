// Decoders of tokenizer.json ("decoder"): turn token strings back into text
// (ByteLevel maps characters back to bytes, Metaspace turns "▁" into
// spaces, ByteFallback joins <0xAB> tokens into characters). Each step maps
// a list of strings to a list of strings, as in the Rust crate; the text is
// their concatenation. Immutable after construction.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <vector>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual std::vector<std::string> decode_chain(std::vector<std::string> tokens) const = 0;
};

// Builds one from its JSON object: ByteLevel, Metaspace, ByteFallback, Fuse,
// Strip, Replace, Sequence. Null for a JSON null. Throws kInvalidArgument
// naming `field` for an unknown type or bad option.
std::unique_ptr<Decoder> make_decoder(const nlohmann::json& json, const Field& field);

}  // namespace seed::models::hf
