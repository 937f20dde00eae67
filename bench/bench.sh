#!/usr/bin/env bash
# bench.sh: graphshim side by side with eager and hand-written graphs (make bench).
#
# For each workload, in one invocation and alternating over ROUNDS rounds:
#   eager      the program as written, no shim
#   graphshim  the same program with libgraphshim.so preloaded
#   graph      the same work as a hand-written CUDA graph, no shim
# Each run prints its median time per iteration; the table shows the median over
# rounds, the spread (min-max over rounds) of eager and graphshim, and two ratios
# of medians: speedup of graphshim over eager, and graphshim time over hand-graph
# time (1.00 is the limit).  A ratio means something only where the spreads do
# not overlap: the column spreads says faster or SLOWER where graphshim's spread
# lies wholly below or above eager's, overlap otherwise.  The column paired is
# the median over rounds of eager / graphshim within each round, run back to
# back: the host's speed drifts between rounds (2x on the device hosts), much
# less within one.  Checksums must agree between modes; a row whose eager or
# graphshim runs gave no time or checksum says no-result in same-output, and
# bench.sh then ends with status 1 (the runs' errors are in bench.err).  For tiny and large20 a
# fourth run each round, split, launches the hand graph in the pieces graphshim's
# default early chunks cut (ops 0-7, 8-15, 16-31, 32-63, ...), back to back: the
# column split/graph is what chunking alone costs the GPU, graphshim's floor where
# it chunks ("-" where there are no pieces).
# With AB=N, each bench program runs N more pairs of repetitions, graphshim
# paused (gs_pause) in one of each pair: the column in-proc is the median over
# rounds of each graphshim run's median paused / active ratio (the engine's own
# cost, measured where the host's level does not move between processes; above
# 1.00 graphshim is faster), the column null the same ratio in the eager runs,
# where both halves run alike: the method's noise (the graph runs do the same
# extra repetitions, so that every checksum covers the same work).
# SWEEP=BENCH_PAUSED=1 adds a row of processes with graphshim loaded and paused
# throughout (its in-proc column: both halves paused, another null).
# Also: graphshim's own host cost per launch (stubbed driver) and per real launch.
#
# Environment: ROUNDS (5; a whole run takes about 11 minutes on an H100: split it
# with ONLY where one call is limited to 10), ONLY (a regex of workload names to run), SHIM_ENV (one
# extra setting of the graphshim runs, e.g. GRAPHSHIM_CHUNK_OPS=8), SWEEP (more such
# settings, space-separated: one more graphshim row each, measured in the same
# rounds; a setting of several variables joins them with commas), OUT (where to write bench.txt; default build/bench),
# AB (pairs of paused and active repetitions, above), SKIP_TORCH=1, COST=0 (leave out the host-cost rows at the end), NVCC_ARCH (-arch=native), BENCH_CPUS (run every program under
# `taskset -c BENCH_CPUS`, e.g. 2-5, for steadier host timings).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}/bench
OUT=${OUT:-$B}
mkdir -p "$B" "$OUT"
ROUNDS=${ROUNDS:-5}
[ -z "${AB:-}" ] || export BENCH_AB=$AB
SHIM=$PWD/${BUILD:-build}/libgraphshim.so
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
$NVCC -O2 ${NVCC_ARCH:--arch=native} -o "$B/bench" bench/bench.cu -lcublas || exit 1
[ "${COST:-1}" = 0 ] || make -s shim-cost >/dev/null || exit 1
# Rows with a run that gave no time or checksum: they say no-result, never yes.
noresult=0

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) print a[int((NR+1)/2)]; else print "nan" }'; }
spread() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) printf "%.1f-%.1f\n", a[1], a[NR]; else print "-" }'; }
field() { awk -v k="$1" '$1 == k { print $2 }'; }

