#!/bin/sh
# The hostile-input corpus (tests/data/hostile) against seertrain, seerconvert, seerpredict,
# seerexport and seersweep built with AddressSanitizer and UBSan in build-asan/ (no CUDA): every
# input must be refused with one line, never a signal or a sanitizer report. Needs build/ (the
# NB201 subset its tests made). About a minute on two cores; CI runs it after ctest.
#   sh scripts/hostile-asan.sh
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEER_SANITIZE=ON -DSEER_CUDA=OFF > /dev/null
cmake --build build-asan -j "$(nproc)" --target seertrain seerconvert seerpredict seerexport seersweep > /dev/null
# leaks on the error exits are expected (seer_die exits at once); UBSan findings are errors
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 SEER_SANITIZED=1 \
    sh tests/test_hostile.sh build-asan build/tests/nb201_subset.h5 tests/data/hostile /tmp/seer-hostile-asan \
    "$(grep -m1 '^SEER_PYTHON:' build/CMakeCache.txt | cut -d= -f2 || echo python3)"
