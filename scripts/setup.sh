#!/usr/bin/env bash
# Installs seed's Debian 12 dependencies (only those missing; safe to re-run)
# and builds into build/: the `seed` binary, or with --test or --cuda
# everything. Used by run.sh and test.sh (which passes --test for the test
# suite's extra packages, and --no-build for sanitizer builds, which
# configure their own folder).
#
# --cuda builds against the CUDA build of PyTorch that `python3` imports
# (pip's torch, with libtorch inside) instead of Debian's CPU libtorch;
# CMake settles the clashes between pip's torch and the system's libraries
# (cmake/pip_torch.cmake), and nvcc compiles seed's CUDA kernels
# (models/cuda/). SEED_PREFIX_PATH adds folders where the other
# dependencies live when they are not installed system-wide.
set -euo pipefail
cd "$(dirname "$0")/.."

# Why each package is here: README.md, "Dependencies".
packages=(
  cmake ninja-build g++ pkg-config ccache
  libopenmpi-dev openmpi-bin
  libboost-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libsentencepiece-dev libpcre2-dev libicu-dev
  libgtest-dev libgmock-dev
)
test=false build=true cuda=false
for arg in "$@"; do
  case $arg in
    --test) test=true ;;
    --no-build) build=false ;;
    --cuda) cuda=true ;;
    *) echo "setup.sh: unknown option $arg (known: --test, --no-build, --cuda)" >&2; exit 2 ;;
  esac
done
prefix_path=${SEED_PREFIX_PATH:-}
cuda_compiler=""
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
  ${cuda_compiler:+"-DCMAKE_CUDA_COMPILER=$cuda_compiler"}
# The main job needs only the binary (half the build); the tests and the GPU
# figures (scripts/gpu_figures.sh) need everything.
targets=()
$test || $cuda || targets=(--target seed)
cmake --build build -j "$(nproc)" "${targets[@]}"
