// One class per decoder type, registered in make_decoder.
#include "models/hf_tokenizer/decoders.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "models/base/error.h"
#include "models/hf_tokenizer/byte_level.h"
#include "models/hf_tokenizer/json_read.h"
#include "models/hf_tokenizer/pattern.h"
#include "models/hf_tokenizer/utf8.h"

namespace seed::models::hf {
namespace {

using json = nlohmann::json;
using Tokens = std::vector<std::string>;

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Characters back to bytes; a token with a character outside the map (an
// added token such as "<｜User｜>") keeps its own bytes. One string out.
class ByteLevelDecoder : public Decoder {
 public:
  Tokens decode_chain(Tokens tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      std::string mapped;
      bool all = true;
      for (size_t pos = 0; pos < token.size() && all;) {
        const int b = byte_level_byte(next_code_point(token, &pos));
        all = b >= 0;
        mapped.push_back(static_cast<char>(b));
      }
      bytes += all ? mapped : token;
    }
    return {utf8_lossy(bytes)};
  }
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first) : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  Tokens decode_chain(Tokens tokens) const override {
    const Pattern pattern = Pattern::literal(replacement_);
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] = pattern.replace_all(tokens[i], " ");
      if (i == 0 && strip_first_ && !tokens[i].empty() && tokens[i][0] == ' ') tokens[i].erase(0, 1);
    }
    return tokens;
  }

 private:
  std::string replacement_;
  bool strip_first_;  // prepend_scheme is not "never": the first token's space was added
};

// Runs of <0xAB> tokens become the text of their bytes, or one U+FFFD per
// byte if those bytes are not valid UTF-8.
class ByteFallbackDecoder : public Decoder {
 public:
  Tokens decode_chain(Tokens tokens) const override {
    Tokens out;
    std::string bytes;
    size_t byte_count = 0;
    const auto flush = [&] {
      if (byte_count == 0) return;
      if (utf8_valid(bytes)) {
        out.push_back(bytes);
      } else {
        for (size_t i = 0; i < byte_count; ++i) out.emplace_back(kReplacementChar);
      }
      bytes.clear();
      byte_count = 0;
    };
    for (std::string& token : tokens) {
      int value = -1;
      if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>') {
        const std::string hex = token.substr(3, 2);  // outlives `end`, which points into it
        char* end = nullptr;
        const long parsed = std::strtol(hex.c_str(), &end, 16);
        if (end != nullptr && *end == '\0') value = static_cast<int>(parsed);
      }
      if (value >= 0) {
        bytes.push_back(static_cast<char>(value));
        ++byte_count;
      } else {
        flush();
        out.push_back(std::move(token));
      }
    }
    flush();
    return out;
  }
};

class FuseDecoder : public Decoder {
 public:
  Tokens decode_chain(Tokens tokens) const override {
    std::string all;
    for (const std::string& token : tokens) all += token;
    return {all};
  }
};

// Removes up to `start` leading and `stop` trailing copies of a character.
class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, int64_t start, int64_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  Tokens decode_chain(Tokens tokens) const override {
    for (std::string& token : tokens) {
      for (int64_t i = 0; i < start_ && token.compare(0, content_.size(), content_) == 0; ++i) token.erase(0, content_.size());
      for (int64_t i = 0; i < stop_ && token.size() >= content_.size() &&
                          token.compare(token.size() - content_.size(), content_.size(), content_) == 0;
           ++i) {
        token.erase(token.size() - content_.size());
      }
    }
    return tokens;
  }

 private:
  std::string content_;
  int64_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  Tokens decode_chain(Tokens tokens) const override {
    for (std::string& token : tokens) token = pattern_.replace_all(token, content_);
    return tokens;
  }

 private:
  Pattern pattern_;
  std::string content_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  Tokens decode_chain(Tokens tokens) const override {
    for (const auto& step : steps_) tokens = step->decode_chain(std::move(tokens));
    return tokens;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const json& value, const Field& field) {
  if (value.is_null()) return nullptr;
  const std::string type = read_type(value, field);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Metaspace") {
    std::string scheme = read_string(value, "prepend_scheme", field, "");
    if (scheme.empty()) scheme = read_bool(value, "add_prefix_space", field, true) ? "always" : "never";
    return std::make_unique<MetaspaceDecoder>(read_string(value, "replacement", field, "\xE2\x96\x81"), scheme != "never");
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    const std::string content = read_string(value, "content", field);
    SEED_CHECK(!content.empty(), kInvalidArgument) << (field / "content").str() << " must be one character";
    return std::make_unique<StripDecoder>(content, read_int(value, "start", field, 0), read_int(value, "stop", field, 0));
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(Pattern::from_json(read_member(value, "pattern", field), field / "pattern"),
                                            read_string(value, "content", field));
  }
  if (type == "Sequence") {
    const json& list = read_array(value, "decoders", field);
    std::vector<std::unique_ptr<Decoder>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      if (auto step = make_decoder(list[i], (field / "decoders")[i])) steps.push_back(std::move(step));
    }
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  SEED_FAIL(kInvalidArgument) << (field / "type").str() << ": decoder type '" << type
                              << "' is not supported (seed reads ByteLevel, Metaspace, ByteFallback, Fuse, Strip, "
                                 "Replace, Sequence)";
}

}  // namespace seed::models::hf
