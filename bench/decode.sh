#!/usr/bin/env bash
# decode.sh: an LLM engine's decode loop, eager against graphshim against the
# engine's own graphs (make bench-decode; issue 50).
#
# Builds samples/decode_loop.cu (static runtime) and runs it at two sizes, each
# 22 layers, hidden 256, 355 kernels a token, the host working 1 us before each
# launch, positions from 200 (the arguments change where the position crosses
# a multiple of 256: three times in a launch-bound run, once in a GPU-bound one):
#   launch  tiny kernels (a few us of GPU time each): host-bound
#   gpu     every kernel at least GPU_US (20) us on the GPU: GPU-bound
# Rows of each size, measured in turn in each of ROUNDS rounds:
#   eager       --mode eager, no shim
#   graphshim   --mode eager with libgraphshim.so preloaded, default knobs
#   chunk1024   the same with GRAPHSHIM_CHUNK_MAX=1024
#   own-graphs  --mode graphs, no shim: the engine's graph a token
# Columns: tokens/s (median over rounds of each run's tokens/s over its timed
# tokens), spread (min-max over rounds), vs-graphs (the row's median tokens/s
# over own-graphs': graphshim/own graphs where the row is graphshim's), in-proc
# (median over rounds of each run's `ab: median paused/active`, block times of
# graphshim paused over active in one process, above 1: graphshim faster; in the
# eager and own-graphs rows graphshim is not loaded: the method's noise), and from
# the graphshim runs' reports the hit rate and the graphs launched a token
# (replays + chunks + body graphs over the tokens run while active).
# Then the prompt step (--mode prompt --steps P, 22 layers of 6 matrix products
# 512 x 1024 x 1024) with P = 3 and 5: eager against graphshim and against the
# library loaded but off, milliseconds for the P steps and for each step.
# Every run's checksum must equal the eager run's of the same size (all rounds):
# a mismatch, or a run without a result, fails the script (exit 1).
#
# Environment: ROUNDS (5), OUT (where decode.txt and logs/ go; default
# build/bench-decode), BUILD (build), NVCC_ARCH (-arch=native), GPU_US (20),
# LAUNCH_TOKENS (272), GPU_TOKENS (112), AB (pairs of blocks: 6 launch-bound, 4
# GPU-bound), PARTS (all, decode or prompt: which tables), PROMPT_ROUNDS
# (ROUNDS), SHIM_ENV (extra settings of the graphshim rows, comma-separated
# VAR=value), BENCH_CPUS (run every program under taskset -c BENCH_CPUS).
# Measured on an H200: 110 s with ROUNDS=5 (70 runs), the build included;
# PARTS=prompt with PROMPT_ROUNDS=16, 60-70 s (96 runs of about 0.7 s).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OUT=${OUT:-$BUILD/bench-decode}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
LOGS=$OUT/logs
rm -rf "$LOGS" # an earlier run's logs only
mkdir -p "$OUT" "$LOGS" || exit 2
TXT=$OUT/decode.txt
: >"$TXT"
ROUNDS=${ROUNDS:-5}
PROMPT_ROUNDS=${PROMPT_ROUNDS:-$ROUNDS}
PARTS=${PARTS:-all}
case $PARTS in all | decode | prompt) ;; *)
    echo "decode: PARTS is all, decode or prompt, not $PARTS" >&2
    exit 2
    ;;
esac
SHIM=$BUILD/libgraphshim.so
BIN=$BUILD/samples/decode_loop.static
GPU_US=${GPU_US:-20}
T0=$SECONDS

say() { echo "$*" | tee -a "$TXT"; }

if [ ! -f "$SHIM" ]; then
    say "decode: no $SHIM (build it first: make)"
    exit 1
fi
if ! make -C samples BUILD="$BUILD" NVCC_ARCH="${NVCC_ARCH:--arch=native}" "$BIN" >"$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"
    say "decode: building samples/decode_loop.cu failed (see $OUT/build.log)"
    exit 1
fi

pin() { if [ -n "${BENCH_CPUS:-}" ]; then taskset -c "$BENCH_CPUS" "$@"; else "$@"; fi; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) print a[int((NR+1)/2)]; else print "nan" }'; }
spread() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) printf "%.1f-%.1f\n", a[1], a[NR]; else print "-" }'; }
# column_medians: each column's median (median above) over the lines of stdin,
# "%.3f " each
column_medians() {
    local lines i k
    lines=$(cat)
    k=$(awk '{ if (NF > k) k = NF } END { print k + 0 }' <<<"$lines")
    for ((i = 1; i <= k; i++)); do
        printf '%.3f ' "$(awk -v i="$i" 'NF >= i { print $i }' <<<"$lines" | median)"
    done
}
# val KEY FILE: the value after "KEY " on the first line that starts with it
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2" 2>/dev/null; }
abratio() { sed -n 's/^ab: median paused\/active = //p' "$1" 2>/dev/null | head -1; }

