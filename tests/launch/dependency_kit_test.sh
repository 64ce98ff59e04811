#!/usr/bin/env bash
# scripts/setup.sh --deps checks this machine's C and C++ runtimes against
# the kit's runtime-needs before anything else: a kit that needs a newer
# glibc or libstdc++ ends the setup with a message naming what it needs,
# one this machine satisfies goes on, and a kit packed before the check
# existed is named as older. The kits here hold only that file.
#
#   tests/launch/dependency_kit_test.sh REPOSITORY
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
failures=0

# check NAME RUNTIME-NEEDS STATUS PATTERN: a kit whose runtime-needs holds
# RUNTIME-NEEDS ("" for no file) ends `setup.sh --no-build --deps` with
# STATUS and output matching PATTERN ("" for no output).
check() {
  local name=$1 needs=$2 expected=$3 pattern=$4 status=0
  mkdir "$work/$name"
  [[ -z $needs ]] || echo "$needs" >"$work/$name/runtime-needs"
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "w:xz").add(sys.argv[2], arcname=".")' \
    "$work/$name.tar.xz" "$work/$name"
  rm -r "$work/$name"
  bash "$root/scripts/setup.sh" --no-build --deps "$work/$name.tar.xz" >"$work/$name.out" 2>&1 || status=$?
  local output_ok=true
  if [[ -z $pattern ]]; then
    [[ ! -s $work/$name.out ]] || output_ok=false
  else
    grep -Eq -- "$pattern" "$work/$name.out" || output_ok=false
  fi
  if [[ $status != "$expected" ]] || ! $output_ok; then
    echo "FAILED $name: exit $status (expected $expected), output (expected /$pattern/):"
    cat "$work/$name.out"
    failures=$((failures + 1))
  else
    echo "ok $name"
  fi
}

check this-machine "GLIBC_$glibc GLIBCXX_3.4.21" 0 ''
check newer-glibc "GLIBC_9.1 GLIBCXX_3.4.21" 1 "needs glibc 9\\.1 .*this machine has glibc $glibc"
check newer-libstdcxx "GLIBC_$glibc GLIBCXX_3.4.2999" 1 "a libstdc\\+\\+ with GLIBCXX_3\\.4\\.2999"
check older-kit "" 1 "is an older kit; pack it again"
((failures == 0))
