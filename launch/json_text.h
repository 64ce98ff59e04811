// JSON text of records that hold model output.
//
// A model's completion is bytes, not always UTF-8: a sampled byte-fallback
// token can end in the middle of a character. JSON text must be UTF-8, and
// nlohmann::json throws on invalid bytes, which would end a run at the
// record it is saving. Invalid bytes are written as U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace seed::launch {

template <typename Json>
std::string dump_model_output(const Json& record, int indent = -1) {
  return record.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace seed::launch
