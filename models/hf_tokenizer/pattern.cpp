#define PCRE2_CODE_UNIT_WIDTH 8
#include "models/hf_tokenizer/pattern.h"

#include <pcre2.h>

#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {

struct Pattern::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

Pattern Pattern::literal(std::string text) {
  Pattern pattern;
  pattern.literal_ = std::move(text);
  return pattern;
}

Pattern Pattern::regex(const std::string& source, const std::string& where) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    SEED_FAIL(kInvalidArgument) << where << ": invalid regex at offset " << error_offset << ": "
                                << reinterpret_cast<const char*>(message) << " (regex: " << source << ")";
  }
  // JIT is an optimisation: where the platform lacks it, pcre2_match interprets.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  auto compiled = std::make_shared<Compiled>();
  compiled->code = code;
  Pattern pattern;
  pattern.regex_ = std::move(compiled);
  return pattern;
}

Pattern Pattern::from_json(const nlohmann::json& json, const Field& field) {
  SEED_CHECK(json.is_object() && json.size() == 1, kInvalidArgument)
      << field.str() << " must be {\"String\": ...} or {\"Regex\": ...}";
  if (const auto it = json.find("String"); it != json.end() && it->is_string()) {
    SEED_CHECK(!it->get<std::string>().empty(), kInvalidArgument) << (field / "String").str() << " must not be empty";
    return literal(it->get<std::string>());
  }
  if (const auto it = json.find("Regex"); it != json.end() && it->is_string()) {
    return regex(it->get<std::string>(), (field / "Regex").str());
  }
  SEED_FAIL(kInvalidArgument) << field.str() << " must be {\"String\": ...} or {\"Regex\": ...}";
}

std::vector<std::pair<size_t, size_t>> Pattern::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  if (!regex_) {
    for (size_t at = text.find(literal_); at != std::string_view::npos; at = text.find(literal_, at + literal_.size())) {
      matches.emplace_back(at, at + literal_.size());
    }
    return matches;
  }
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(regex_->code, nullptr), &pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    const int rc = pcre2_match(regex_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    SEED_CHECK(rc >= 0, kInternal) << "regex match failed with PCRE2 error " << rc;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      matches.emplace_back(begin, end);
      start = end;
    } else {  // an empty match splits nothing: step over one character
      if (begin >= text.size()) break;
      start = begin + utf8_char_length(static_cast<unsigned char>(text[begin]));
    }
  }
  return matches;
}

std::string Pattern::replace_all(std::string_view text, std::string_view content) const {
  std::string out;
  size_t previous = 0;
  for (const auto& [begin, end] : find_all(text)) {
    out.append(text.substr(previous, begin - previous));
    out.append(content);
    previous = end;
  }
  out.append(text.substr(previous));
  return out;
}

}  // namespace seed::models::hf
