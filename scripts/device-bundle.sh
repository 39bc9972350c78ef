#!/bin/sh
# Prepares build-device/ for the GPU machine (a bare CUDA 13 + PyTorch image without this
# project's Debian libraries): the binaries the GPU checks run, the shared libraries they need
# that such an image lacks (both in bundle.tar.xz; the libraries: HDF5, OpenBLAS, inih, protobuf-c and their dependencies;
# not glibc, libstdc++, or CUDA's own libraries, which the image has), and the NB201 dataset
# compressed: the first 1,000 cells (about 0.8 MB; the whole file, 4 MB compressed, no longer fits
# the 64 MiB the device tool carries beside the tracked tree), with the CPU's test MAPE of the
# multi.ini check on that file (multi_cpu_mape.txt), the figure the GPU's run is held to.
# scripts/device-check.sh unpacks and uses it there:
#   sh scripts/device-bundle.sh            (here; builds build/ first)
#   device: carry build-device, run sh scripts/device-check.sh
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$(nproc)" > /dev/null
out=build-device
rm -rf "$out"
mkdir -p "$out/stage/exe" "$out/stage/lib"
bins="build/seertrain build/seerconvert build/tests/ckpt_equal build/tests/test_cuda_ops
      build/tests/test_nccl build/bench_cuda_ops"
# the binaries travel stripped and compressed with the libraries: the tool carries 64 MiB in all,
# the tracked tree included, and the measurement files grow every session
cp $bins "$out/stage/exe/"
strip "$out"/stage/exe/*
# every library the binaries load, less the C runtime and CUDA's (found on the image)
for b in $bins; do ldd "$b"; done | awk '$3 ~ /^\// { print $3 }' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+)\.so|/cuda' |
    while read -r lib; do cp -L "$lib" "$out/stage/lib/"; done
tar -C "$out/stage" -cJf "$out/bundle.tar.xz" exe lib
rm -rf "$out/stage"
sub=/tmp/seer-nb201_brpnas_1000.h5
/usr/bin/python3 scripts/datasets/nb201_build.py --brpnas --limit 1000 -o "$sub" > /dev/null
xz -T0 -6 -c "$sub" > "$out/nb201_brpnas.h5.xz"
# the CPU's side of device-check's multi stage: the same command with backend.device = cpu (a few
# minutes; kept while newer than seertrain and the config)
ref=/tmp/seer-multi-cpu/cpu/summary.json
if ! [ -f "$ref" ] || [ build/seertrain -nt "$ref" ] || [ configs/multi.ini -nt "$ref" ]; then
    rm -rf /tmp/seer-multi-cpu
    build/seertrain configs/multi.ini --quiet --set data.path="$sub" \
        --set data.labels=1080ti_1_ms,1080ti_32_ms,1080ti_256_ms,2080ti_1_ms,2080ti_32_ms,2080ti_256_ms,titan_rtx_1_ms,titan_rtx_32_ms,titan_rtx_256_ms \
        --set train.epochs=12 --set output.dir=/tmp/seer-multi-cpu --set output.run=cpu > /dev/null
fi
/usr/bin/python3 -c "import json, sys; print('%.4f' % json.load(open(sys.argv[1]))['mean_test_mape'])" \
    /tmp/seer-multi-cpu/cpu/summary.json > "$out/multi_cpu_mape.txt"
echo "multi.ini on the CPU, NB201 first 1,000 cells: test MAPE $(cat "$out/multi_cpu_mape.txt")%"
du -sh "$out" "$out"/*