extra=() # SHIM_ENV's settings
[ -z "${SHIM_ENV:-}" ] || IFS=, read -ra extra <<<"$SHIM_ENV"
bad=0 # runs without a result or with another checksum
fails=()

# one STEM CMD...: runs CMD, stdout into STEM.out, stderr into STEM.err and
# then a line `rc <exit status>` there; the caller reads the logs.
one() {
    local stem=$1
    shift
    pin "$@" >"$stem.out" 2>"$stem.err" </dev/null
    echo "rc $?" >>"$stem.err"
}

# checked STEM KEY WHAT: the run one() left in STEM gave a result (exit 0, a
# checksum, a KEY line) with the checksum of its table's first run (the
# caller's ref, set here by the first); else it is counted in bad, named WHAT
# in fails.  Sets the caller's c to the run's checksum.
checked() {
    local stem=$1 key=$2 what=$3
    c=$(val checksum "$stem.out")
    if [ "$(val rc "$stem.err")" != 0 ] || [ -z "$c" ] || [ -z "$(val "$key" "$stem.err")" ]; then
        bad=$((bad + 1))
        fails+=("$what: no result (exit $(val rc "$stem.err"); $stem.err)")
    elif [ -z "$ref" ]; then
        ref=$c
    elif [ "$c" != "$ref" ]; then
        bad=$((bad + 1))
        fails+=("$what: checksum $c, the first run's $ref")
    fi
}

# size NAME TOKENS AB ABTOKENS ARGS...: the four rows of one size.
size() {
    local name=$1 tokens=$2 ab=$3 abt=$4
    shift 4
    local -a common=("$BIN" --tokens "$tokens" --warmup 16 --ab "$ab" --ab-tokens "$abt" --check 8 "$@")
    local rows=(eager graphshim chunk1024 own-graphs)
    local -A tps abr hit gpt sum
    local r row stem ref="" c active=$((tokens + ab * abt))
    for r in $(seq "$ROUNDS"); do
        for row in "${rows[@]}"; do
            stem=$LOGS/$name.$row.$r
            case $row in
            eager) one "$stem" env -u LD_PRELOAD "${common[@]}" --mode eager ;;
            graphshim) one "$stem" env LD_PRELOAD="$SHIM" GRAPHSHIM_REPORT="$stem.report.json" "${extra[@]}" \
                "${common[@]}" --mode eager ;;
            chunk1024) one "$stem" env LD_PRELOAD="$SHIM" GRAPHSHIM_REPORT="$stem.report.json" "${extra[@]}" \
                GRAPHSHIM_CHUNK_MAX=1024 "${common[@]}" --mode eager ;;
            own-graphs) one "$stem" env -u LD_PRELOAD "${common[@]}" --mode graphs ;;
            esac
            checked "$stem" tokens_per_s "$name $row round $r"
            [ -n "$c" ] && sum[$row]+="$c "
            tps[$row]+="$(val tokens_per_s "$stem.err") "
            abr[$row]+="$(abratio "$stem.err") "
            if [ -f "$stem.report.json" ]; then
                read -r h g < <(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["totals"]
print("%.3f %.1f" % (t["hit_rate"], (t["replays"] + t["chunks"] + t.get("body_graphs", 0)) / float(sys.argv[2])))' \
                    "$stem.report.json" "$active" 2>/dev/null || echo "? ?")
                hit[$row]+="$h "
                gpt[$row]+="$g "
            fi
        done
    done
    local gm
    gm=$(echo "${tps[own-graphs]}" | median)
    for row in "${rows[@]}"; do
        local m s v a hh gg same=yes
        m=$(echo "${tps[$row]}" | median)
        s=$(echo "${tps[$row]}" | spread)
        a=$(echo "${abr[$row]}" | median)
        hh=$(echo "${hit[$row]:-}" | median)
        gg=$(echo "${gpt[$row]:-}" | median)
        [ "$(echo "${sum[$row]:-}" | tr ' ' '\n' | grep -v '^$' | sort -u | wc -l)" = 1 ] && [ "$(echo "${sum[$row]}" | awk '{print $1}')" = "$ref" ] || same=NO
        [ -n "${sum[$row]:-}" ] || same=no-result
        v=$(awk -v m="$m" -v g="$gm" 'BEGIN { if (m + 0 > 0 && g + 0 > 0) printf "%.3f", m / g; else print "-" }')
        printf '%-8s %-11s %10s %17s %9s %8s %6s %9s %s\n' "$name" "$row" "$m" "$s" "$v" "$a" \
            "${hh/nan/-}" "${gg/nan/-}" "$same" | tee -a "$TXT"
    done
}

