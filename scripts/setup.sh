#!/bin/sh
# Installs what Seer builds with (Debian packages), builds it, and builds the datasets
# datasets/nb201.h5 and datasets/fbnet.h5 when missing. Safe to run again. Run as root on Debian 12.
#   SEER_NO_APT=1     skip apt (packages already there)
#   SEER_NO_DATASET=1 skip the dataset
set -eu
cd "$(dirname "$0")/.."
if [ "${SEER_NO_APT:-0}" != 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # build: compiler, cmake; libraries: HDF5 (datasets) with liblz4 and HDF5's LZ4 filter
    # plugin (compressed datasets), OpenBLAS built for OpenMP (dense
    # products), inih (INI configs), protobuf-c + onnx.proto (the ONNX reader); python3 with
    # numpy, h5py and onnx for the dataset builder and the tests; clang with its fuzzer runtime
    # for the libFuzzer test of libseer's loader; matplotlib for seersweep's plot; torch (CPU)
    # for the design-space builder and the measurement harness (scripts/space, scripts/measure);
    # Open MPI for data-parallel training (mpirun; only libseer_mpi.so links it).
    apt-get install -y -qq --no-install-recommends build-essential cmake pkg-config \
        libhdf5-dev liblz4-dev hdf5-filter-plugin libopenblas-openmp-dev libinih-dev protobuf-c-compiler libprotobuf-c-dev \
        libonnx-dev python3 python3-numpy python3-h5py python3-onnx clang libclang-rt-14-dev \
        python3-matplotlib python3-torch openmpi-bin libopenmpi-dev >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
# built when missing, and again when its builder changed since (a pulled change to the graphs)
if [ "${SEER_NO_DATASET:-0}" != 1 ] && { [ ! -f datasets/nb201.h5 ] ||
    [ scripts/datasets/nb201_build.py -nt datasets/nb201.h5 ]; }; then
    /usr/bin/python3 scripts/datasets/nb201_build.py -o datasets/nb201.h5
fi
# the second public search space (FBNet, HELP's latencies; datasets/fbnet/README.md)
if [ "${SEER_NO_DATASET:-0}" != 1 ] && { [ ! -f datasets/fbnet.h5 ] ||
    [ scripts/datasets/fbnet_build.py -nt datasets/fbnet.h5 ]; }; then
    /usr/bin/python3 scripts/datasets/fbnet_build.py -o datasets/fbnet.h5
fi
