#!/usr/bin/env bash
# Builds seed's CUDA code on a machine without a GPU, so that a change to
# it is known to compile before GPU time is spent: in a Debian 13 chroot,
# against Debian's CUDA build of libtorch (contrib: libtorch-cuda-dev) and
# CUDA toolkit (non-free: nvidia-cuda-toolkit). It builds seed's CUDA
# kernels, the files that call torch's CUDA API, the NCCL communicator and
# the binaries, and prints the kernels' register use; it runs none of
# them (Debian installs cuDNN, which libtorch_cuda loads, by fetching it
# from NVIDIA, so the chroot goes without it and the links leave its
# symbols unresolved).
#
#   bash scripts/cuda_build_check.sh [ROOT]   as root, on Debian with network
#
# ROOT (default /srv/seed-trixie) holds the chroot, made once (about 12 GB);
# each run copies the working tree's files to ROOT/root/seed and builds
# `seed`, `models_test` and `spec_test` there (about 15 minutes on 2
# cores), printing seed's own warnings and errors.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-/srv/seed-trixie}
((EUID == 0)) || { echo "cuda_build_check.sh: needs root (debootstrap, chroot)" >&2; exit 2; }

if [[ ! -x $root/usr/bin/apt-get ]]; then
  command -v debootstrap >/dev/null || apt-get install -y debootstrap
  debootstrap --components=main,contrib,non-free trixie "$root" http://deb.debian.org/debian
fi
mounted=()
for fs in proc sys dev dev/pts; do
  if ! mountpoint -q "$root/$fs"; then
    mount --bind "/$fs" "$root/$fs"
    mounted=("$root/$fs" "${mounted[@]}")
  fi
done
trap 'for m in "${mounted[@]}"; do umount "$m"; done' EXIT
cp /etc/resolv.conf "$root/etc/resolv.conf"

packages=(build-essential cmake ninja-build pkg-config libtorch-cuda-dev nvidia-cuda-toolkit libnccl-dev
  libopenmpi-dev openmpi-bin libboost-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libsentencepiece-dev libpcre2-dev libicu-dev libgtest-dev libgmock-dev)
if ! chroot "$root" dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  chroot "$root" apt-get update
  # nvidia-cudnn's configuration downloads cuDNN from NVIDIA: it fails
  # without that network, and the build needs none of it.
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}" ||
    { sed -i '2i exit 0' "$root/var/lib/dpkg/info/nvidia-cudnn.postinst" && chroot "$root" dpkg --configure -a; }
fi

rm -rf "$root/root/seed"
mkdir -p "$root/root/seed"
git ls-files -z --cached --others --exclude-standard | xargs -0 tar -c | tar -x -C "$root/root/seed"
chroot "$root" bash -c '
  set -euo pipefail
  cd /root/seed
  # Tests are listed when ctest runs, not after each link: the binaries
  # cannot load without cuDNN.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORCH_CUDA_ARCH_LIST="8.0;9.0" \
    -DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST \
    >cmake.log 2>&1 || { cat cmake.log; exit 1; }
  grep -E "^-- (libtorch has CUDA|nvcc|seed: NCCL|Added CUDA NVCC)" cmake.log
  grep -q seed_cuda_kernels build/build.ninja || { echo "cuda_build_check.sh: CMake found no nvcc" >&2; exit 1; }
  ninja -C build seed models_test spec_test paged_attention_blocks_test 2>&1 | tee build/check.log |
    grep -E "^/root/seed/[^:]+:[0-9]+(:[0-9]+)?: (warning|error)|FAILED" || true
  ! grep -q "^FAILED" build/check.log
  for arch in sm_80 sm_90; do
    echo "== attention kernels on $arch"
    nvcc -std=c++17 -I. -arch=$arch -Xptxas -v -c models/cuda/paged_attention.cu -o /dev/null 2>&1 |
      grep -E "entry function|Used [0-9]+ registers|spill" | sed -E "s/ptxas info +: //" | c++filt
  done
'
echo "cuda_build_check.sh: seed's CUDA code builds against Debian 13's libtorch-cuda and CUDA toolkit"
