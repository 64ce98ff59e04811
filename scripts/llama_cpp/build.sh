#!/usr/bin/env bash
# Installs the pinned node-llama-cpp (exact versions from package-lock.json;
# its prebuilt CPU llama.cpp comes with it; the postinstall that could
# download or build llama.cpp is skipped),
# converts the zoo models to GGUF in float32, float16 and bfloat16, and
# compiles decode_bench and spec_bench against the prebuilt libllama with the headers of the
# same llama.cpp release (the source bundle inside the npm package).
# Everything it writes lies under build/llama_cpp/ and scripts/llama_cpp/node_modules/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/llama_cpp
mkdir -p "$out"

(cd "$here" && npm install --ignore-scripts --no-audit --no-fund)
bins=$here/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64

for m in tiny-target tiny-draft; do
  for d in f32 f16 bf16; do
    node "$here/to_gguf.mjs" "$root/models/zoo/$m" "$out/$m-$d.gguf" "$d"
  done
done

if [ ! -d "$out/llama-headers" ]; then
  rm -rf "$out/llama-src"
  git clone --quiet --no-checkout "$here/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$out/llama-src"
  mkdir -p "$out/llama-headers"
  git -C "$out/llama-src" archive HEAD include ggml/include | tar -x -C "$out/llama-headers"
  rm -rf "$out/llama-src"
fi
for tool in decode_bench spec_bench; do
  g++ -O2 -std=c++17 -I"$out/llama-headers/include" -I"$out/llama-headers/ggml/include" \
    "$here/$tool.cpp" -o "$out/$tool" \
    -L"$bins" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -lggml-base -Wl,-rpath,"$bins"
  echo "built $out/$tool"
done
