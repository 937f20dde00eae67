#!/usr/bin/env bash
# demo.sh: graphshim on a sample, with its report (make demo).
#
# With a GPU: samples/tiny_stream (200 iterations of 21 tiny kernels and a sync)
# without and with graphshim, timed, outputs compared, and graphshim's report.
# Without a GPU: a small driver-API program over the fake CUDA driver in
# tests/fakecuda, a CPU stand-in; the report shows what graphshim did, times mean
# nothing there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LIB=$ROOT/build/libgraphshim.so
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "graphshim demo on $(nvidia-smi -L | head -1)"
    make -s -C samples BUILD="$ROOT/build" "$ROOT/build/samples/tiny_stream.static"
    prog=("$ROOT/build/samples/tiny_stream.static" 2000)
    env=()
else
    echo "graphshim demo: no GPU on this machine, so the program runs over the fake CUDA driver"
    echo "(tests/fakecuda, a CPU stand-in for libcuda.so.1): the report below is real, times are not."
    make -s build/fakecuda/libcuda.so.1 build/tests/guardprog
    prog=("$ROOT/build/tests/guardprog" params 40)
    env=(LD_LIBRARY_PATH="$ROOT/build/fakecuda")
fi
echo
echo "\$ ${prog[*]}"
t0=$(date +%s.%N)
env "${env[@]}" "${prog[@]}" >"$out/plain"
t1=$(date +%s.%N)
echo "\$ GRAPHSHIM_LOG=info LD_PRELOAD=build/libgraphshim.so ${prog[*]}"
env "${env[@]}" GRAPHSHIM_LOG=info LD_PRELOAD="$LIB" "${prog[@]}" >"$out/shim" 2>"$out/report"
t2=$(date +%s.%N)
cat "$out/report"
echo
if cmp -s "$out/plain" "$out/shim"; then
    echo "outputs with and without graphshim: identical ($(wc -l <"$out/plain") lines)"
else
    echo "outputs with and without graphshim DIFFER:"
    diff "$out/plain" "$out/shim" | head -20
    exit 1
fi
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "wall time: %.3f s without, %.3f s with graphshim\n", b - a, c - b }'
