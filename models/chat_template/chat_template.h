// ChatTemplate: a model's chat_template (tokenizer_config.json) turned into
// prompt text, as transformers' apply_chat_template does.
//
// The template is Jinja, run by seed's own small interpreter (lexer.h,
// parser.h, renderer.h, builtins.h) that covers what the templates shipped
// with Llama 2/3.x, Qwen2.5/3, Mistral, Gemma 3 and DeepSeek use. Parsing
// happens once, at load: a construct the interpreter lacks fails there, with
// its name and line:column. Rendering passes `messages`,
// `add_generation_prompt`, `tools` and `documents` (none) and each special
// token the config sets (bos_token, eos_token, unk_token, sep_token,
// pad_token, cls_token, mask_token), as transformers.js does. The rendered text already holds whatever special
// tokens the model wants (Llama 3's template writes bos_token itself): encode
// it with encode(), which adds none.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/hf_tokenizer/tokenizer_config.h"

namespace seed::models {

class Tokenizer;

namespace chat {
struct Node;
}

class ChatTemplate {
 public:
  // Parses `source`; `config` gives the special tokens, `origin` names where
  // the template came from in errors. kInvalidArgument naming origin and the
  // line:column of a syntax error or unsupported construct.
  ChatTemplate(const std::string& source, const hf::TokenizerConfig& config, const std::string& origin);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // The template of MODEL_DIR/tokenizer_config.json; nullopt when the folder
  // has no such file or the file no chat_template (a string, or a list of
  // {name, template} where "default" is used). kCorruption for a file that is
  // not JSON; kInvalidArgument naming the file and field for a malformed one.
  static std::optional<ChatTemplate> load(const std::string& model_dir);
  // As load, where the caller needs a template: kInvalidArgument starting
  // "OPTION: " (the flag that asked for it) and saying which is missing,
  // MODEL_DIR/tokenizer_config.json or its chat_template.
  static ChatTemplate load_required(const std::string& model_dir, const std::string& option);

  // The prompt text for `messages` (a JSON list of {"role", "content", ...}).
  // `extra` adds variables (tools, enable_thinking, ...). kInvalidArgument for
  // messages that are not a list of objects, and for a template error, e.g.
  // the message of raise_exception('...') (a template that refuses a system
  // role or non-alternating turns).
  std::string render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                     const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  // One turn: an optional system message (empty: none) then the user's text,
  // with the generation prompt; `extra` as for render().
  std::string render_prompt(const std::string& system, const std::string& user,
                            const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  // A rendered prompt's token ids, with no special tokens added: the template
  // wrote them (transformers' apply_chat_template(tokenize=True) does the
  // same), so a prompt that starts with the BOS text gets one BOS. A
  // SentencePiece tokenizer reads special-token text as plain text, so there
  // a leading BOS text becomes the BOS id itself.
  std::vector<int32_t> encode(const Tokenizer& tokenizer, const std::string& text) const;

 private:
  std::vector<std::unique_ptr<chat::Node>> program_;
  hf::TokenizerConfig config_;
  std::string origin_;
};

}  // namespace seed::models
