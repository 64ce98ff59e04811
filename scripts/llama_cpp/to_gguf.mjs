// Converts a seed / Hugging Face Llama model folder (config.json,
// model.safetensors, tokenizer.model) into a GGUF v3 file that llama.cpp
// loads, with the matrices in float32, float16 or bfloat16.
//
//   node to_gguf.mjs MODEL_DIR OUT.gguf [f32|f16|bf16]
//
// It follows llama.cpp's convert_hf_to_gguf.py for the Llama architecture:
// the same tensor names and metadata keys, norms kept in float32, and the
// q/k rows permuted from Hugging Face's rotate-half RoPE layout to GGML's
// interleaved-pairs layout. The GGUF layout is ggml/docs/gguf.md.
import fs from "node:fs";
import path from "node:path";

const [modelDir, outPath, dtype = "f32"] = process.argv.slice(2);
if (!modelDir || !outPath || !["f32", "f16", "bf16"].includes(dtype)) {
  console.error("usage: node to_gguf.mjs MODEL_DIR OUT.gguf [f32|f16|bf16]");
  process.exit(2);
}

// ---- Reading the model folder ------------------------------------------

const config = JSON.parse(fs.readFileSync(path.join(modelDir, "config.json"), "utf8"));
if (config.model_type !== "llama") throw new Error(`model_type ${config.model_type}: only llama is converted`);

// Every tensor of model.safetensors as float32 (the zoo stores BF16 and F32).
function readSafetensors(file) {
  const buf = fs.readFileSync(file);
  const headerLen = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + headerLen).toString("utf8"));
  const base = 8 + headerLen;
  const tensors = new Map();
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const [begin, end] = info.data_offsets;
    const bytes = buf.subarray(base + begin, base + end);
    const n = info.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (info.dtype === "F32") {
      for (let i = 0; i < n; ++i) data[i] = bytes.readFloatLE(4 * i);
    } else if (info.dtype === "BF16") {
      const bits = new Uint32Array(data.buffer);
      for (let i = 0; i < n; ++i) bits[i] = bytes.readUInt16LE(2 * i) << 16;
    } else {
      throw new Error(`${name}: dtype ${info.dtype} not supported`);
    }
    tensors.set(name, { shape: info.shape, data });
  }
  return tensors;
}

// Minimal protobuf reader: enough for sentencepiece's ModelProto, whose
// field 1 is `repeated SentencePiece pieces` and SentencePiece is
// {1: string piece, 2: float score, 3: Type type (default NORMAL = 1)}.
function* protoFields(buf) {
  let pos = 0;
  const varint = () => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3, wire = key & 7;
    if (wire === 0) yield { field, value: varint() };
    else if (wire === 1) { yield { field, bytes: buf.subarray(pos, pos + 8) }; pos += 8; }
    else if (wire === 2) { const len = Number(varint()); yield { field, bytes: buf.subarray(pos, pos + len) }; pos += len; }
    else if (wire === 5) { yield { field, bytes: buf.subarray(pos, pos + 4) }; pos += 4; }
    else throw new Error(`protobuf wire type ${wire} not supported`);
  }
}

function readSentencepiece(file) {
  const pieces = [];
  for (const top of protoFields(fs.readFileSync(file))) {
    if (top.field !== 1) continue;
    const piece = { text: "", score: 0, type: 1 };
    for (const f of protoFields(top.bytes)) {
      if (f.field === 1) piece.text = f.bytes.toString("utf8");
      else if (f.field === 2) piece.score = f.bytes.readFloatLE(0);
      else if (f.field === 3) piece.type = Number(f.value);
    }
    pieces.push(piece);
  }
  return pieces;
}

// ---- Tensor conversion -------------------------------------------------

