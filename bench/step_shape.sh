#!/usr/bin/env bash
# step_shape.sh: a JAX jit step's shape (bench/step_shape.cu: four
# cuLaunchKernelEx, two event records, a second stream's wait and host
# function, an event synchronize), eager against graphshim against a
# hand-written graph, side by side; on a GPU.
#
#   bash bench/step_shape.sh                  # make all (and make test-lib) first
#   KERNEL_NS="2000 4000 8000" bash bench/step_shape.sh
#
# For each kernel length in KERNEL_NS (GPU ns a kernel; default "1000 4000"),
# ROUNDS (5) rounds of: eager without graphshim, eager with it, eager with the
# test build and rule gain-step off (GRAPHSHIM_TEST_DROP_RULE: what graphshim did
# before it judged such steps; only where BUILD/test/libgraphshim.so exists),
# the hand-written graph, and that graph launched with no node set (graph-same:
# other results; against graph, what the sets and a changed executable's launch
# cost); each run prints its median us a step, and a row gives the medians over
# rounds and the ratios eager/graphshim, eager/graphshim-without-the-rule and
# eager/graph (> 1: faster than eager).  The checksums of all but graph-same
# must agree.  HOST_NS (2000) is the host's own work before each launch
# (HOST_NS=0: no late start of held work).  Reports in OUT
# (build/bench-steps/shape).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/bench-steps/shape}
ROUNDS=${ROUNDS:-5}
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
mkdir -p "$OUT"
$NVCC -O2 ${NVCC_ARCH:--arch=native} -o "$OUT/step_shape" bench/step_shape.cu -lcuda || exit 1
SHIM=$PWD/$BUILD/libgraphshim.so
TEST=$PWD/$BUILD/test/libgraphshim.so
[ -f "$SHIM" ] || { echo "no $SHIM: make all first" >&2; exit 1; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) print a[int((NR+1)/2)]; else print "-" }'; }
# one MODE ENV...: the run's median us a step; its checksum line into $OUT/sums
# (graph-same's into $OUT/sums.same: other results)
one() {
    local mode=$1 sums=$OUT/sums; shift
    [ "$mode" = graph-same ] && sums=$OUT/sums.same
    env "$@" "$OUT/step_shape" "$mode" >"$OUT/run.txt" 2>>"$OUT/err.txt" || { echo -; return; }
    grep '^checksum' "$OUT/run.txt" >>"$sums"
    awk '$1 == "us_per_iter" { print $2 }' "$OUT/run.txt"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else printf "-" }'; }
echo "step_shape: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), HOST_NS ${HOST_NS:-2000}, $ROUNDS rounds"
printf "%-10s %9s %9s %9s %9s %9s %10s %12s %11s\n" kernel_ns eager-us shim-us norule-us graph-us same-us \
    eager/shim eager/norule eager/graph
: >"$OUT/sums"
: >"$OUT/sums.same"
for k in ${KERNEL_NS:-1000 4000}; do
    e="" s="" n="" g="" u=""
    for r in $(seq "$ROUNDS"); do
        e+=" $(one eager KERNEL_NS="$k")"
        s+=" $(one eager KERNEL_NS="$k" LD_PRELOAD="$SHIM" GRAPHSHIM_REPORT="$OUT/report.$k.$r.txt")"
        [ -f "$TEST" ] && n+=" $(one eager KERNEL_NS="$k" LD_PRELOAD="$TEST" GRAPHSHIM_TEST_DROP_RULE=gain-step)"
        g+=" $(one graph KERNEL_NS="$k")"
        u+=" $(one graph-same KERNEL_NS="$k")"
    done
    me=$(echo "$e" | median) ms=$(echo "$s" | median) mn=$(echo "$n" | median)
    mg=$(echo "$g" | median) mu=$(echo "$u" | median)
    printf "%-10s %9s %9s %9s %9s %9s %10s %12s %11s\n" "$k" "$me" "$ms" "$mn" "$mg" "$mu" \
        "$(ratio "$me" "$ms")" "$(ratio "$me" "$mn")" "$(ratio "$me" "$mg")"
done
echo "checksums: $(sort -u "$OUT/sums" | wc -l) distinct (1 expected): $(sort -u "$OUT/sums" | paste -sd'|')"
echo "graphshim's reports: $OUT/report.K.R.txt (the step's sequence: ended by event, gain ...)"
