#!/bin/sh
# cmake --install into a scratch prefix; then build examples/model_info.c against the installed
# headers and pkg-config files, shared and static, and check what the binaries need at run time;
# and examples/route_onnx.c (libseeronnx) against the installed predictors.
#   test_install.sh BUILD_DIR SOURCE_DIR WORK MODEL.seer
set -eu
build=$1 src=$2 work=$3 model=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || { cat "$work/install.log"; fail install; }
lib=$(ls -d "$work"/prefix/lib*/ | head -n 1)
for f in include/seer/seer.h include/seer/seer_onnx.h bin/seerpredict bin/seerexport bin/seercalibrate \
         share/seer/predictors/transfer_gpu.seer share/seer/predictors/README.md; do
    [ -e "$work/prefix/$f" ] || fail "not installed: $f"
done
for f in libseer.a libseer.so libseeronnx.so pkgconfig/seer.pc pkgconfig/seer-onnx.pc; do
    [ -e "$lib/$f" ] || fail "not installed: lib/$f"
done
export PKG_CONFIG_PATH="$lib/pkgconfig"
cc -std=c11 -Wall -Werror "$src/examples/model_info.c" $(pkg-config --cflags --libs seer) \
    -Wl,-rpath,"$lib" -o "$work/model_info" || fail "shared build"
cc -std=c11 -Wall -Werror "$src/examples/model_info.c" $(pkg-config --cflags seer) "$lib/libseer.a" -lm \
    -o "$work/model_info_static" || fail "static build"
# libseer needs libc and libm only; the static program needs no libseer at all
needed=$(objdump -p "$lib/libseer.so" | awk '/NEEDED/ {print $2}' | sort | tr '\n' ' ')
echo "libseer.so needs: $needed"
[ "$needed" = "libc.so.6 libm.so.6 " ] || fail "libseer.so depends on more than libc and libm: $needed"
objdump -p "$work/model_info_static" | grep -q "NEEDED.*libseer" && fail "the static program needs libseer.so"
"$work/model_info" "$model" | tee "$work/out.txt"
"$work/model_info_static" "$model" >"$work/out_static.txt"
cmp "$work/out.txt" "$work/out_static.txt" || fail "shared and static builds print different results"
grep -q "seernet model" "$work/out.txt" || fail "unexpected output"
# the installed seerpredict finds the installed predictors (share/seer/predictors)
"$work/prefix/bin/seerpredict" --list-devices | tee "$work/devices.txt"
grep -q "^2080ti .*share/seer/predictors/transfer_gpu.seer" "$work/devices.txt" ||
    fail "the installed seerpredict does not list the installed predictors"
# the pkg-config versions are the libraries'
for pc in seer:libseer seer-onnx:libseeronnx; do
    v=$(pkg-config --modversion "${pc%%:*}") && [ -e "$lib/${pc#*:}.so.$v" ] ||
        fail "pkg-config says ${pc%%:*} $v, the installed library is $(ls "$lib/${pc#*:}".so.*.*)"
done
# examples/route_onnx.c (libseeronnx): routes as the installed seerpredict --device does and
# predicts the same numbers
share="$work/prefix/share/seer/predictors" onnx="$src/tests/data/onnx"
cc -std=c11 -Wall -Werror "$src/examples/route_onnx.c" $(pkg-config --cflags --libs seer-onnx) \
    -Wl,-rpath,"$lib" -o "$work/route_onnx" || fail "route_onnx build"
"$work/route_onnx" "$share/cpu_xeon26.seer" "$share/cpu_xeon26_rep.seer" "$onnx/mobileone_s1.onnx" \
    "$onnx/resnet18.onnx" | tee "$work/route.txt" || fail "route_onnx"
grep -q "mobileone_s1.onnx: answered by the specialist because of Relu>BatchNormalization$" "$work/route.txt" ||
    fail "route_onnx: MobileOne-S1 is not routed to the specialist"
grep -q "resnet18.onnx: answered by the main predictor$" "$work/route.txt" || fail "route_onnx: ResNet-18 is routed"
"$work/route_onnx" "$share/cpu_xeon26_rep.seer" "$share/cpu_xeon26.seer" "$onnx/resnet18.onnx" 2>"$work/route_err.txt" &&
    fail "route_onnx: a second model that is no specialist was accepted"
grep -q "not a specialist (mark it with seerexport --specialist)" "$work/route_err.txt" ||
    { cat "$work/route_err.txt"; fail "route_onnx: no clear error for a second model that is no specialist"; }
"$work/prefix/bin/seerpredict" "$onnx/mobileone_s1.onnx" "$onnx/resnet18.onnx" --device cpu_xeon26 --batch 1 \
    2>/dev/null > "$work/route_cli.txt" || fail "seerpredict --device cpu_xeon26"
[ "$(grep "^  cpu_xeon26_" "$work/route.txt")" = "$(grep "^  cpu_xeon26_" "$work/route_cli.txt")" ] ||
    fail "route_onnx and seerpredict --device predict otherwise"
echo "test_install.sh: all checks passed"