// HF q/k rows are, per head, [first halves of the rotary pairs | second
// halves]; GGML's RoPE rotates adjacent pairs. convert_hf_to_gguf.py's
// permute: reshape(heads, 2, head_dim/2, in).swapaxes(1, 2).
function permuteRows({ shape, data }, heads) {
  const [rows, cols] = shape;
  const headDim = rows / heads, half = headDim / 2;
  const out = new Float32Array(data.length);
  for (let h = 0; h < heads; ++h)
    for (let i = 0; i < half; ++i)
      for (let j = 0; j < 2; ++j) {
        const src = (h * headDim + j * half + i) * cols;
        const dst = (h * headDim + 2 * i + j) * cols;
        out.set(data.subarray(src, src + cols), dst);
      }
  return { shape, data: out };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// float32 -> bfloat16 bits, round to nearest even (exact for the zoo's
// bfloat16-stored matrices).
function toBf16(x) {
  f32[0] = x;
  const bits = u32[0];
  if ((bits & 0x7fffffff) > 0x7f800000) return (bits >>> 16) | 0x40; // NaN stays NaN
  return (bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16;
}

// float32 -> IEEE half bits, round to nearest even, with subnormals and
// overflow to infinity (as numpy's astype(float16), which the convert script uses).
function toF16(x) {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000; // the implicit leading one
    const shift = 14 - e;
    const halfway = 1 << (shift - 1);
    let h = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    if (rest > halfway || (rest === halfway && (h & 1))) h += 1;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h += 1; // may carry into the exponent: correct
  return sign | h;
}

const GGML_TYPE = { f32: 0, f16: 1, bf16: 30 };
const FILE_TYPE = { f32: 0, f16: 1, bf16: 32 }; // llama_ftype ALL_F32, MOSTLY_F16, MOSTLY_BF16

function encodeTensor(data, type) {
  if (type === "f32") return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const out = Buffer.alloc(2 * data.length);
  const conv = type === "f16" ? toF16 : toBf16;
  for (let i = 0; i < data.length; ++i) out.writeUInt16LE(conv(data[i]), 2 * i);
  return out;
}

// ---- GGUF writer ---------------------------------------------------------

const GGUF = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 };
const ALIGNMENT = 32;

class Writer {
  constructor() { this.chunks = []; this.length = 0; }
  push(buf) { this.chunks.push(buf); this.length += buf.length; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  str(s) { const b = Buffer.from(s, "utf8"); this.u64(b.length); this.push(b); }
  pad() { const n = (ALIGNMENT - (this.length % ALIGNMENT)) % ALIGNMENT; if (n) this.push(Buffer.alloc(n)); }
}

function writeValue(w, type, value) {
  if (type === GGUF.UINT32) w.u32(value);
  else if (type === GGUF.INT32) w.i32(value);
  else if (type === GGUF.FLOAT32) w.f32(value);
  else if (type === GGUF.BOOL) w.push(Buffer.from([value ? 1 : 0]));
  else if (type === GGUF.STRING) w.str(value);
  else throw new Error(`GGUF value type ${type}`);
}

// ---- The model -----------------------------------------------------------

const weights = readSafetensors(path.join(modelDir, "model.safetensors"));
const pieces = readSentencepiece(path.join(modelDir, "tokenizer.model"));
if (pieces.length !== config.vocab_size) throw new Error(`tokenizer has ${pieces.length} pieces, config ${config.vocab_size}`);

const heads = config.num_attention_heads;
const kvHeads = config.num_key_value_heads ?? heads;
const headDim = config.head_dim ?? config.hidden_size / heads;

const meta = [
  ["general.architecture", GGUF.STRING, "llama"],
  ["general.name", GGUF.STRING, path.basename(path.resolve(modelDir))],
  ["general.file_type", GGUF.UINT32, FILE_TYPE[dtype]],
  ["general.alignment", GGUF.UINT32, ALIGNMENT],
  ["llama.vocab_size", GGUF.UINT32, config.vocab_size],
  ["llama.context_length", GGUF.UINT32, config.max_position_embeddings],
  ["llama.embedding_length", GGUF.UINT32, config.hidden_size],
  ["llama.block_count", GGUF.UINT32, config.num_hidden_layers],
  ["llama.feed_forward_length", GGUF.UINT32, config.intermediate_size],
  ["llama.attention.head_count", GGUF.UINT32, heads],
  ["llama.attention.head_count_kv", GGUF.UINT32, kvHeads],
  ["llama.attention.key_length", GGUF.UINT32, headDim],
  ["llama.attention.value_length", GGUF.UINT32, headDim],
  ["llama.rope.dimension_count", GGUF.UINT32, headDim],
  ["llama.rope.freq_base", GGUF.FLOAT32, config.rope_theta ?? 10000],
  ["llama.attention.layer_norm_rms_epsilon", GGUF.FLOAT32, config.rms_norm_eps],
  ["tokenizer.ggml.model", GGUF.STRING, "llama"],
  ["tokenizer.ggml.pre", GGUF.STRING, "default"],
  ["tokenizer.ggml.tokens", GGUF.ARRAY, [GGUF.STRING, pieces.map((p) => p.text)]],
  ["tokenizer.ggml.scores", GGUF.ARRAY, [GGUF.FLOAT32, pieces.map((p) => p.score)]],
  // sentencepiece's Type enum and llama.cpp's token types share their values.
  ["tokenizer.ggml.token_type", GGUF.ARRAY, [GGUF.INT32, pieces.map((p) => p.type)]],
  ["tokenizer.ggml.bos_token_id", GGUF.UINT32, config.bos_token_id],
  ["tokenizer.ggml.eos_token_id", GGUF.UINT32, config.eos_token_id],
  ["tokenizer.ggml.add_bos_token", GGUF.BOOL, true],
  ["tokenizer.ggml.add_eos_token", GGUF.BOOL, false],
];
const unk = pieces.findIndex((p) => p.type === 2);
if (unk >= 0) meta.push(["tokenizer.ggml.unknown_token_id", GGUF.UINT32, unk]);

// [GGUF name, HF name, permute heads or 0]; 1-D tensors (norms) stay float32.
const names = [["token_embd.weight", "model.embed_tokens.weight", 0]];
for (let i = 0; i < config.num_hidden_layers; ++i) {
  const hf = `model.layers.${i}.`, gg = `blk.${i}.`;
  names.push(
    [gg + "attn_norm.weight", hf + "input_layernorm.weight", 0],
    [gg + "attn_q.weight", hf + "self_attn.q_proj.weight", heads],
    [gg + "attn_k.weight", hf + "self_attn.k_proj.weight", kvHeads],
    [gg + "attn_v.weight", hf + "self_attn.v_proj.weight", 0],
    [gg + "attn_output.weight", hf + "self_attn.o_proj.weight", 0],
    [gg + "ffn_norm.weight", hf + "post_attention_layernorm.weight", 0],
    [gg + "ffn_gate.weight", hf + "mlp.gate_proj.weight", 0],
    [gg + "ffn_up.weight", hf + "mlp.up_proj.weight", 0],
    [gg + "ffn_down.weight", hf + "mlp.down_proj.weight", 0],
  );
}
names.push(["output_norm.weight", "model.norm.weight", 0]);
// Tied embeddings: llama.cpp reuses token_embd.weight when output.weight is absent.
if (!config.tie_word_embeddings) names.push(["output.weight", "lm_head.weight", 0]);

const tensors = names.map(([name, hfName, permuteHeads]) => {
  let t = weights.get(hfName);
  if (!t) throw new Error(`${hfName} missing from model.safetensors`);
  if (permuteHeads) t = permuteRows(t, permuteHeads);
  const type = t.shape.length === 1 ? "f32" : dtype;
  return { name, shape: t.shape, type, bytes: encodeTensor(t.data, type) };
});

const w = new Writer();
w.push(Buffer.from("GGUF", "ascii"));
w.u32(3); // version
w.u64(tensors.length);
w.u64(meta.length);
for (const [key, type, value] of meta) {
  w.str(key);
  w.u32(type);
  if (type === GGUF.ARRAY) {
    const [elemType, items] = value;
    w.u32(elemType);
    w.u64(items.length);
    for (const item of items) writeValue(w, elemType, item);
  } else {
    writeValue(w, type, value);
  }
}
let offset = 0;
for (const t of tensors) {
  w.str(t.name);
  w.u32(t.shape.length);
  for (const d of [...t.shape].reverse()) w.u64(d); // GGML lists the fastest-moving dimension first
  w.u32(GGML_TYPE[t.type]);
  w.u64(offset);
  offset += Math.ceil(t.bytes.length / ALIGNMENT) * ALIGNMENT;
}
w.pad();
for (const t of tensors) {
  w.push(t.bytes);
  w.pad();
}
fs.writeFileSync(outPath, Buffer.concat(w.chunks));
console.log(`${outPath}: ${tensors.length} tensors, ${dtype}, ${(w.length / 1e6).toFixed(1)} MB`);
