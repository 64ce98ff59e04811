// Post-processors of tokenizer.json ("post_processor"): what encoding with
// special tokens adds around the text's ids (TemplateProcessing: "<s> $A").
// ByteLevel's only effect is on offsets, which seed does not track, so it
// leaves ids alone. Immutable after construction.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/hf_tokenizer/field.h"

namespace seed::models::hf {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Adds the special tokens of a single sequence around `ids`.
  virtual void add_special_tokens(std::vector<int32_t>* ids) const = 0;
};

// Builds one from its JSON object: TemplateProcessing, ByteLevel, Sequence.
// Null for a JSON null. Throws kInvalidArgument naming `field` for an unknown
// type, a template item that is neither SpecialToken nor Sequence, or a
// special token the template names but special_tokens lacks.
std::unique_ptr<PostProcessor> make_post_processor(const nlohmann::json& json, const Field& field);

}  // namespace seed::models::hf
