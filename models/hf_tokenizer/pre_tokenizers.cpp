// One class per pre-tokenizer type, registered in make_pre_tokenizer; the
// split behaviours follow the Rust tokenizers crate.
#include "models/hf_tokenizer/pre_tokenizers.h"

#include <unicode/uchar.h>

#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/hf_tokenizer/byte_level.h"
#include "models/hf_tokenizer/json_read.h"
#include "models/hf_tokenizer/pattern.h"
#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {
namespace {

using json = nlohmann::json;
using Spans = std::vector<std::pair<size_t, size_t>>;

// GPT-2's own split, used by ByteLevel with use_regex.
constexpr const char* kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Spans of maximal runs of characters for which `pred` holds, or of single
// such characters when `each` is set.
template <typename Pred>
Spans char_spans(const std::string& text, Pred pred, bool each) {
  Spans spans;
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    if (!pred(next_code_point(text, &pos))) continue;
    if (!each && !spans.empty() && spans.back().second == start) {
      spans.back().second = pos;
    } else {
      spans.emplace_back(start, pos);
    }
  }
  return spans;
}

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void split(std::vector<std::string>* pieces, bool) const override {
    std::vector<std::string> out;
    for (const std::string& piece : *pieces) split_at(piece, pattern_.find_all(piece), behavior_, invert_, &out);
    pieces->swap(out);
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex, const Field& field)
      : add_prefix_space_(add_prefix_space), regex_(use_regex ? std::make_unique<Pattern>(Pattern::regex(kGpt2Regex, field.str())) : nullptr) {}
  void split(std::vector<std::string>* pieces, bool) const override {
    std::vector<std::string> words;
    for (std::string& piece : *pieces) {
      if (add_prefix_space_ && (piece.empty() || piece[0] != ' ')) piece.insert(0, " ");
      if (regex_) {
        split_at(piece, regex_->find_all(piece), SplitBehavior::kIsolated, false, &words);
      } else if (!piece.empty()) {
        words.push_back(std::move(piece));
      }
    }
    const auto& chars = byte_level_chars();
    pieces->clear();
    for (const std::string& word : words) {
      std::string mapped;
      mapped.reserve(word.size() * 2);
      for (const char c : word) mapped += chars[static_cast<unsigned char>(c)];
      pieces->push_back(std::move(mapped));
    }
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Pattern> regex_;  // GPT-2's split, when use_regex
};

enum class PrependScheme { kAlways, kFirst, kNever };

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void split(std::vector<std::string>* pieces, bool at_start) const override {
    std::vector<std::string> out;
    for (size_t i = 0; i < pieces->size(); ++i) {
      std::string text = Pattern::literal(" ").replace_all((*pieces)[i], replacement_);
      const bool prepend = scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && i == 0 && at_start);
      if (prepend && text.compare(0, replacement_.size(), replacement_) != 0) text.insert(0, replacement_);
      if (split_) {
        split_at(text, Pattern::literal(replacement_).find_all(text), SplitBehavior::kMergedWithNext, false, &out);
      } else if (!text.empty()) {
        out.push_back(std::move(text));
      }
    }
    pieces->swap(out);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

// Digits, Punctuation and WhitespaceSplit: splits at characters of a class.
class CharClassPreTokenizer : public PreTokenizer {
 public:
  using Pred = bool (*)(char32_t);
  CharClassPreTokenizer(Pred pred, bool each, SplitBehavior behavior) : pred_(pred), each_(each), behavior_(behavior) {}
  void split(std::vector<std::string>* pieces, bool) const override {
    std::vector<std::string> out;
    for (const std::string& piece : *pieces) split_at(piece, char_spans(piece, pred_, each_), behavior_, false, &out);
    pieces->swap(out);
  }

 private:
  Pred pred_;
  bool each_;
  SplitBehavior behavior_;
};

