// Correctness check of the GGUF conversion: for each zoo model and weight
// dtype, llama.cpp's greedy continuation of seed's prompt token ids must be
// seed's greedy continuation (`seed generate --temperature 0`).
//
//   node scripts/llama_cpp/check.mjs        (from the repository root, after build.sh)
//
// seed prints text, not ids, so llama.cpp's ids are decoded with seed's own
// tokenizer (`seed tokenize --decode`) and the two texts compared. Exits 1 if
// a float32 pair differs (a conversion bug); half-size pairs are reported,
// since float16/bfloat16 rounding of activations may differ between engines.
import { execFileSync } from "node:child_process";
import { getLlama } from "node-llama-cpp";

const seed = "build/launch/seed";
const newTokens = 32;
const prompts = [
  "Input: 4 9 10 13\nPossible next steps:\n",
  "Evaluate if given numbers can reach 24 (sure/likely/impossible)\n10 13 13\n",
  "Use numbers and basic arithmetic operations (+ - * /) to obtain 24. Each step, you are only allowed to choose two of the remaining numbers to obtain a new number.\nInput: 1 4 8 8\nSteps:\n",
];
const dtypes = [["f32", "float32"], ["bf16", "bfloat16"], ["f16", "float16"]];

const run = (args, input) => execFileSync(seed, args, { input, encoding: "utf8", stdio: ["pipe", "pipe", "ignore"] });

// The prebuilt CPU binary only: never build llama.cpp, never download.
const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, logLevel: "error" });

let failed = false;
for (const model of ["tiny-target", "tiny-draft"]) {
  const dir = `models/zoo/${model}`;
  const promptIds = run(["tokenize", "--model", dir], prompts.map((p) => JSON.stringify(p)).join("\n") + "\n")
    .trim().split("\n").map((line) => JSON.parse(line));
  for (const [gguf, seedDtype] of dtypes) {
    const llamaModel = await llama.loadModel({ modelPath: `build/llama_cpp/${model}-${gguf}.gguf` });
    const context = await llamaModel.createContext({ contextSize: 1024, threads: 1, sequences: 1 });
    for (const [i, prompt] of prompts.entries()) {
      const seedOut = run(["--threads", "1", "--weights-dtype", seedDtype, "generate", "--model", dir, "--prompt", prompt,
        "--temperature", "0", "--max-new-tokens", String(newTokens)]);
      // seed generate prints the prompt, the completion and a newline.
      if (!seedOut.startsWith(prompt) || !seedOut.endsWith("\n")) throw new Error(`unexpected seed output ${seedOut}`);
      const seedText = seedOut.slice(prompt.length, -1);

      const sequence = context.getSequence();
      const ids = [];
      for await (const token of sequence.evaluate(promptIds[i], { temperature: 0 })) {
        if (token === llamaModel.tokens.eos) break; // seed stops at EOS too
        ids.push(token);
        if (ids.length === newTokens) break;
      }
      sequence.dispose();
      const llamaText = JSON.parse(run(["tokenize", "--decode", "--model", dir], JSON.stringify(ids) + "\n"));

      const same = llamaText === seedText;
      if (!same && gguf === "f32") failed = true;
      console.log(`${same ? "SAME" : "DIFF"} ${model} ${gguf} prompt ${i}: ${JSON.stringify(llamaText)}` +
        (same ? "" : `\n     seed: ${JSON.stringify(seedText)}\n     llama.cpp ids: ${JSON.stringify(ids)}`));
    }
    await context.dispose();
    await llamaModel.dispose();
  }
}
process.exit(failed ? 1 : 0);
