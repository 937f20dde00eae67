#!/usr/bin/env bash
# apps.sh: real applications, eager against graphshim, each measured inside one
# process (make bench-apps; make bench runs it too unless APPS=0).
#
# Each script of bench/apps/ (PyTorch training and inference, generation with a
# growing KV cache, JAX, CuPy; models built from code, nothing downloaded) runs
# once with libgraphshim.so preloaded.  Inside that process it warms up with
# graphshim active, then times PAIRS pairs of blocks in ABBA order, graphshim
# paused (gs_pause: eager) in A and resumed (gs_resume) in B, and where one can
# be written a hand-written graph after them (bench/apps/common.py has the
# protocol, bench/apps/README.md the columns).  One row per app:
#   ratio min max  eager time / graphshim time over the pairs (> 1: faster)
#   pairs          pairs of blocks
#   eager-ms shim-ms  medians of the blocks' ms per step (gpt_decode: per token)
#   hand-ms eager/hand  the hand-written graph's ms per step, eager's over it
#   half1 half2    median ratio of the first and of the second half of the pairs
# and below it what graphshim did: the engine's ops during the paused blocks
# (must be 0) and ops replayed during the resumed ones (gs_stats), the report's
# totals (GRAPHSHIM_REPORT, one file per process), the checksum of the final
# state, and with CHECK the checksum of a run without graphshim.  With the
# profile build (make profile; BUILD=build/prof) also where the eager time goes
# (ceiling(), below): ops a step, the eager cost of a launch, and the ratio if
# graphshim removed them at no cost.
#
# Jobs of several GPUs (ddp_train, tp_train, fsdp_train, pipe_train: data,
# tensor, fully-sharded and pipeline parallel training) run the same way under
# torchrun, a process a GPU, where the machine has APPS_NPROC (2) GPUs or more:
# every rank pauses and resumes graphshim at the same step, the ranks meet at a
# barrier before each block, and a block's time is the slowest rank's.
#
# Environment: ONLY (a regex of app names), PAIRS (40), CHECK (1: run every app a
# second time without LD_PRELOAD and compare checksums, its ratio being a null
# measurement; a regex: only those apps), APPS_SCALE (multiplies the steps per
# block), APPS_SYNC (1: synchronize after every step; 0: only at block ends),
# APPS_SYNC_EVERY (N: after every Nth step; bench/steps.sh runs 1, 10, 100),
# APP_TIMEOUT (150 s per run), PYTHON (python3), BENCH_CPUS (run under
# taskset -c BENCH_CPUS), OUT (where apps.txt and the logs go; default
# build/bench-apps), BUILD (build).  GRAPHSHIM_* settings pass through.
# About 2 minutes on an H100, 3 on the H200 (each app 8-30 s, much of it
# imports and set-up); twice that with CHECK=1.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/bench-apps}
mkdir -p "$OUT"
case $BUILD in /*) SHIM=$BUILD/libgraphshim.so ;; *) SHIM=$PWD/$BUILD/libgraphshim.so ;; esac
PY=${PYTHON:-python3}
PAIRS=${PAIRS:-40}
TMO=${APP_TIMEOUT:-150}
LIST="mlp_adamw transformer_train lstm_train two_branch copy_stream cnn_amp_train resnet_infer encoder_infer gpt_decode jax_train jax_step cupy_elementwise cupy_fft"
JOBS="ddp_train tp_train fsdp_train pipe_train"
NPROC=${APPS_NPROC:-2}
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
TXT=$OUT/apps.txt

say() { echo "$*" | tee -a "$TXT"; }
pin() { if [ -n "${BENCH_CPUS:-}" ]; then taskset -c "$BENCH_CPUS" "$@"; else "$@"; fi; }
# field KEY FILE: the rest of the first line of FILE that starts with KEY
field() { [ -f "$2" ] && awk -v k="$1" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }' "$2"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) print a[int((NR+1)/2)]; else print "-" }'; }

# run_one NAME SUFFIX ENV-ARGS...: one run of bench/apps/NAME.py; stdout in
# $OUT/NAME.SUFFIX.log, stderr in $OUT/NAME.SUFFIX.err; returns its status.
# A job (JOBS) runs under torchrun, NPROC processes, NVLink multicast off.
run_one() {
    local name=$1 suf=$2; shift 2
    local -a cmd=("$PY" "bench/apps/$name.py")
    if [[ " $JOBS " == *" $name "* ]]; then
        cmd=(NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMP_NUM_THREADS=1
            "$PY" -m torch.distributed.run --standalone --nproc-per-node "$NPROC" "bench/apps/$name.py")
    fi
    pin timeout "$TMO" env "$@" "${cmd[@]}" --pairs "$PAIRS" \
        >"$OUT/$name.$suf.log" 2>"$OUT/$name.$suf.err"
}

# report NAME: the totals of the largest report NAME's processes wrote.
report() {
    python3 - "$OUT" "$1" <<'EOF'
import glob, json, sys
best = None
for f in glob.glob(f"{sys.argv[1]}/report.{sys.argv[2]}.*.json"):
    try:
        with open(f) as fh:
            d = json.load(fh)
    except Exception:
        continue
    t = dict(d.get("totals", {}))
    t["groups"] = sum(s.get("groups", 0) for s in d.get("streams", []) if isinstance(s, dict))
    if best is None or t.get("ops", 0) > best.get("ops", 0):
        best = t
if best is None:
    print("report: none written")
else:
    g = lambda k: best.get(k, "-")
    print(f"report: replays {g('replays')}, ops_replayed/ops {g('ops_replayed')}/{g('ops')}, "
          f"patched_launches {g('patched_launches')}, nodes_patched {g('nodes_patched')}, "
          f"recaptures {g('recaptures')}, groups across streams {g('groups')}")
    b = best.get("bails")
    if isinstance(b, dict) and b:
        top = sorted(b.items(), key=lambda kv: -kv[1] if isinstance(kv[1], int) else 0)[:4]
        print("    bails: " + ", ".join(f"{k} {v}" for k, v in top))
EOF
}

# ceiling NAME: with the profile build (BUILD=build/prof), where the eager time
# goes: ops a unit (those the engine saw in the timed resumed steps, from
# pause_check: the paused blocks' launch count would also hold their settling
# steps and the hand-written graph's warm-up), the mean time of the driver's
# launch while graphshim was paused, their share of the eager unit, and the
# ratio graphshim would reach if it removed them at no cost of its own; nothing
# without a profile table.
ceiling() {
    local log=$OUT/$1.shim.log err=$OUT/$1.shim.err
    grep -q "driver launch, graphshim paused" "$err" 2>/dev/null || return 0
    awk '
        FILENAME ~ /log$/ && $1 == "config" { for (i = 2; i < NF; i += 2) c[$i] = $(i + 1) }
        FILENAME ~ /log$/ && $1 == "result" { eager = $7 }
        FILENAME ~ /log$/ && $1 == "pause_check" { n = $3 }
        FILENAME ~ /err$/ && /driver launch, graphshim paused/ { us = $6 / 1000 }
        END {
            units = c["steps"] * c["pairs"] * (c["units_per_step"] ? c["units_per_step"] : 1)
            if (!units || !eager || n !~ /^[0-9]+$/) exit
            per = n / units; ms = per * us / 1000
            printf "    profile: %.1f ops a %s, %.2f us a launch eagerly: %.3f ms, %.1f %% of the eager %s; ceiling %.3f\n",
                per, c["unit"], us, ms, 100 * ms / eager, c["unit"], eager / (eager - ms)
        }' "$log" "$err"
}

# status NAME SUFFIX RC: a line for a run that gave no result, or nothing
status() {
    local name=$1 suf=$2 rc=$3 why
    if [ "$rc" = 77 ]; then
        printf "%-18s SKIP %s\n" "$name" "$(field skip "$OUT/$name.$suf.log")"
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        printf "%-18s FAILED: no result within %s s (%s)\n" "$name" "$TMO" "$OUT/$name.$suf.err"
    elif [ -z "$(field result "$OUT/$name.$suf.log")" ]; then
        why=$(grep -v '^\s*$' "$OUT/$name.$suf.err" 2>/dev/null | tail -1 | cut -c1-160)
        printf "%-18s FAILED (exit %s): %s\n" "$name" "$rc" "$why"
    fi
}

: >"$TXT"
if [ -f "$SHIM" ]; then
    PRELOAD=(LD_PRELOAD="$SHIM")
else
    PRELOAD=()
    say "warning: $SHIM not found (make all): graphshim is not loaded, both halves run eager"
fi
say "graphshim applications: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(date -u +%Y-%m-%d), $(nproc) CPUs${BENCH_CPUS:+, taskset $BENCH_CPUS}"
say "inside one process each: ABBA pairs of blocks, A graphshim paused (eager), B resumed; ratio = A time / B time"
say "$(printf "%-18s %6s %6s %6s %5s %9s %9s %9s %10s %6s %6s %s" app ratio min max pairs eager-ms shim-ms hand-ms eager/hand half1 half2 unit)"
ratios=""
bad=0
for name in $LIST $JOBS; do
    if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then continue; fi
    if [[ " $JOBS " == *" $name "* ]] && ! [ "${NGPU:-0}" -ge "$NPROC" ] 2>/dev/null; then
        say "$(printf "%-18s SKIP %s ranks need %s GPUs, this machine has %s" "$name" "$NPROC" "$NPROC" "${NGPU:-0}")"
        continue
    fi
    rm -f "$OUT"/report."$name".*.json
    run_one "$name" shim -u LD_PRELOAD ${PRELOAD[@]+"${PRELOAD[@]}"} GRAPHSHIM_REPORT="$OUT/report.$name.%p.json"
    rc=$?
    line=$(status "$name" shim "$rc")
    if [ -n "$line" ]; then
        say "$line"
        [[ $line == *FAILED* ]] && bad=1
        continue
    fi
    log=$OUT/$name.shim.log
    read -r _ med lo hi np em sm h1 h2 unit <<<"$(field result "$log")"
    ratios+="$med "
    hand=$(field hand "$log")
    [ -n "$hand" ] || hand="- none: the run ended before its hand-written graph"
    hm=${hand%% *}
    hr=-
    [ "$hm" = - ] || hr=$(echo "$hand" | awk '{print $2}')
    say "$(printf "%-18s %6.3f %6.3f %6.3f %5s %9.4f %9.4f %9s %10s %6.3f %6.3f %s" \
        "$name" "$med" "$lo" "$hi" "$np" "$em" "$sm" "$hm" "$hr" "$h1" "$h2" "$unit")"
    read -r aops bops brep verdict <<<"$(field pause_check "$log")"
    [ "$verdict" != PAUSE-IGNORED ] || bad=1
    say "    graphshim: paused blocks ops $aops, resumed blocks ops $bops replayed $brep: $verdict; $(report "$name"); $(field framework "$log")"
    [ "$hm" != - ] || say "    hand: $(echo "$hand" | cut -d' ' -f2- | cut -c1-140)"
    line=$(ceiling "$name")
    [ -z "$line" ] || say "$line"
    [ "$rc" = 0 ] || say "    exit status $rc after the result ($OUT/$name.shim.err)"
    sum=$(field checksum "$log")
    if [ -n "${CHECK:-}" ] && [ "$CHECK" != 0 ] && { [ "$CHECK" = 1 ] || [[ $name =~ $CHECK ]]; }; then
        run_one "$name" plain -u LD_PRELOAD
        rc=$?
        line=$(status "$name" plain "$rc")
        if [ -n "$line" ]; then
            say "    check: the run without graphshim: $line"
        else
            plain=$(field checksum "$OUT/$name.plain.log")
            same=same
            if [ "$plain" != "$sum" ]; then
                # Another run without graphshim tells a nondeterministic app
                # (its plain runs differ too) from a difference graphshim made.
                run_one "$name" plain2 -u LD_PRELOAD
                if [ "$(field checksum "$OUT/$name.plain2.log")" = "$plain" ]; then
                    same="DIFFERS (two runs without graphshim agree)"; bad=1
                else
                    same="differs, but so do two runs without graphshim (nondeterministic)"
                fi
            fi
            read -r _ nmed nlo nhi _ <<<"$(field result "$OUT/$name.plain.log")"
            say "    check: checksum $sum with graphshim, $plain without: $same; null ratio without graphshim $nmed ($nlo-$nhi)"
        fi
    else
        say "    checksum $sum"
    fi
done
n=$(echo "$ratios" | wc -w)
[ "$n" = 0 ] || say "median ratio over $n apps: $(echo "$ratios" | median)"
echo "logs: $OUT/<app>.shim.log (.err), reports $OUT/report.<app>.<pid>.json; table: $TXT"
exit $bad # 1: an app failed, ignored the pause, or computed other bytes under graphshim