# run_workload NAME ITERS CMD...: one row per graphshim setting (the defaults, then
# each of SWEEP), eager and hand graph measured once per round beside them.
run_workload() {
    local name=$1 iters=$2; shift 2
    if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then return; fi
    local settings=("${SHIM_ENV:-}")
    for v in ${SWEEP:-}; do settings+=("$v"); done
    local te="" tg="" tp="" ce cg cp="" o i er sr ta="" missing=""
    local -a ts cs ps tab miss
    for r in $(seq "$ROUNDS"); do
        o=$("$@" eager "$iters" 2>>"$OUT/bench.err"); er=$(echo "$o" | field us_per_iter); te+="$er "; ce=$(echo "$o" | field checksum)
        { [ -n "$er" ] && [ -n "$ce" ]; } || missing=eager
        ta+="$(echo "$o" | field ab_ratio) "
        echo "raw $name|eager|round $r|$(echo "$o" | field us_per_iter)|host $(echo "$o" | field host_us_per_iter)|reps $(echo "$o" | sed -n 's/^us_reps //p')|ab $(echo "$o" | sed -n 's/^ab_reps //p')" >>"$OUT/bench.err"
        for i in "${!settings[@]}"; do
            o=$(if [ -n "${settings[i]}" ]; then IFS=, read -ra kv <<<"${settings[i]}" && export "${kv[@]}"; fi
                LD_PRELOAD=$SHIM GRAPHSHIM_REPORT="$OUT/report.$name.$i.json" "$@" eager "$iters" 2>>"$OUT/bench.err")
            sr=$(echo "$o" | field us_per_iter); ts[i]+="$sr "; cs[i]=$(echo "$o" | field checksum)
            { [ -n "$sr" ] && [ -n "${cs[i]}" ]; } || miss[i]=graphshim
            ps[i]+="$(awk -v e="$er" -v s="$sr" 'BEGIN { if (e + 0 > 0 && s + 0 > 0) printf "%.4f", e / s }') "
            tab[i]+="$(echo "$o" | field ab_ratio) "
            echo "raw $name|${settings[i]:-default}|round $r|$(echo "$o" | field us_per_iter)|host $(echo "$o" | field host_us_per_iter)|reps $(echo "$o" | sed -n 's/^us_reps //p')|ab $(echo "$o" | sed -n 's/^ab_reps //p')" >>"$OUT/bench.err"
        done
        o=$("$@" graph "$iters" 2>>"$OUT/bench.err"); tg+="$(echo "$o" | field us_per_iter) "; cg=$(echo "$o" | field checksum)
        echo "raw $name|graph|round $r|$(echo "$o" | field us_per_iter)|host $(echo "$o" | field host_us_per_iter)" >>"$OUT/bench.err"
        if [[ $name =~ ^(tiny[0-9]+|large20)$ ]]; then
            o=$("$@" split "$iters" 2>>"$OUT/bench.err"); tp+="$(echo "$o" | field us_per_iter) "; cp=$(echo "$o" | field checksum)
            echo "raw $name|split|round $r|$(echo "$o" | field us_per_iter)|host $(echo "$o" | field host_us_per_iter)" >>"$OUT/bench.err"
        fi
    done
    local e g s same hit label es ss p sp ab null
    e=$(echo "$te" | median); g=$(echo "$tg" | median); es=$(echo "$te" | spread); sp=$(echo "$tp" | median)
    null=$(echo "$ta" | median)
    for i in "${!settings[@]}"; do
        s=$(echo "${ts[i]}" | median); ss=$(echo "${ts[i]}" | spread); p=$(echo "${ps[i]}" | median)
        ab=$(echo "${tab[i]:-}" | median)
        same=yes
        [ "$ce" = "${cs[i]}" ] || same=NO
        if [ -n "$missing${miss[i]:-}" ]; then
            same="no-result(${missing:-${miss[i]}}; $OUT/bench.err)"
            noresult=$((noresult + 1))
        fi
        { [ "$cg" = "$ce" ] || [ "$g" = nan ]; } || same="${same}/graph-differs"
        { [ -z "$cp" ] || [ "$cp" = "$ce" ] || [ "$sp" = nan ]; } || same="${same}/split-differs"
        hit=$(python3 -c "import json;t=json.load(open('$OUT/report.$name.$i.json'))['totals'];print('%.2f %d' % (t['hit_rate'], t['chunks']))" 2>/dev/null || echo "? ?")
        label=$name
        [ -z "${settings[i]}" ] || label="$name ${settings[i]#GRAPHSHIM_}"
        awk -v n="$label" -v e="$e" -v s="$s" -v g="$g" -v same="$same" -v hit="$hit" -v es="$es" -v ss="$ss" -v p="$p" -v sp="$sp" -v ab="$ab" -v null="$null" 'BEGIN {
            r1 = (s > 0) ? e / s : 0
            if (g == "nan") r2 = "-"; else r2 = sprintf("%.2f", s / g)
            if (g == "nan" || sp == "nan" || g + 0 <= 0) r3 = "-"; else r3 = sprintf("%.2f", sp / g)
            split(hit, h, " ")
            # faster or slower than eager only where the spreads do not overlap
            split(es, a, "-"); split(ss, b, "-")
            v = (b[2] + 0 < a[1] + 0) ? "faster" : (b[1] + 0 > a[2] + 0) ? "SLOWER" : "overlap"
            ab = (ab == "nan") ? "-" : sprintf("%.3f", ab); null = (null == "nan") ? "-" : sprintf("%.3f", null)
            printf "%-30s %10.1f %15s %10.1f %15s %10s %8.2fx %8s %7.2fx %10s %11s %6s %6s %7s %6s %s\n", n, e, es, s, ss, g, r1, v, p, r2, r3, h[1], h[2], ab, null, same }' | tee -a "$OUT/bench.txt"
    done
    mkdir -p "$B/reports" && mv "$OUT"/report."$name".*.json "$B/reports/" 2>/dev/null
}

