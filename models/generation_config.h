// GenerationConfig: a model folder's generation_config.json, the defaults
// transformers' generate() uses: which tokens end a generation (Llama 3.x
// lists several: <|end_of_text|>, <|eom_id|>, <|eot_id|>) and the sampling
// settings the model was released with.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/base/sampling.h"

namespace seed::models {

struct GenerationConfig {
  std::vector<int32_t> eos_token_ids;  // eos_token_id: an int or a list; empty if absent
  int32_t bos_token_id = -1;           // -1 if absent
  int32_t pad_token_id = -1;           // -1 if absent
  // The release's sampling defaults; unset if the file sets none of
  // do_sample, temperature, top_k, top_p. do_sample false means greedy.
  std::optional<SamplingParams> sampling;

  // Parses the JSON; unknown keys are ignored, null counts as absent. A value
  // of the wrong type is kInvalidArgument naming `source` and the field.
  static GenerationConfig from_json(const nlohmann::json& json, const std::string& source);
  // Reads `path`; a missing file gives the empty defaults. kCorruption if the
  // file is not JSON.
  static GenerationConfig from_file(const std::string& path);
};

// The tokens that end a generation: `tokenizer_eos` (if >= 0) and the
// config's eos_token_ids, without repeats, in that order.
std::vector<int32_t> stop_token_ids(int32_t tokenizer_eos, const GenerationConfig& config);

}  // namespace seed::models
