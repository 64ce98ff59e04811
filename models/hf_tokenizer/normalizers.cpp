// One class per normalizer type, registered in make_normalizer.
#include "models/hf_tokenizer/normalizers.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "models/base/error.h"
#include "models/hf_tokenizer/json_read.h"
#include "models/hf_tokenizer/pattern.h"
#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {
namespace {

using json = nlohmann::json;

std::string to_utf8(const icu::UnicodeString& text) {
  std::string out;
  text.toUTF8String(out);
  return out;
}

// NFC, NFD, NFKC, NFKD through ICU.
class UnicodeNormalizer : public Normalizer {
 public:
  UnicodeNormalizer(const std::string& form, const Field& field) {
    UErrorCode status = U_ZERO_ERROR;
    if (form == "NFC") normalizer_ = icu::Normalizer2::getNFCInstance(status);
    if (form == "NFD") normalizer_ = icu::Normalizer2::getNFDInstance(status);
    if (form == "NFKC") normalizer_ = icu::Normalizer2::getNFKCInstance(status);
    if (form == "NFKD") normalizer_ = icu::Normalizer2::getNFKDInstance(status);
    SEED_CHECK(U_SUCCESS(status) && normalizer_ != nullptr, kInternal)
        << field.str() << ": ICU has no " << form << " normalizer: " << u_errorName(status);
  }
  std::string normalize(std::string_view text) const override {
    UErrorCode status = U_ZERO_ERROR;
    const icu::UnicodeString source = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), text.size()));
    if (normalizer_->isNormalized(source, status) && U_SUCCESS(status)) return std::string(text);
    status = U_ZERO_ERROR;
    const icu::UnicodeString result = normalizer_->normalize(source, status);
    SEED_CHECK(U_SUCCESS(status), kInternal) << "ICU normalization failed: " << u_errorName(status);
    return to_utf8(result);
  }

 private:
  const icu::Normalizer2* normalizer_ = nullptr;  // owned by ICU
};

class LowercaseNormalizer : public Normalizer {
 public:
  std::string normalize(std::string_view text) const override {
    icu::UnicodeString value = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), text.size()));
    return to_utf8(value.toLower(icu::Locale::getRoot()));
  }
};

// Prepends `prepend` to non-empty text.
class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prepend) : prepend_(std::move(prepend)) {}
  std::string normalize(std::string_view text) const override {
    return text.empty() ? std::string() : prepend_ + std::string(text);
  }

 private:
  std::string prepend_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string normalize(std::string_view text) const override { return pattern_.replace_all(text, content_); }

 private:
  Pattern pattern_;
  std::string content_;
};

// Strips White_Space from either end.
class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string normalize(std::string_view text) const override {
    if (left_) text = trim_left_whitespace(text);
    if (right_) text = trim_right_whitespace(text);
    return std::string(text);
  }

 private:
  bool left_, right_;
};

// Removes combining marks (General_Category M); meant to follow NFD/NFKD.
class StripAccentsNormalizer : public Normalizer {
 public:
  std::string normalize(std::string_view text) const override {
    std::string out;
    for (size_t pos = 0; pos < text.size();) {
      const size_t start = pos;
      const char32_t cp = next_code_point(text, &pos);
      if ((U_GET_GC_MASK(cp) & U_GC_M_MASK) == 0) out.append(text.substr(start, pos - start));
    }
    return out;
  }
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  std::string normalize(std::string_view text) const override {
    std::string value(text);
    for (const auto& step : steps_) value = step->normalize(value);
    return value;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const json& value, const Field& field) {
  if (value.is_null()) return nullptr;
  const std::string type = read_type(value, field);
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    return std::make_unique<UnicodeNormalizer>(type, field);
  }
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(read_string(value, "prepend", field));
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(Pattern::from_json(read_member(value, "pattern", field), field / "pattern"),
                                               read_string(value, "content", field));
  }
  if (type == "Strip") {
    return std::make_unique<StripNormalizer>(read_bool(value, "strip_left", field, true),
                                             read_bool(value, "strip_right", field, true));
  }
  if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
  if (type == "Sequence") {
    const json& list = read_array(value, "normalizers", field);
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      if (auto step = make_normalizer(list[i], (field / "normalizers")[i])) steps.push_back(std::move(step));
    }
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  SEED_FAIL(kInvalidArgument) << (field / "type").str() << ": normalizer type '" << type
                              << "' is not supported (seed reads NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, "
                                 "Strip, StripAccents, Sequence)";
}

}  // namespace seed::models::hf