bool is_ascii_digit(char32_t cp) { return cp >= '0' && cp <= '9'; }
bool is_punctuation(char32_t cp) {
  const bool ascii_punct = (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
                           (cp >= 0x7B && cp <= 0x7E);
  return ascii_punct || (U_GET_GC_MASK(cp) & U_GC_P_MASK) != 0;
}

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void split(std::vector<std::string>* pieces, bool at_start) const override {
    for (const auto& step : steps_) step->split(pieces, at_start);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

PrependScheme read_prepend_scheme(const json& value, const Field& field) {
  if (value.contains("prepend_scheme") && !value["prepend_scheme"].is_null()) {
    const std::string scheme = read_string(value, "prepend_scheme", field);
    if (scheme == "always") return PrependScheme::kAlways;
    if (scheme == "first") return PrependScheme::kFirst;
    if (scheme == "never") return PrependScheme::kNever;
    SEED_FAIL(kInvalidArgument) << (field / "prepend_scheme").str() << " must be always, first or never, not '"
                                << scheme << "'";
  }
  return read_bool(value, "add_prefix_space", field, true) ? PrependScheme::kAlways : PrependScheme::kNever;
}

}  // namespace

SplitBehavior parse_split_behavior(const std::string& name, const Field& field) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  SEED_FAIL(kInvalidArgument) << field.str() << ": split behavior '" << name
                              << "' is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous";
}

void split_at(const std::string& text, const Spans& spans, SplitBehavior behavior, bool invert,
              std::vector<std::string>* out) {
  // The whole text as (span, is_delimiter) in order.
  std::vector<std::pair<std::pair<size_t, size_t>, bool>> parts;
  size_t previous = 0;
  for (const auto& span : spans) {
    if (span.first > previous) parts.push_back({{previous, span.first}, invert});
    parts.push_back({span, !invert});
    previous = span.second;
  }
  if (previous < text.size()) parts.push_back({{previous, text.size()}, invert});

  std::vector<std::pair<size_t, size_t>> kept;
  bool previous_delimiter = false;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const auto& [span, delimiter] : parts) {
        if (!delimiter) kept.push_back(span);
      }
      break;
    case SplitBehavior::kIsolated:
      for (const auto& part : parts) kept.push_back(part.first);
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& [span, delimiter] : parts) {
        if (delimiter && !previous_delimiter && !kept.empty()) {
          kept.back().second = span.second;
        } else {
          kept.push_back(span);
        }
        previous_delimiter = delimiter;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->second && !previous_delimiter && !kept.empty()) {
          kept.back().first = it->first.first;
        } else {
          kept.push_back(it->first);
        }
        previous_delimiter = it->second;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    case SplitBehavior::kContiguous:
      for (size_t i = 0; i < parts.size(); ++i) {
        if (i > 0 && parts[i].second == parts[i - 1].second) {
          kept.back().second = parts[i].first.second;
        } else {
          kept.push_back(parts[i].first);
        }
      }
      break;
  }
  for (const auto& [begin, end] : kept) {
    if (end > begin) out->push_back(text.substr(begin, end - begin));
  }
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& value, const Field& field) {
  if (value.is_null()) return nullptr;
  const std::string type = read_type(value, field);
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(
        Pattern::from_json(read_member(value, "pattern", field), field / "pattern"),
        parse_split_behavior(read_string(value, "behavior", field), field / "behavior"),
        read_bool(value, "invert", field, false));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(read_bool(value, "add_prefix_space", field, true),
                                                   read_bool(value, "use_regex", field, true), field);
  }
  if (type == "Metaspace") {
    return std::make_unique<MetaspacePreTokenizer>(read_string(value, "replacement", field, "\xE2\x96\x81"),
                                                   read_prepend_scheme(value, field), read_bool(value, "split", field, true));
  }
  if (type == "Digits") {
    return std::make_unique<CharClassPreTokenizer>(is_ascii_digit, read_bool(value, "individual_digits", field, false),
                                                   SplitBehavior::kIsolated);
  }
  if (type == "Punctuation") {
    return std::make_unique<CharClassPreTokenizer>(
        is_punctuation, true, parse_split_behavior(read_string(value, "behavior", field, "Isolated"), field / "behavior"));
  }
  if (type == "WhitespaceSplit") {
    return std::make_unique<CharClassPreTokenizer>([](char32_t cp) { return is_unicode_whitespace(cp); }, false,
                                                   SplitBehavior::kRemoved);
  }
  if (type == "Whitespace") {
    return std::make_unique<SplitPreTokenizer>(Pattern::regex(R"(\w+|[^\w\s]+)", field.str()), SplitBehavior::kRemoved, true);
  }
  if (type == "Sequence") {
    const json& list = read_array(value, "pretokenizers", field);
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      if (auto step = make_pre_tokenizer(list[i], (field / "pretokenizers")[i])) steps.push_back(std::move(step));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  SEED_FAIL(kInvalidArgument) << (field / "type").str() << ": pre-tokenizer type '" << type
                              << "' is not supported (seed reads ByteLevel, Split, Metaspace, Digits, Punctuation, "
                                 "Whitespace, WhitespaceSplit, Sequence)";
}

}  // namespace seed::models::hf