pin() { if [ -n "${BENCH_CPUS:-}" ]; then taskset -c "$BENCH_CPUS" "$@"; else "$@"; fi; }
bench() { pin "$B/bench" "$@"; }
torch_mlp() { local d=$1 l=$2 b=$3 mode=$4 iters=$5; pin python3 bench/torch_mlp_bench.py --d "$d" --layers "$l" --batch "$b" --mode "$mode" --iters "$iters"; }
torch_adamw() { local d=$1 l=$2 b=$3 mode=$4 iters=$5; pin python3 bench/torch_adamw_bench.py --d "$d" --layers "$l" --batch "$b" --mode "$mode" --iters "$iters"; }

: >"$OUT/bench.txt"
rm -rf "$B/reports"
{
    echo "graphshim benchmark: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), CUDA $($NVCC --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(date -u +%Y-%m-%d)"
    echo "host: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs"
    echo "median us per iteration over $ROUNDS rounds (each the median of its own repetitions), and min-max over the rounds"
    printf "%-30s %10s %15s %10s %15s %10s %9s %8s %8s %10s %11s %6s %6s %7s %6s %s\n" workload eager eager-spread graphshim shim-spread graph speedup spreads paired shim/graph split/graph hit chunks in-proc null same-output
} | tee -a "$OUT/bench.txt"
for k in 1 5 20 100; do run_workload "tiny$k" 500 bench "tiny$k"; done
run_workload large20 100 bench large20
run_workload norepeat 500 bench norepeat
run_workload rare 500 bench rare
run_workload slowhost 100 bench slowhost
run_workload balanced 100 bench balanced
run_workload h2d_pinned 500 bench h2d_pinned
run_workload h2d_pageable 500 bench h2d_pageable
run_workload cublas 500 bench cublas
run_workload gemm4096 20 bench gemm4096 # GPU-bound: about 10 ms of GPU time an iteration
run_workload loop1 50 bench loop1     # 1000 launches an iteration
run_workload body5 50 bench body5     # 1000 launches an iteration
run_workload loopvar 50 bench loopvar # 1000 to 1999 launches, never the same count twice
run_workload scalars 500 bench scalars
run_workload rotate 500 bench rotate
run_workload copies 500 bench copies # 10 device copies from rotating sources, 10 folds
run_workload large32k 50 bench large32k # 1000 launches of a 32,000-byte parameter an iteration
if [ "${SKIP_TORCH:-0}" != 1 ]; then
    run_workload "torch d256 L8 B1" 200 torch_mlp 256 8 1
    run_workload "torch d1024 L12 B8" 100 torch_mlp 1024 12 8
    # graph: capturable AdamW, whose checksum may differ (torch_adamw_bench.py)
    run_workload "torch adamw d256 L8 B32" 100 torch_adamw 256 8 32
fi
tar czf "$OUT/reports.tar.gz" -C "$B" reports && rm -rf "$B/reports" # the graphshim runs' reports
if [ "${COST:-1}" != 0 ]; then
    echo | tee -a "$OUT/bench.txt"
    "${BUILD:-build}/bench/shim_cost" | tee -a "$OUT/bench.txt"
    echo | tee -a "$OUT/bench.txt"
    ROUNDS=5 bash bench/launch_cost.sh 2>>"$OUT/bench.err" | tee -a "$OUT/bench.txt"
fi
if [ "$noresult" != 0 ]; then
    echo "bench: $noresult rows had runs that gave no result; their errors are in $OUT/bench.err" | tee -a "$OUT/bench.txt"
    exit 1
fi
