#!/usr/bin/env bash
# Installs seed's Debian 12 dependencies (only those missing; safe to re-run)
# and builds into build/: the `seed` binary, or with --test everything.
# Used by run.sh and test.sh (which passes --test for the test suite's
# extra packages, and --no-build for sanitizer builds, which configure
# their own folder).
#
# --cuda builds against the CUDA build of PyTorch that `python3` imports
# (pip's torch, with libtorch inside) instead of Debian's CPU libtorch;
# CMake settles the clashes between pip's torch and the system's libraries
# (cmake/pip_torch.cmake), and nvcc compiles seed's CUDA kernels
# (models/cuda/). SEED_PREFIX_PATH adds folders where the other
# dependencies live when they are not installed system-wide.
#
# --deps FILE takes those dependencies from a file scripts/dependency_kit.sh
# packed on a Debian 12 machine, for a machine without apt-get: unpacked
# beside FILE once, found by CMake and pkg-config there, and named in the
# binaries' run paths, so that they run without any environment set.
set -euo pipefail
called_from=$PWD
cd "$(dirname "$0")/.."

# Why each package is here: README.md, "Dependencies".
packages=(
  cmake ninja-build g++ pkg-config ccache
  libopenmpi-dev openmpi-bin
  libboost-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libsentencepiece-dev libpcre2-dev libicu-dev
  libgtest-dev libgmock-dev
)
test=false build=true cuda=false deps=""
while (($#)); do
  case $1 in
    --test) test=true ;;
    --no-build) build=false ;;
    --cuda) cuda=true ;;
    --deps)
      deps=${2:-}
      [[ -z $deps || $deps == /* ]] || deps=$called_from/$deps
      [[ -f $deps ]] || { echo "setup.sh: --deps wants a file from scripts/dependency_kit.sh, not '${2:-}'" >&2; exit 2; }
      shift ;;
    *) echo "setup.sh: unknown option $1 (known: --test, --no-build, --cuda, --deps FILE)" >&2; exit 2 ;;
  esac
  shift
done
prefix_path=${SEED_PREFIX_PATH:-}
cuda_compiler=""
kit_flags=()
if [[ -n $deps ]]; then
  kit=$(cd "$(dirname "$deps")" && pwd)/$(basename "$deps")
  [[ $kit == *.tar.xz ]] && kit=${kit%.tar.xz} || kit=$kit.d
  # Unpacked once, and again when FILE is newer (a kit packed since).
  if [[ ! -d $kit || $deps -nt $kit ]]; then
    rm -rf "$kit" "$kit.tmp"
    mkdir -p "$kit.tmp"
    if command -v xz >/dev/null; then
      tar -C "$kit.tmp" -xJf "$deps"
    else  # tar needs xz for the kit; python3 (a torch machine's) reads it itself
      python3 -c 'import sys, tarfile
trusted = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **trusted)' "$deps" "$kit.tmp"
    fi
    # pkg-config files name /usr; they are read here.
    find "$kit.tmp" -name '*.pc' -exec sed -i -E "s#([= ])/usr([/ ]|\$)#\1$kit/usr\2#g" {} +
    mv "$kit.tmp" "$kit"
    touch "$kit"
  fi
  # The kit's libraries run on the C and C++ runtimes they were built
  # against or newer ones; an older glibc or libstdc++ would fail only
  # later, in Open MPI's compiler wrapper or at a binary's start.
  [[ -f $kit/runtime-needs ]] || { echo "setup.sh --deps: $deps is an older kit; pack it again (scripts/dependency_kit.sh)" >&2; exit 1; }
  read -r needs_glibc needs_glibcxx <"$kit/runtime-needs"
  glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
  libstdcxx=$(g++ -print-file-name=libstdc++.so.6)
  if [[ $(printf '%s\n' "${needs_glibc#GLIBC_}" "$glibc" | sort -V | head -1) != "${needs_glibc#GLIBC_}" ]] ||
    ! grep -qaF "$needs_glibcxx" "$libstdcxx"; then
    echo "setup.sh --deps: $deps was packed from Debian 12 and needs glibc ${needs_glibc#GLIBC_} and a libstdc++" \
      "with $needs_glibcxx or newer; this machine has glibc $glibc and $libstdcxx:" \
      "install seed's dependencies from its own packages and name their folders in SEED_PREFIX_PATH" >&2
    exit 1
  fi
  lib=$kit/usr/lib/x86_64-linux-gnu
  prefix_path="$kit/usr${prefix_path:+;$prefix_path}"
  # Open MPI's compiler wrapper runs from the kit at configure time.
  export OPAL_PREFIX=$kit/usr
  export PKG_CONFIG_PATH=$lib/pkgconfig:$kit/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  # The binaries find the kit's libraries through their run path, and
  # those libraries the rest of the kit through theirs.
  kit_flags=(-DMPI_CXX_COMPILER="$kit/usr/bin/mpicxx.openmpi" -DPKG_CONFIG_EXECUTABLE="$kit/usr/bin/pkgconf"
    -DCMAKE_BUILD_RPATH="$lib")
fi
if $cuda; then
  torch_prefix=$(python3 -c 'import torch; assert torch.version.cuda, "a CPU-only torch"; print(torch.utils.cmake_prefix_path)') || {
    echo "setup.sh --cuda: python3 cannot import a CUDA build of torch (pip install torch)" >&2
    exit 1
  }
  prefix_path="$torch_prefix${prefix_path:+;$prefix_path}"
  # seed's own CUDA kernels need nvcc: CUDA's usual folder when PATH has none.
  if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    cuda_compiler=/usr/local/cuda/bin/nvcc
  fi
else
  packages+=(libtorch-dev libopenblas0-openmp)
fi
# Only for the test suite (scripts/test.sh): a headless browser that renders
# `seed report`'s HTML; python3 for the fault trials' result checks; node and npm for the tokenizer parity test (skipped if
# a node from elsewhere, e.g. NodeSource, already provides them).
if $test; then
  packages+=(chromium python3)
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
  # scripts/fuzz.sh: clang's sanitizers and libFuzzer (GCC has no
  # libFuzzer), and clang's OpenMP runtime.
  packages+=(clang-14 libclang-rt-14-dev libomp-14-dev)
fi
missing=()
if [[ -n $deps ]]; then
  # The kit holds the libraries; the machine brings the build tools.
  for tool in cmake ninja g++; do
    command -v $tool >/dev/null || { echo "setup.sh --deps: $tool is not on PATH" >&2; exit 1; }
  done
  packages=()
fi
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})) && ! command -v apt-get >/dev/null; then
  echo "setup: no apt-get here; expecting ${missing[*]} (or their headers and libraries) under SEED_PREFIX_PATH" >&2
elif ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

$build || exit 0
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${prefix_path:+"-DCMAKE_PREFIX_PATH=$prefix_path"} \
  ${cuda_compiler:+"-DCMAKE_CUDA_COMPILER=$cuda_compiler"} "${kit_flags[@]}"
# The main job needs only the binary (half the build), the tests everything;
# scripts/gpu_figures.sh builds the few it runs.
targets=()
$test || targets=(--target seed)
cmake --build build -j "$(nproc)" "${targets[@]}"
