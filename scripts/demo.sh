#!/usr/bin/env bash
# demo.sh: graphshim on a sample, with its report (make demo).
#
# With a GPU: samples/tiny_stream (200 iterations of 21 tiny kernels and a sync)
# without and with graphshim, timed, outputs compared, and graphshim's report.
# Without a GPU: a small driver-API program (20 kernels and a synchronize, 50
# times) over the fake CUDA driver in tests/fakecuda, a CPU stand-in; the report
# shows what graphshim did, and the fake's log the driver calls with and
# without it.  No times: the fake's launches cost nothing, so there is nothing
# for graphs to save there.
#
# Every command is printed as it runs, from the repository's root, so it can be
# pasted there as it is (BUILD: the build directory, as for make; default build).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${BUILD:-build}
case $B in /*) ABS_B=$B ;; *) ABS_B=$ROOT/$B ;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "graphshim demo on $(nvidia-smi -L | head -1)"
    make -s -C samples BUILD="$ABS_B" "$ABS_B/samples/tiny_stream.static"
    prog=("$B/samples/tiny_stream.static" 2000)
    env=()
else
    echo "graphshim demo: no GPU on this machine, so the program runs over the fake CUDA driver"
    echo "(tests/fakecuda, a CPU stand-in for libcuda.so.1): the report below is real; the fake's launches"
    echo "cost nothing, so what it shows is the driver calls graphs save, counted in the fake's log, not time."
    make -s BUILD="$B" "$B/fakecuda/libcuda.so.1" "$B/tests/guardprog"
    prog=("$B/tests/guardprog" twenty 50)
    env=(LD_LIBRARY_PATH="$B/fakecuda")
    fake=1
fi
plain=(${env[@]+"${env[@]}"} ${fake:+FAKECUDA_LOG="$out/plain.calls"} "${prog[@]}")
shim=(${env[@]+"${env[@]}"} ${fake:+FAKECUDA_LOG="$out/shim.calls"} GRAPHSHIM_LOG=info LD_PRELOAD="$B/libgraphshim.so"
      "${prog[@]}")
echo
echo "\$ ${plain[*]}"
t0=$(date +%s.%N)
env "${plain[@]}" >"$out/plain"
t1=$(date +%s.%N)
echo "\$ ${shim[*]}"
env "${shim[@]}" >"$out/shim" 2>"$out/report"
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
if [ -n "${fake:-}" ]; then
    echo "driver calls in the fake driver's log: $(wc -l <"$out/plain.calls") without, $(wc -l <"$out/shim.calls") with graphshim"
    echo "(the report's times, eager, replay and saved, are the fake's: over the fake a launch costs nothing,"
    echo "so they are noise, not a gain; on a GPU each eager launch costs the host 3.5-4 us, docs/bench.md)"
else
    awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "wall time: %.3f s without, %.3f s with graphshim\n", b - a, c - b }'
fi
