#!/bin/sh
# Installs the parity test's pinned npm packages into $1 (the build folder's
# tokenizer_parity/). Exit 77 (ctest's skip) when node or the registry is
# unavailable; a repeat run with an unchanged lockfile does nothing.
set -u
src="$(dirname "$0")"
dest="$1"
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
  echo "tokenizer parity skipped: node and npm are not installed (scripts/setup.sh --test installs them)"
  exit 77
}
mkdir -p "$dest"
cp "$src/reference.mjs" "$src/chat_reference.mjs" "$dest/"
rm -rf "$dest/chat_templates" && cp -r "$src/chat_templates" "$dest/"
if cmp -s "$src/package-lock.json" "$dest/installed.lock" && [ -d "$dest/node_modules" ]; then
  echo "npm packages already installed in $dest"
  exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dest/"
if ! (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error --fetch-retries=1 --fetch-timeout=60000); then
  echo "tokenizer parity skipped: npm ci failed (is the npm registry reachable?)"
  exit 77
fi
cp "$src/package-lock.json" "$dest/installed.lock"
