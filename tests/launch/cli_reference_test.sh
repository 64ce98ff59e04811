#!/usr/bin/env bash
# docs/cli.md must be what scripts/cli_reference.sh prints for the built binary,
# so that the command reference cannot drift from the options.
#
#   tests/launch/cli_reference_test.sh SEED_BINARY SOURCE_DIR CLI11_VERSION
#
# docs/cli.md is in the help format of Debian 12's CLI11 (2.1); a build with
# another CLI11 prints other spacing and default markers, and is skipped
# (status 77) rather than compared.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: cli_reference_test.sh SEED_BINARY SOURCE_DIR CLI11_VERSION" >&2; exit 2; }
binary=$1
source_dir=$2
if [[ $3 != 2.1.* ]]; then
  echo "docs/cli.md is in CLI11 2.1's help format; this build has CLI11 $3: not compared"
  exit 77
fi
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
bash "$source_dir/scripts/cli_reference.sh" "$binary" >"$fresh"
if ! diff -u "$source_dir/docs/cli.md" "$fresh"; then
  echo "docs/cli.md is not the binary's --help (diff above: - docs/cli.md, + the binary)." >&2
  echo "Regenerate it from the repository root: bash scripts/cli_reference.sh build/launch/seed > docs/cli.md" >&2
  exit 1
fi
