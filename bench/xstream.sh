#!/usr/bin/env bash
# xstream.sh: steps that span two streams (a fork by an event, a join back), on a
# GPU, in three parts, each skipped with its variable set to 0:
#   PROBE    bench/xstream_probe.cu: the rules of a capture across streams on this
#            driver, each beside the fake driver's answer (OUT/probe.log)
#   SAMPLES  samples/gpu-test.sh two_branch copy_overlap: with and without
#            graphshim, compared bit for bit (OUT/gpu-test/summary.txt)
#   BENCH    bench/xstream.cu for each KERNEL_NS (GPU ns a kernel, default
#            "1000 4000") and SYNC_EVERY (default "1 10"): in one process with
#            graphshim preloaded, eager (graphshim paused), graphshim and a
#            hand-written graph of the step (its fork and join captured once),
#            then a process without graphshim (eager, eager again, the graph);
#            a row per setting, medians over REPS (7) of ITERS (2000) steps
#            (OUT/bench.txt; graphshim's reports OUT/report.K.S.json)
#
#   make all && OUT=/tmp/xs bash bench/xstream.sh         (make bench-xstream)
#
# Exits 1 where a part failed: the probe did not run, a sample failed, or the
# bench's checksums disagree.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/xstream}
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
ARCH=${NVCC_ARCH:--arch=native}
mkdir -p "$OUT" "$BUILD/bench"
OUT=$(cd "$OUT" && pwd)
SHIM=$PWD/$BUILD/libgraphshim.so
[ -f "$SHIM" ] || { echo "xstream: no $SHIM: make all first" >&2; exit 1; }
bad=0
echo "xstream: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); logs in $OUT"

if [ "${PROBE:-1}" != 0 ]; then
    if $NVCC -O2 $ARCH -o "$BUILD/bench/xstream_probe" bench/xstream_probe.cu -lcuda -lpthread >"$OUT/probe.build" 2>&1 &&
        timeout 120 "$BUILD/bench/xstream_probe" >"$OUT/probe.log" 2>&1; then
        cat "$OUT/probe.log"
    else
        echo "xstream: the probe failed:"; tail -5 "$OUT/probe.build" "$OUT/probe.log" 2>/dev/null; bad=1
    fi
fi

if [ "${SAMPLES:-1}" != 0 ]; then
    B=$PWD/$BUILD
    if make -s -C samples -j4 BUILD="$B" NVCC_ARCH="$ARCH" "$B/samples/two_branch.static" "$B/samples/two_branch.shared" \
        "$B/samples/copy_overlap.static" "$B/samples/copy_overlap.shared" >"$OUT/samples.build" 2>&1; then
        # gpu-test keeps the caller's GRAPHSHIM_* from its runs: the knob goes by GS_SHIM_ENV
        OUT=$OUT/gpu-test GS_BUILD=$B GS_NO_BUILD=1 GS_SHIM_ENV="GRAPHSHIM_XSTREAM=${GRAPHSHIM_XSTREAM:-0}" \
            bash samples/gpu-test.sh two_branch copy_overlap >"$OUT/samples.log" 2>&1 || bad=1
        sed -n '/^sample /,$p' "$OUT/gpu-test/summary.txt" 2>/dev/null || { tail -20 "$OUT/samples.log"; bad=1; }
    else
        echo "xstream: building the samples failed:"; tail -20 "$OUT/samples.build"; bad=1
    fi
fi

# row K S: one setting, with and without graphshim
row() {
    local k=$1 s=$2 w=$OUT/run.$1.$2
    env KERNEL_NS="$k" SYNC_EVERY="$s" LD_PRELOAD="$SHIM" GRAPHSHIM_REPORT="$OUT/report.$k.$s.json" \
        "$BUILD/bench/xstream" ${ITERS:-2000} ${REPS:-7} >"$w.shim" 2>>"$OUT/bench.err" || { echo "$k $s: failed"; bad=1; return; }
    env KERNEL_NS="$k" SYNC_EVERY="$s" "$BUILD/bench/xstream" ${ITERS:-2000} ${REPS:-7} >"$w.plain" 2>>"$OUT/bench.err" ||
        { echo "$k $s: failed"; bad=1; return; }
    grep '^checksum' "$w.shim" "$w.plain" | awk '{print $2}' >>"$OUT/sums"
    v() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
    printf "%-9s %5s %9s %9s %9s %11s %12s %9s %9s %11s\n" "$k" "$s" "$(v us_eager "$w.shim")" "$(v us_shim "$w.shim")" \
        "$(v us_graph "$w.shim")" "$(v eager/shim "$w.shim")" "$(v eager/graph "$w.shim")" "$(v us_eager "$w.plain")" \
        "$(v us_graph "$w.plain")" "$(v eager/shim "$w.plain")"
}
if [ "${BENCH:-1}" != 0 ]; then
    if $NVCC -O2 $ARCH -o "$BUILD/bench/xstream" bench/xstream.cu >"$OUT/bench.build" 2>&1; then
        : >"$OUT/sums"
        {
            echo "xstream bench: us a step (median of ${REPS:-7}), one process with graphshim (eager paused, active, hand graph),"
            echo "one without (eager, hand graph; null: eager / eager again, the method's noise); > 1: faster than eager"
            printf "%-9s %5s %9s %9s %9s %11s %12s %9s %9s %11s\n" kernel_ns sync eager-us shim-us graph-us eager/shim \
                eager/graph plain-us pgraph-us null
            for k in ${KERNEL_NS:-1000 4000}; do
                for s in ${SYNC_EVERY:-1 10}; do row "$k" "$s"; done
            done
            echo "checksums: $(sort -u "$OUT/sums" | wc -l) distinct (1 expected)"
        } | tee "$OUT/bench.txt"
        [ "$(sort -u "$OUT/sums" | wc -l)" = 1 ] || bad=1
    else
        echo "xstream: building the bench failed:"; tail -20 "$OUT/bench.build"; bad=1
    fi
fi
exit $bad
