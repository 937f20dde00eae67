#!/usr/bin/env bash
# ranks-test.sh: no rank of a multi-GPU job is ever stranded by graphshim.
#
#   bash samples/ranks-test.sh [SAMPLE]     (from the repo root; needs N GPUs)
#
# SAMPLE (default torch_tp: tensor parallel, every layer ends in collectives)
# runs under torchrun --standalone --nproc-per-node N (N: GS_NPROC, default 2):
#   plain          without graphshim: the reference stdout and time
#   capture-fails  every rank under the test build (make test-lib), rank 1's
#                  every capture failing (GRAPHSHIM_TEST_FAULT=
#                  cuStreamEndCapture:1+:901, GRAPHSHIM_TEST_FAULT_RANK=1):
#                  exit 0, stdout identical to plain, rank 1's report shows the
#                  failures and no replay, rank 0 still replays (each rank
#                  decides alone)
#   launch-fails   the same with rank 1's every graph launch failing
#                  (cuGraphLaunch:1+:999): its report shows graph-failed bails
#   killed         rank 1 kills itself (SIGKILL) at step KILL_STEP (50), once
#                  without graphshim and once under it: both jobs end with an
#                  error, and the one under graphshim no later than the plain
#                  one's time plus max(10 s, half of it)
# Every run has a timeout (GS_TIMEOUT, 240 s): a run that meets it is a hang.
# Prints a line per case and "ranks-test: P passed, F failed"; exit 1 on a
# failure.  Logs under OUT (default build/ranks-test).  gpu-test.sh runs it
# where the machine has N GPUs.
set -u -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
SAMPLE=${1:-torch_tp}
NPROC=${GS_NPROC:-2}
OUT=${OUT:-build/ranks-test}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
TMO=${GS_TIMEOUT:-240}
KILL_STEP=${KILL_STEP:-50}
PYTHON=${PYTHON:-python3}
BUILD=${GS_BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SHIM=$BUILD/libgraphshim.so
TESTLIB=$BUILD/test/libgraphshim.so
rm -rf "$OUT"
mkdir -p "$OUT"
NPASS=0
NFAIL=0

log() { echo "$*" | tee -a "$OUT/summary.txt"; }
verdict() { # NAME WHY...: PASS where no WHY
    local name=$1; shift
    if [ $# -eq 0 ]; then
        NPASS=$((NPASS + 1)); log "  $(printf '%-15s' "$name") PASS"
    else
        NFAIL=$((NFAIL + 1)); log "  $(printf '%-15s' "$name") FAIL: $*"
    fi
}

# job NAME VAR=value...: the sample under torchrun with the assignments; its
# stdout, stderr, exit status and seconds in $OUT/NAME.*
job() {
    local name=$1 t0 rc; shift
    t0=$(date +%s.%N)
    timeout -k 10 "$TMO" env NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMP_NUM_THREADS=1 \
        PYTHONDONTWRITEBYTECODE=1 "$@" \
        "$PYTHON" -m torch.distributed.run --standalone --nproc-per-node "$NPROC" "$ROOT/samples/$SAMPLE.py" \
        >"$OUT/$name.stdout" 2>"$OUT/$name.stderr" </dev/null
    rc=$?
    echo "$rc" >"$OUT/$name.rc"
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b - a}' >"$OUT/$name.time"
}
rc_of() { cat "$OUT/$1.rc"; }
time_of() { cat "$OUT/$1.time"; }
# total FILE KEY: a number of a report's totals, else the count of that bail
# (0 where it never happened); NA for a file that is no report
total() {
    python3 -c 'import json, sys
t = json.load(open(sys.argv[1])).get("totals", {})
print(t[sys.argv[2]] if sys.argv[2] in t else (t.get("bails") or {}).get(sys.argv[2], 0))' "$1" "$2" 2>/dev/null || echo NA
}

[ -f "$SHIM" ] && [ -f "$TESTLIB" ] || { log "ranks-test: $SHIM or $TESTLIB missing (make all test-lib)"; log "ranks-test: 0 passed, 1 failed"; exit 1; }
log "ranks-test: $SAMPLE on $NPROC ranks (logs: $OUT)"

job plain
if [ "$(rc_of plain)" = 77 ]; then
    log "  $SAMPLE SKIP: $(tail -1 "$OUT/plain.stderr")"
    log "ranks-test: 0 passed, 0 failed"
    exit 0
fi
why=()
[ "$(rc_of plain)" = 0 ] || why+=("exit $(rc_of plain) without graphshim: $(tail -1 "$OUT/plain.stderr")")
[ -s "$OUT/plain.stdout" ] || why+=("no output without graphshim")
verdict plain "${why[@]}"

# fails NAME FAULT BAIL-KEY: rank 1's every call of FAULT's entry fails.
fails() {
    local name=$1 fault=$2 key=$3 r0 r1 detail=
    mkdir -p "$OUT/$name"
    job "$name" LD_PRELOAD="$TESTLIB" GRAPHSHIM_TEST_FAULT="$fault" GRAPHSHIM_TEST_FAULT_RANK=1 \
        GRAPHSHIM_REPORT="$OUT/$name/report.%r.json"
    local -a why=()
    local rc
    rc=$(rc_of "$name")
    { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && why+=("hung: no end within $TMO s")
    [ "$rc" = 0 ] || [ "$rc" = 124 ] || [ "$rc" = 137 ] || why+=("exit $rc: $(tail -1 "$OUT/$name.stderr")")
    cmp -s "$OUT/plain.stdout" "$OUT/$name.stdout" || why+=("stdout differs from the run without graphshim")
    r0=$OUT/$name/report.0.json
    r1=$OUT/$name/report.1.json
    if [ -f "$r0" ] && [ -f "$r1" ]; then
        [ "$(total "$r1" "$key")" != NA ] && [ "$(total "$r1" "$key")" -gt 0 ] 2>/dev/null ||
            why+=("rank 1's report shows no $key")
        [ "$(total "$r0" replays)" -gt 0 ] 2>/dev/null || why+=("rank 0 replayed nothing")
        detail="rank 0: replays $(total "$r0" replays), hit_rate $(total "$r0" hit_rate); rank 1: replays $(total "$r1" replays), $key $(total "$r1" "$key")"
    else
        why+=("rank reports missing")
    fi
    verdict "$name" "${why[@]}"
    [ -z "${detail:-}" ] || log "      $detail"
}
fails capture-fails cuStreamEndCapture:1+:901 graph_failures
fails launch-fails cuGraphLaunch:1+:999 graph-failed

# A rank killed mid-job: the job ends as it does without graphshim.
job killed-plain GS_SAMPLE_KILL="1:$KILL_STEP"
job killed-shim GS_SAMPLE_KILL="1:$KILL_STEP" LD_PRELOAD="$SHIM"
why=()
for v in killed-plain killed-shim; do
    rc=$(rc_of $v)
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        why+=("$v: hung, no end within $TMO s")
    elif [ "$rc" = 0 ]; then
        why+=("$v: exit 0, the killed rank went unnoticed")
    fi
done
tp=$(time_of killed-plain)
ts=$(time_of killed-shim)
awk -v p="$tp" -v s="$ts" 'BEGIN { m = p / 2; if (m < 10) m = 10; exit !(s <= p + m) }' ||
    why+=("the job under graphshim ended after ${ts} s, without it after ${tp} s")
verdict killed "${why[@]}"
log "      killed at step $KILL_STEP of rank 1: ended after ${tp} s (exit $(rc_of killed-plain)) without graphshim, ${ts} s (exit $(rc_of killed-shim)) under it"

log "ranks-test: $NPASS passed, $NFAIL failed"
[ "$NFAIL" -eq 0 ]
