#include "models/chat_template/lexer.h"

#include <cstdint>
#include <cstring>

#include "models/base/error.h"
#include "models/chat_template/text.h"

namespace seed::models::chat {
namespace {

// The template after transformers' whitespace options, with the source
// offset of each byte kept for error positions.
struct Prepared {
  std::string text;
  std::vector<size_t> origin;
};

bool is_line_start(const std::string& s, size_t i) { return i == 0 || s[i - 1] == '\n' || s[i - 1] == '\r'; }

Prepared prepare(const std::string& source) {
  size_t length = source.size();
  if (length > 0 && source[length - 1] == '\n') --length;  // Jinja drops one trailing newline
  Prepared lstripped;
  // lstrip_blocks: spaces and tabs from a line's start up to a {% or {# tag.
  for (size_t i = 0; i < length;) {
    if (is_line_start(source, i)) {
      size_t j = i;
      while (j < length && (source[j] == ' ' || source[j] == '\t')) ++j;
      if (j > i && j + 1 < length && source[j] == '{' && std::strchr("#%-", source[j + 1]) != nullptr) i = j;
    }
    lstripped.text += source[i];
    lstripped.origin.push_back(i);
    ++i;
  }
  // trim_blocks: the newline right after a %} or #} tag.
  Prepared out;
  const std::string& s = lstripped.text;
  for (size_t i = 0; i < s.size(); ++i) {
    out.text += s[i];
    out.origin.push_back(lstripped.origin[i]);
    if (s[i] == '}' && i > 0 && std::strchr("#%-", s[i - 1]) != nullptr && i + 1 < s.size() && s[i + 1] == '\n') ++i;
  }
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

class Lexer {
 public:
  explicit Lexer(const std::string& source) : source_(source), prepared_(prepare(source)), s_(prepared_.text) {
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> run() {
    while (at_ < s_.size()) step();
    return std::move(tokens_);
  }

 private:
  void step() {
    if (tokens_.empty() || last_is(TokenKind::kCloseStatement) || last_is(TokenKind::kCloseExpression) ||
        last_is(TokenKind::kComment)) {
      const size_t start = at_;
      while (at_ < s_.size() && !(s_[at_] == '{' && at_ + 1 < s_.size() && std::strchr("%{#", s_[at_ + 1]) != nullptr)) {
        ++at_;
      }
      if (at_ > start) {
        push(TokenKind::kText, s_.substr(start, at_ - start), start);
        return;
      }
    }
    if (starts_with("{#")) return comment();
    if (starts_with("{%-") || starts_with("{{-")) {
      strip_trailing_space();
      push(s_[at_ + 1] == '%' ? TokenKind::kOpenStatement : TokenKind::kOpenExpression, s_.substr(at_, 2), at_);
      at_ += 3;
      return;
    }
    while (at_ < s_.size() && space_length(s_, at_) > 0) at_ += space_length(s_, at_);
    if (at_ >= s_.size()) return;
    if (starts_with("-%}") || starts_with("-}}")) {
      push(s_[at_ + 1] == '%' ? TokenKind::kCloseStatement : TokenKind::kCloseExpression, s_.substr(at_ + 1, 2), at_);
      at_ += 3;
      skip_leading_space();
      return;
    }
    const char c = s_[at_];
    if ((c == '-' || c == '+') && prefix_position()) {
      const size_t start = at_++;
      std::string number = digits();
      if (!number.empty() && at_ + 1 < s_.size() && s_[at_] == '.' && is_digit(s_[at_ + 1])) {
        ++at_;
        number += "." + digits();
      }
      push(number.empty() ? TokenKind::kUnary : TokenKind::kNumber, std::string(1, c) + number, start);
      return;
    }
    static const char* const kSymbols[] = {"{%", "%}", "{{", "}}", "(", ")", "{", "}", "[", "]", ",", ".", ":", "|",
                                           "<=", ">=", "==", "!=", "<", ">", "+", "-", "~", "**", "*", "//", "/", "%",
                                           "="};
    for (const char* symbol : kSymbols) {
      if (std::strcmp(symbol, "}}") == 0 && curly_depth_ > 0) continue;  // inside an object literal
      if (!starts_with(symbol)) continue;
      const std::string text = symbol;
      TokenKind kind = TokenKind::kOperator;
      if (text == "{%") kind = TokenKind::kOpenStatement;
      if (text == "%}") kind = TokenKind::kCloseStatement;
      if (text == "{{") kind = TokenKind::kOpenExpression;
      if (text == "}}") kind = TokenKind::kCloseExpression;
      if (kind == TokenKind::kOpenExpression) curly_depth_ = 0;
      if (text == "{") ++curly_depth_;
      if (text == "}") --curly_depth_;
      push(kind, text, at_);
      at_ += text.size();
      return;
    }
    if (c == '\'' || c == '"') return string_literal(c);
    if (is_digit(c)) {
      const size_t start = at_;
      std::string number = digits();
      if (!last_is_dot() && at_ + 1 < s_.size() && s_[at_] == '.' && is_digit(s_[at_ + 1])) {
        ++at_;
        number += "." + digits();
      }
      push(TokenKind::kNumber, number, start);
      return;
    }
    if (is_word(c)) {
      const size_t start = at_;
      while (at_ < s_.size() && is_word(s_[at_])) ++at_;
      push(TokenKind::kIdentifier, s_.substr(start, at_ - start), start);
      return;
    }
    fail(at_, std::string("unexpected character '") + c + "'");
  }

  void comment() {
    const size_t start = at_;
    at_ += 2;
    const bool strip_before = at_ < s_.size() && s_[at_] == '-';
    if (strip_before) ++at_;
    const size_t end = s_.find("#}", at_);
    if (end == std::string::npos) fail(start, "a comment {# has no closing #}");
    std::string text = s_.substr(at_, end - at_);
    const bool strip_after = !text.empty() && text.back() == '-';
    if (strip_after) text.pop_back();
    if (strip_before) strip_trailing_space();
    push(TokenKind::kComment, text, start);
    at_ = end + 2;
    if (strip_after) skip_leading_space();
  }

  void string_literal(char quote) {
    const size_t start = at_++;
    std::string value;
    while (true) {
      if (at_ >= s_.size()) fail(start, "unterminated string literal");
      const char c = s_[at_];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++at_;
        continue;
      }
      if (++at_ >= s_.size()) fail(start, "unterminated string literal");
      const char escaped = s_[at_++];
      switch (escaped) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '\'': case '"': case '\\': value += escaped; break;
        case 'x': case 'u': value += hex_escape(escaped == 'x' ? 2 : 4); break;
        default: fail(at_ - 2, std::string("unknown escape \\") + escaped + " in a string literal");
      }
    }
    ++at_;
    push(TokenKind::kString, value, start);
  }

  // \xHH or \uHHHH as UTF-8.
  std::string hex_escape(size_t length) {
    if (at_ + length > s_.size()) fail(at_, "incomplete hexadecimal escape");
    uint32_t code = 0;
    for (size_t k = 0; k < length; ++k) {
      const char h = s_[at_ + k];
      const int digit = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
      if (digit < 0) fail(at_, "invalid hexadecimal escape");
      code = code * 16 + static_cast<uint32_t>(digit);
    }
    at_ += length;
    std::string out;
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
    return out;
  }

  std::string digits() {
    const size_t start = at_;
    while (at_ < s_.size() && is_digit(s_[at_])) ++at_;
    return s_.substr(start, at_ - start);
  }

  // A sign is unary unless it follows an operand (name, literal, ')' or ']').
  bool prefix_position() const {
    if (tokens_.empty() || last_is(TokenKind::kText)) fail(at_, std::string("unexpected character '") + s_[at_] + "'");
    const Token& last = tokens_.back();
    if (last.kind == TokenKind::kIdentifier || last.kind == TokenKind::kNumber || last.kind == TokenKind::kString) {
      return false;
    }
    return !(last.kind == TokenKind::kOperator && (last.text == ")" || last.text == "]"));
  }

  void strip_trailing_space() {
    if (!last_is(TokenKind::kText)) return;
    std::string& text = tokens_.back().text;
    size_t end = text.size();
    while (end > 0) {
      size_t start = end - 1;
      while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      if (space_length(text, start) != end - start) break;
      end = start;
    }
    text.resize(end);
    if (text.empty()) tokens_.pop_back();
  }

  void skip_leading_space() {
    while (at_ < s_.size() && space_length(s_, at_) > 0) at_ += space_length(s_, at_);
  }

  bool starts_with(const char* text) const { return s_.compare(at_, std::strlen(text), text) == 0; }
  bool last_is(TokenKind kind) const { return !tokens_.empty() && tokens_.back().kind == kind; }
  bool last_is_dot() const { return last_is(TokenKind::kOperator) && tokens_.back().text == "."; }

  void push(TokenKind kind, std::string text, size_t at) {
    Token token{kind, std::move(text)};
    locate(at, &token.line, &token.column);
    tokens_.push_back(std::move(token));
  }

  void locate(size_t at, int* line, int* column) const {
    const size_t offset = at < prepared_.origin.size() ? prepared_.origin[at] : source_.size();
    size_t index = 0;
    while (index + 1 < line_starts_.size() && line_starts_[index + 1] <= offset) ++index;
    *line = static_cast<int>(index) + 1;
    *column = 1;
    for (size_t k = line_starts_[index]; k < offset; ++k) {
      if ((static_cast<unsigned char>(source_[k]) & 0xC0) != 0x80) ++*column;
    }
  }

  [[noreturn]] void fail(size_t at, const std::string& message) const {
    int line = 0, column = 0;
    locate(at, &line, &column);
    SEED_FAIL(kInvalidArgument) << "chat template " << position_name(line, column) << ": " << message;
  }

  const std::string& source_;
  Prepared prepared_;
  const std::string& s_;
  std::vector<size_t> line_starts_{0};
  std::vector<Token> tokens_;
  size_t at_ = 0;
  int curly_depth_ = 0;
};

}  // namespace

std::string position_name(int line, int column) {
  return "line " + std::to_string(line) + ":" + std::to_string(column);
}

std::vector<Token> tokenize_template(const std::string& source) { return Lexer(source).run(); }

}  // namespace seed::models::chat
