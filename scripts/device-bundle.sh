#!/bin/sh
# Prepares build-device/ for the GPU machine (a bare CUDA 13 + PyTorch image without this
# project's Debian libraries): the binaries the GPU checks run, the shared libraries they need
# that such an image lacks (libs.tar.xz: HDF5, OpenBLAS, inih, protobuf-c and their dependencies;
# not glibc, libstdc++, or CUDA's own libraries, which the image has), and the NB201 dataset
# compressed (365 MB -> about 4 MB). scripts/device-check.sh unpacks and uses it there:
#   sh scripts/device-bundle.sh            (here; builds build/ first)
#   device: carry build-device, run sh scripts/device-check.sh
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$(nproc)" > /dev/null
out=build-device
rm -rf "$out"
mkdir -p "$out/bin" "$out/stage/lib"
bins="build/seertrain build/seerconvert build/tests/ckpt_equal build/tests/test_cuda_ops
      build/tests/test_nccl build/bench_cuda_ops"
cp $bins "$out/bin/"
# every library the binaries load, less the C runtime and CUDA's (found on the image)
for b in $bins; do ldd "$b"; done | awk '$3 ~ /^\// { print $3 }' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+)\.so|/cuda' |
    while read -r lib; do cp -L "$lib" "$out/stage/lib/"; done
tar -C "$out/stage" -cJf "$out/libs.tar.xz" lib
rm -rf "$out/stage"
if [ -f datasets/nb201_brpnas.h5 ]; then xz -T0 -6 -c datasets/nb201_brpnas.h5 > "$out/nb201_brpnas.h5.xz"; fi
du -sh "$out" "$out"/*
