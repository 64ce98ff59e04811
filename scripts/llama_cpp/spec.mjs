// Greedy plain (ar) and chain speculative (sd, k = 7) decoding of seed and of
// llama.cpp on the workload of `seed bench spec --n 1 --temperatures 0`,
// interleaved on one machine, each invocation under /tmp/seed-bench.lock.
//
//   node scripts/llama_cpp/spec.mjs [ROUNDS=6] [THREADS=2]   (from the repository root, after build.sh)
//
// The workload, as bench/spec_bench.cpp builds it for n = 1: repeat r takes
// puzzle r, a thought (the propose prompt, 96 new tokens at most), then an
// evaluation (the value prompt on the puzzle's first successor state, 320 at
// most). THREADS: seed's --threads (its target's threads; at 2, seed's
// default on this 2-core machine) and llama.cpp's threads for target and draft.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const rounds = Number(process.argv[2] ?? 6);
const threads = Number(process.argv[3] ?? 2);
const here = path.dirname(fileURLToPath(import.meta.url));
const bins = path.join(here, "node_modules/@node-llama-cpp/linux-x64/bins/linux-x64");
const seed = "build/launch/seed";
const lock = "/tmp/seed-bench.lock";
const puzzles = ["4 9 10 13", "1 4 8 8", "2 5 7 11"]; // seed bench spec's default --puzzles
const k = 7;

// tasks::game24_next_steps's first step: the two smallest numbers added.
function firstSuccessor(puzzle) {
  const [a, b, ...rest] = puzzle.split(" ").map(Number).sort((x, y) => x - y);
  return [a + b, ...rest].sort((x, y) => x - y).join(" ");
}

const requests = puzzles.flatMap((p, r) => [
  [r, 96, `Input: ${p}\nPossible next steps:\n`],
  [r, 320, `Evaluate if given numbers can reach 24 (sure/likely/impossible)\n${firstSuccessor(p)}\n`],
]);
const ids = execFileSync(seed, ["tokenize", "--model", "models/zoo/tiny-target"], {
  input: requests.map(([, , text]) => JSON.stringify(text)).join("\n") + "\n", encoding: "utf8", stdio: ["pipe", "pipe", "ignore"],
}).trim().split("\n").map((line) => JSON.parse(line));
const requestsFile = "build/llama_cpp/spec-requests.txt";
fs.writeFileSync(requestsFile, requests.map(([r, max], i) => `${r} ${max} ${ids[i].join(" ")}\n`).join(""));

const locked = (cmd, args) => execFileSync("flock", [lock, cmd, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
const seedJson = "build/llama_cpp/spec-seed.json";

const runs = { seed: { ar: [], sd: [] }, llama: { ar: [], sd: [] } };
const extra = {};
for (let r = 0; r < rounds; ++r) {
  const pair = [
    () => {
      locked(seed, ["--threads", String(threads), "bench", "spec", "--n", "1", "--temperatures", "0", "--engines", "ar", "sd",
        "--draft-length", String(k), "--repeats", "3", "--json", seedJson]);
      for (const row of JSON.parse(fs.readFileSync(seedJson, "utf8")).rows) {
        runs.seed[row.engine].push(row.tokens_per_s);
        extra[`seed ${row.engine}`] = row;
      }
    },
    () => {
      for (const engine of ["ar", "sd"]) {
        const draftArgs = engine === "sd" ? ["build/llama_cpp/tiny-draft-bf16.gguf", String(k)] : [];
        const out = JSON.parse(locked("build/llama_cpp/spec_bench",
          [bins, String(threads), requestsFile, "build/llama_cpp/tiny-target-bf16.gguf", ...draftArgs]));
        runs.llama[engine].push(out.tokens_per_s);
        extra[`llama.cpp ${engine}`] = out;
      }
    },
  ];
  if (r % 2) pair.reverse(); // alternate which engine goes first
  pair.forEach((run) => run());
  console.error(`round ${r + 1}/${rounds} done ${new Date().toISOString()}`);
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
const fmt = (v) => `${Math.round(median(v))} (${Math.round(Math.min(...v))}-${Math.round(Math.max(...v))})`;
console.log(`greedy ToT workload (seed bench spec --n 1 --temperatures 0), bfloat16 weights, ${threads} thread(s), ` +
  `tokens/s median (range) of ${rounds} interleaved runs\n`);
console.log("| engine | seed | llama.cpp | seed / llama.cpp |");
console.log("| --- | --- | --- | --- |");
for (const engine of ["ar", "sd"]) {
  const ratio = median(runs.seed[engine]) / median(runs.llama[engine]);
  console.log(`| ${engine} | ${fmt(runs.seed[engine])} | ${fmt(runs.llama[engine])} | ${ratio.toFixed(2)}x |`);
}
console.log(`\nsd / ar: seed ${(median(runs.seed.sd) / median(runs.seed.ar)).toFixed(2)}x, ` +
  `llama.cpp ${(median(runs.llama.sd) / median(runs.llama.ar)).toFixed(2)}x`);
console.log("\nlast run of each:\n" + Object.entries(extra).map(([name, v]) => `${name}: ${JSON.stringify(v)}`).join("\n"));
