#!/usr/bin/env bash
# Packs the libraries seed builds against, from Debian 12's packages, into
# one file for a machine that has a compiler, CMake and a CUDA build of
# PyTorch but no apt-get and no network (a GPU node, a container image):
#
#   bash scripts/dependency_kit.sh [FILE]     on Debian 12, with network
#   bash scripts/setup.sh --cuda --deps FILE  there, after copying FILE
#
# FILE (default build-deps/seed-deps.tar.xz) holds the headers, libraries,
# pkg-config and CMake files of Open MPI, spdlog, fmt, CLI11, nlohmann-json,
# SentencePiece, PCRE2, ICU, GoogleTest and the Boost headers seed
# includes, plus pkgconf and Open MPI's compiler wrapper and launcher:
# about 14 MB, for x86-64. Left out: the C and C++ runtimes and the rest of the base
# system, which the machine has (glibc and libstdc++ at least as new as
# Debian 12's: the kit's runtime-needs names them), and whatever it takes
# from PyTorch (libtorch, CUDA, NCCL, OpenMP).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-deps/seed-deps.tar.xz}
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
  { echo "dependency_kit.sh: needs Debian 12's apt-get and dpkg-deb" >&2; exit 2; }

packages=(
  # Open MPI: headers, wrapper and launcher, libraries and their own.
  libopenmpi-dev libopenmpi3 openmpi-common openmpi-bin
  libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libmunge2
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libcli11-dev nlohmann-json3-dev
  libsentencepiece-dev libsentencepiece0
  libpcre2-dev libpcre2-8-0
  libicu-dev libicu72
  libgtest-dev libgmock-dev
  libboost1.74-dev
  pkgconf pkgconf-bin libpkgconf3
  libudev1  # hwloc's, which a container image may lack
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get -o APT::Sandbox::User=root download "${packages[@]}" >/dev/null)
root=$work/root
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$root"; done
lib=$root/usr/lib/x86_64-linux-gnu

# Only the Boost headers seed's sources include, and what those include
# (under C++17 and C++20, for a newer compiler's choices).
git grep -h '^#include <boost/' -- '*.cpp' '*.h' | sort -u >"$work/boost-includes"
for standard in c++17 c++20; do
  g++ -std=$standard -M -MT x -I"$root/usr/include" -x c++ - <"$work/boost-includes"
done | tr ' \\' '\n\n' | grep "^$root/usr/include/boost/" | sort -u >"$work/boost-headers"
mkdir "$work/boost"
sed "s#^$root/##" "$work/boost-headers" | (cd "$root" && xargs cp --parents -t "$work/boost")
rm -rf "$root/usr/include/boost"
mv "$work/boost/usr/include/boost" "$root/usr/include/boost"

# What no build of seed reads: documentation, MPI's Fortran, Java and
# OpenSHMEM libraries, the other ICU and PCRE2 libraries, GoogleTest's
# sources, static libraries (but GoogleTest's, which are all it ships).
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" "$root/usr/src" \
  "$lib/fortran" "$root/usr/bin/mpijavac"* "$lib"/libmpi_{java,mpifh,usempi}* "$lib"/lib{oshmem,ompitrace}.* \
  "$lib"/libicu{i18n,io,test,tu}.* "$lib"/pkgconfig/icu-{i18n,io}.pc \
  "$lib"/pkgconfig/libpcre2-{16,32,posix}.pc
find "$root" -name '*.a' ! -name 'libgtest*' ! -name 'libgmock*' -delete
find "$root" -name '*.mod' -delete
# Libraries and Open MPI plugins that need what the kit lacks (UCX,
# libfabric, verbs, PSM): on the nodes the kit serves, ranks meet over
# shared memory and TCP, and a plugin that cannot load is reported at
# every launch.
base='^(libc|libm|libdl|libpthread|librt|libz|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so'
while :; do
  find "$root" -xtype l -delete  # links to what went
  names=$(find "$root" -name '*.so*' -printf '%f\n')
  removed=0
  while read -r library; do
    for needed in $(readelf -d "$library" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
      if ! [[ $needed =~ $base ]] && ! grep -qxF "$needed" <<<"$names"; then
        rm "$library"
        removed=1
        break
      fi
    done
  done < <(find "$root" -name '*.so*' -type f)
  ((removed)) || break
done

# Each library and program of the kit finds the kit's libraries through a
# run path relative to where it lies ($ORIGIN), wherever the kit is
# unpacked (Open MPI's name /usr/lib/x86_64-linux-gnu/openmpi/lib, which a
# machine without Debian's packages lacks, and which would override the
# run path of the binaries built against the kit). The dynamic loader takes
# $ORIGIN from the path a library was found by, so one found through a
# link in the library folder (PMIx's) also looks beside that link.
(cd "$work" && apt-get -o APT::Sandbox::User=root download patchelf >/dev/null)
dpkg-deb -x "$work"/patchelf_*.deb "$work/tools"
while read -r elf; do
  readelf -h "$elf" >/dev/null 2>&1 || continue
  to_lib=$(realpath --relative-to="$(dirname "$elf")" "$lib")
  "$work/tools/usr/bin/patchelf" --set-rpath "\$ORIGIN/$to_lib:\$ORIGIN/$to_lib/openmpi/lib:\$ORIGIN" "$elf"
done < <(find "$root" -type f \( -name '*.so*' -o -path '*/bin/*' \))

# Open MPI's commands under their usual names (Debian's alternatives), and
# what running them from the kit takes.
for command in mpirun mpiexec mpicxx mpicc; do ln -s "$command.openmpi" "$root/usr/bin/$command"; done
cat >"$root/mpi-env.sh" <<'ENV'
# Sourced (bash) to run the kit's mpirun: it and the folders it reads
# where the kit lies; and, on a machine without ssh, a launcher Open MPI
# checks for though ranks on one node never use it.
kit_usr=$(cd "$(dirname "${BASH_SOURCE[0]}")/usr" && pwd)
export PATH=$kit_usr/bin:$PATH OPAL_PREFIX=$kit_usr
command -v ssh >/dev/null || export OMPI_MCA_plm_rsh_agent=false
ENV

# The newest C and C++ runtime versions the kit's programs and libraries
# ask for (Debian 12's: glibc 2.36, GCC 12's libstdc++), which setup.sh
# --deps checks the machine for before it builds.
newest() {
  find "$root" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec objdump -T {} + 2>/dev/null |
    grep -o "$1[0-9.]*[0-9]" | sort -uV | tail -1
}
echo "$(newest 'GLIBC_2\.') $(newest 'GLIBCXX_3\.')" >"$root/runtime-needs"

mkdir -p "$(dirname "$out")"
tar -C "$root" -cJf "$out" .
echo "dependency_kit.sh: $out ($(du -h "$out" | cut -f1)); on the build machine: bash scripts/setup.sh --cuda --deps $out"
