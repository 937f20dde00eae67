#!/usr/bin/env bash
# bench.sh: graphshim side by side with eager and hand-written graphs (make bench).
#
# For each workload, in one invocation and alternating over ROUNDS rounds:
#   eager      the program as written, no shim
#   graphshim  the same program with libgraphshim.so preloaded
#   graph      the same work as a hand-written CUDA graph, no shim
# Each run prints its median time per iteration; the table shows the median over
# rounds and two ratios: speedup of graphshim over eager, and graphshim time over
# hand-graph time (1.00 is the limit).  Checksums must agree between modes.
# Also: graphshim's own host cost per launch (stubbed driver) and per real launch.
#
# Environment: ROUNDS (3), ONLY (a regex of workload names to run), SHIM_ENV (extra settings of the graphshim runs), OUT (where to write bench.txt; default build/bench),
# SKIP_TORCH=1, NVCC_ARCH (-arch=native).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}/bench
OUT=${OUT:-$B}
mkdir -p "$B" "$OUT"
ROUNDS=${ROUNDS:-3}
SHIM=$PWD/${BUILD:-build}/libgraphshim.so
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
$NVCC -O2 ${NVCC_ARCH:--arch=native} -o "$B/bench" bench/bench.cu -lcublas || exit 1
make -s shim-cost >/dev/null || exit 1

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) print a[int((NR+1)/2)]; else print "nan" }'; }
field() { awk -v k="$1" '$1 == k { print $2 }'; }

# run_workload NAME ITERS CMD...: fills T_eager T_shim T_graph, C_* checksums
run_workload() {
    local name=$1 iters=$2; shift 2
    if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then return; fi
    local te="" ts="" tg="" ce cs cg o
    for r in $(seq "$ROUNDS"); do
        o=$("$@" eager "$iters" 2>>"$OUT/bench.err"); te+="$(echo "$o" | field us_per_iter) "; ce=$(echo "$o" | field checksum)
        o=$(if [ -n "${SHIM_ENV:-}" ]; then export "${SHIM_ENV?}"; fi
            LD_PRELOAD=$SHIM GRAPHSHIM_REPORT="$OUT/report.$name.json" "$@" eager "$iters" 2>>"$OUT/bench.err")
        ts+="$(echo "$o" | field us_per_iter) "; cs=$(echo "$o" | field checksum)
        o=$("$@" graph "$iters" 2>>"$OUT/bench.err"); tg+="$(echo "$o" | field us_per_iter) "; cg=$(echo "$o" | field checksum)
    done
    local e s g
    e=$(echo "$te" | median); s=$(echo "$ts" | median); g=$(echo "$tg" | median)
    local same=yes
    [ "$ce" = "$cs" ] || same=NO
    { [ "$cg" = "$ce" ] || [ "$g" = nan ]; } || same="${same}/graph-differs"
    local hit
    hit=$(python3 -c "import json;t=json.load(open('$OUT/report.$name.json'))['totals'];print('%.2f' % t['hit_rate'])" 2>/dev/null || echo "?")
    awk -v n="$name" -v e="$e" -v s="$s" -v g="$g" -v same="$same" -v hit="$hit" 'BEGIN {
        r1 = (s > 0) ? e / s : 0
        if (g == "nan") r2 = "-"; else r2 = sprintf("%.2f", s / g)
        printf "%-22s %10.1f %10.1f %10s %8.2fx %10s %6s %s\n", n, e, s, g, r1, r2, hit, same }' | tee -a "$OUT/bench.txt"
}

bench() { "$B/bench" "$@"; }
torch_mlp() { local d=$1 l=$2 b=$3 mode=$4 iters=$5; python3 bench/torch_mlp_bench.py --d "$d" --layers "$l" --batch "$b" --mode "$mode" --iters "$iters"; }

: >"$OUT/bench.txt"
{
    echo "graphshim benchmark: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), CUDA $($NVCC --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(date -u +%Y-%m-%d)"
    echo "median us per iteration over $ROUNDS rounds (each the median of its own repetitions)"
    printf "%-22s %10s %10s %10s %9s %10s %6s %s\n" workload eager graphshim graph speedup shim/graph hit same-output
} | tee -a "$OUT/bench.txt"
for k in 1 5 20 100; do run_workload "tiny$k" 500 bench "tiny$k"; done
run_workload large20 100 bench large20
run_workload norepeat 500 bench norepeat
run_workload h2d_pinned 500 bench h2d_pinned
run_workload h2d_pageable 500 bench h2d_pageable
run_workload cublas 500 bench cublas
if [ "${SKIP_TORCH:-0}" != 1 ]; then
    run_workload "torch d256 L8 B1" 200 torch_mlp 256 8 1
    run_workload "torch d1024 L12 B8" 100 torch_mlp 1024 12 8
    SHIM_ENV=GRAPHSHIM_CHUNK_US=50 run_workload "torch d256 chunk=50" 200 torch_mlp 256 8 1
    SHIM_ENV=GRAPHSHIM_CHUNK_US=200 run_workload "torch d256 chunk=200" 200 torch_mlp 256 8 1
fi
echo | tee -a "$OUT/bench.txt"
"${BUILD:-build}/bench/shim_cost" | tee -a "$OUT/bench.txt"
echo | tee -a "$OUT/bench.txt"
ROUNDS=5 bash bench/launch_cost.sh 2>>"$OUT/bench.err" | tee -a "$OUT/bench.txt"
