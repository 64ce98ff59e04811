// Batch-1 decode tokens/s of seed (`seed bench forward`) and of llama.cpp
// (decode_bench on the converted GGUF files), interleaved on one machine:
// every round runs each (model, dtype, threads) cell once per engine, so
// drift of a shared VM hits both alike. Each invocation reports a median over
// 5 repeats of 32 decoded tokens; the table gives the median (range) over rounds.
//
//   node scripts/llama_cpp/bench.mjs [ROUNDS=6] [best|avx2]   (from the repository root, after build.sh)
//
// avx2: seed's AVX2 kernels (--cpu-kernel avx2) against llama.cpp's AVX2
// build (its haswell variant), whatever this CPU has beyond AVX2.
//
// Each invocation holds /tmp/seed-bench.lock, so it never overlaps another
// timing run on the machine. Raw figures: build/llama_cpp/bench-best.json or bench-avx2.json.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const rounds = Number(process.argv[2] ?? 6);
const isa = process.argv[3] ?? "best";
if (!["best", "avx2"].includes(isa)) throw new Error(`instruction set '${isa}': best or avx2`);
const here = path.dirname(fileURLToPath(import.meta.url));
const bins = path.join(here, "node_modules/@node-llama-cpp/linux-x64/bins/linux-x64");
const backend = isa === "avx2" ? path.join(bins, "libggml-cpu-haswell.so") : bins;
const seedKernel = isa === "avx2" ? ["--cpu-kernel", "avx2"] : [];
const models = ["tiny-target", "tiny-draft"];
const dtypes = [["f32", "float32"], ["f16", "float16"], ["bf16", "bfloat16"]];
const threadCounts = [1, 2];
const lock = "/tmp/seed-bench.lock";
const seedJson = "build/llama_cpp/forward.json";

const locked = (cmd, args) => execFileSync("flock", [lock, cmd, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });

function seedDecode(model, dtype, threads) {
  locked("build/launch/seed", ["--threads", String(threads), ...seedKernel, "--weights-dtype", dtype, "bench", "forward",
    "--model", `models/zoo/${model}`, "--repeats", "5", "--decode-tokens", "32", "--json", seedJson]);
  return JSON.parse(fs.readFileSync(seedJson, "utf8")).decode_tokens_per_s;
}

function llamaDecode(model, gguf, threads) {
  const out = locked("build/llama_cpp/decode_bench", [backend, `build/llama_cpp/${model}-${gguf}.gguf`, String(threads), "5", "32"]);
  return JSON.parse(out).decode_tokens_per_s;
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

const cells = [];
for (const model of models)
  for (const [gguf, dtype] of dtypes)
    for (const threads of threadCounts) cells.push({ model, gguf, dtype, threads, seed: [], llama: [] });

for (let r = 0; r < rounds; ++r) {
  for (const c of cells) {
    // Alternate which engine goes first, so neither always follows the other.
    const pair = [() => c.seed.push(seedDecode(c.model, c.dtype, c.threads)),
      () => c.llama.push(llamaDecode(c.model, c.gguf, c.threads))];
    if (r % 2) pair.reverse();
    pair.forEach((run) => run());
  }
  console.error(`round ${r + 1}/${rounds} done ${new Date().toISOString()}`);
}
fs.writeFileSync(`build/llama_cpp/bench-${isa}.json`, JSON.stringify(cells, null, 1));

const fmt = (v) => `${Math.round(median(v))} (${Math.round(Math.min(...v))}-${Math.round(Math.max(...v))})`;
console.log(`decode tokens/s at batch 1 (${isa === "avx2" ? "AVX2 kernels on both sides" : "each engine's best kernels"}), median (range) of ${rounds} interleaved runs\n`);
console.log("| model | weights | threads | seed | llama.cpp | seed / llama.cpp |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const c of cells) {
  const ratio = median(c.seed) / median(c.llama);
  console.log(`| ${c.model} | ${c.dtype} | ${c.threads} | ${fmt(c.seed)} | ${fmt(c.llama)} | ${ratio.toFixed(2)}x |`);
}
