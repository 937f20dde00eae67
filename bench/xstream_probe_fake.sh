#!/usr/bin/env bash
# xstream_probe_fake.sh: bench/xstream_probe.cu built with the host compiler and
# run against the fake driver (tests/fakecuda), no GPU: each line's "fake:" column,
# written by hand, is checked against what the fake answers. The runtime calls
# come from bench/fakert/cuda_runtime.h, the kernels from
# bench/fakert/xstream_kernels.c; the spin kernel's reads of the GPU's timer are
# taken out. Exits 1 where the probe did not build or run, or a line differs.
#
#   make fakecuda && bash bench/xstream_probe_fake.sh     (make xstream-probe-fake)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
CXX=${CXX:-c++}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LIB=$PWD/$BUILD/fakecuda
OUT=$BUILD/bench/xstream_probe_fake
mkdir -p "$OUT"
[ -f "$LIB/libcuda.so.1" ] || { echo "xstream-probe-fake: no $LIB/libcuda.so.1: make fakecuda first" >&2; exit 1; }
sed -e 's/asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));/t0 = 0;/' \
    -e 's/asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));/t = ns;/' \
    bench/xstream_probe.cu >"$OUT/probe.cpp"
cp bench/check.cuh "$OUT/"
cc -std=gnu11 -c -fPIC -Itests/fakecuda -o "$OUT/kernels.o" bench/fakert/xstream_kernels.c &&
    $CXX -O1 -Ibench/fakert -I"$CUDA_HOME/include" -o "$OUT/probe" "$OUT/probe.cpp" "$OUT/kernels.o" \
        -rdynamic -L"$LIB" -Wl,-rpath,"$LIB" -lcuda -ldl -lpthread || { echo "xstream-probe-fake: build failed" >&2; exit 1; }
timeout 60 "$OUT/probe" >"$OUT/probe.log" 2>&1
rc=$?
cat "$OUT/probe.log"
[ $rc = 0 ] || { echo "xstream-probe-fake: the probe exited $rc" >&2; exit 1; }
grep -q "DIFFERS" "$OUT/probe.log" && { echo "xstream-probe-fake: the fake column differs from the fake" >&2; exit 1; }
grep -q "facts, 0 differ" "$OUT/probe.log" || exit 1