# prompt P: eager, graphshim, and the library loaded but off (GRAPHSHIM=0: the
# shims' own cost), PROMPT_ROUNDS rounds, in turn, the order reversed every
# other round; milliseconds for the P steps.  Columns: each row's median and
# spread, shim/eager (the medians' ratio) and paired (the median over rounds of
# that round's graphshim over its eager run, with the rounds where graphshim
# took longer); then each row's median time of every step.
prompt() {
    local p=$1 r row stem c ref="" rows
    local -A ms sum steps
    local paired=""
    for r in $(seq "$PROMPT_ROUNDS"); do
        rows="eager graphshim off"
        [ $((r % 2)) = 0 ] && rows="off graphshim eager"
        for row in $rows; do
            stem=$LOGS/prompt$p.$row.$r
            case $row in
            eager) one "$stem" env -u LD_PRELOAD "$BIN" --mode prompt --steps "$p" ;;
            graphshim) one "$stem" env LD_PRELOAD="$SHIM" GRAPHSHIM_REPORT="$stem.report.json" "${extra[@]}" "$BIN" \
                --mode prompt --steps "$p" ;;
            off) one "$stem" env LD_PRELOAD="$SHIM" GRAPHSHIM=0 "$BIN" --mode prompt --steps "$p" ;;
            esac
            checked "$stem" prompt_ms "prompt P=$p $row round $r"
            ms[$row]+="$(val prompt_ms "$stem.err") "
            steps[$row]+="$(sed -n 's/^prompt_step_ms //p' "$stem.err" | head -1);"
        done
        paired+="$(awk -v e="$(val prompt_ms "$LOGS/prompt$p.eager.$r.err")" \
            -v g="$(val prompt_ms "$LOGS/prompt$p.graphshim.$r.err")" \
            'BEGIN { if (e + 0 > 0 && g + 0 > 0) printf "%.4f", g / e }') "
    done
    local e g o slower
    e=$(echo "${ms[eager]}" | median)
    g=$(echo "${ms[graphshim]}" | median)
    o=$(echo "${ms[off]}" | median)
    slower=$(echo "$paired" | tr ' ' '\n' | awk '$1 > 1 { n++ } END { print n + 0 }')
    printf '%-8s %10s %15s %12s %15s %10s %15s %10s %14s\n' "P=$p" "$e" "$(echo "${ms[eager]}" | spread)" "$g" \
        "$(echo "${ms[graphshim]}" | spread)" "$o" "$(echo "${ms[off]}" | spread)" \
        "$(awk -v e="$e" -v g="$g" 'BEGIN { if (e + 0 > 0 && g + 0 > 0) printf "%.4f", g / e; else print "-" }')" \
        "$(echo "$paired" | median) ($slower/$PROMPT_ROUNDS)" | tee -a "$TXT"
    for row in eager graphshim off; do
        # the median of each step's time over the rounds
        printf '  %-10s step ms: %s\n' "$row" "$(echo "${steps[$row]}" | tr ';' '\n' | column_medians)" |
            tee -a "$TXT"
    done
}

say "graphshim decode bench: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(date -u +%Y-%m-%dT%H:%M:%SZ), $ROUNDS rounds${SHIM_ENV:+, graphshim rows with $SHIM_ENV}"
say "host: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs"
say "decode: 22 layers, hidden 256, 355 kernels a token, host 1 us a kernel; launch: tiny kernels; gpu: each kernel >= $GPU_US us"
if [ "$PARTS" != prompt ]; then
    printf '%-8s %-11s %10s %17s %9s %8s %6s %9s %s\n' size row tokens/s spread vs-graphs in-proc hit graphs/tok \
        same-output | tee -a "$TXT"
    size launch "${LAUNCH_TOKENS:-272}" "${AB:-6}" 32 --gpu-us 0
    size gpu "${GPU_TOKENS:-112}" "${AB:-4}" 16 --gpu-us "$GPU_US"
    say ""
fi
[ "$PARTS" = decode ] || {
say "prompt step: 22 layers of 12 kernels, 6 of them products 512 x 1024 by 1024 x 1024 (265 kernels a step); ms for the P steps"
printf '%-8s %10s %15s %12s %15s %10s %15s %10s %14s\n' steps eager-ms spread graphshim-ms spread off-ms \
    spread shim/eager paired | tee -a "$TXT"
prompt 3
prompt 5
say ""
}
if [ "$bad" != 0 ]; then
    printf '%s\n' "${fails[@]}" | tee -a "$TXT"
    say "decode: FAIL: $bad runs without a result or with another checksum; logs in $LOGS ($((SECONDS - T0)) s)"
    exit 1
fi
say "decode: every checksum agrees; logs in $LOGS ($((SECONDS - T0)) s)"
