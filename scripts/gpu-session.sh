#!/usr/bin/env bash
# gpu-session.sh: a session's checks on a GPU in one call (the device is lent by
# the minute: build once, run the parts asked for, keep only summaries).
#
#   OUT=/tmp/o PARTS="xs-apps xs-gpu-test" bash scripts/gpu-session.sh
#
# Parts (PARTS, in the order given; each bounded by its own timeout):
#   xs-apps      bench/apps.sh two_branch, copy_stream, lstm_train with
#                GRAPHSHIM_XSTREAM 0 and 1 (and the two-stream apps with
#                APPS_EVENTS=kept, knob 1; XS_APPS="a|b": those alone, no
#                kept runs)                                -> OUT/xs-apps.txt
#   xs-gpu-test  samples/gpu-test.sh with GRAPHSHIM_XSTREAM=1 (report runs only)
#                                                          -> OUT/xs-gpu-test.txt
#   gpu-test     samples/gpu-test.sh, default settings     -> OUT/gpu-test.txt
#   apps         bench/apps.sh, every single-GPU app        -> OUT/apps.txt
#   steps        bench/steps.sh (1, 10, 100 steps a synchronize, the JAX step)
#                                                          -> OUT/steps.txt
#   xstream      bench/xstream.sh, knob 0 and 1 (no probe)  -> OUT/xstream.txt
#   evprobe      whether PyTorch's events come back with the same handle
#   decode       bench/decode.sh                           -> OUT/decode.txt
# PAIRS (10) for the apps; PART_TIMEOUT (300 s) per part; GT_SAMPLES (the
# samples of the gpu-test parts; default all).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:?OUT: where the summaries go}
PAIRS=${PAIRS:-10}
TMO=${PART_TIMEOUT:-300}
W=/tmp/gpu-session
mkdir -p "$OUT" "$W"
log() { echo "== $(date -u +%T) $*" | tee -a "$OUT/session.txt"; }
log "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nproc) CPUs"
if ! make -s -j16 all test-lib >"$W/build.log" 2>&1; then
    log "build failed"; tail -30 "$W/build.log" | tee -a "$OUT/session.txt"; exit 1
fi
log "built"
# GT_SAMPLES: the samples gpu-test runs (default: all), only those built
case " ${PARTS:-xs-apps xs-gpu-test} " in *gpu-test*)
    targets=()
    for n in ${GT_SAMPLES:-}; do
        [ -f "samples/$n.cu" ] && targets+=("$PWD/build/samples/$n.static" "$PWD/build/samples/$n.shared")
    done
    if [ -z "${GT_SAMPLES:-}" ] || [ ${#targets[@]} -gt 0 ]; then
        make -s -C samples -j16 BUILD="$PWD/build" "${targets[@]}" >"$W/samples.log" 2>&1 ||
            { log "samples failed to build"; tail -20 "$W/samples.log"; }
    fi
    log "samples built" ;;
esac

xs_apps() {
    local t=$OUT/xs-apps.txt
    for x in 0 1; do
        GRAPHSHIM_XSTREAM=$x PAIRS=$PAIRS CHECK=$x ONLY="^(${XS_APPS:-two_branch|copy_stream|lstm_train})\$" \
            OUT=$W/xa$x bash bench/apps.sh >/dev/null 2>&1
        { echo "# GRAPHSHIM_XSTREAM=$x"; grep -v '^inside' "$W/xa$x/apps.txt"; } >>"$t"
    done
    [ -n "${XS_APPS:-}" ] && return 0
    APPS_EVENTS=kept GRAPHSHIM_XSTREAM=1 PAIRS=$PAIRS CHECK=0 ONLY='^(two_branch|copy_stream)$' \
        OUT=$W/xk bash bench/apps.sh >/dev/null 2>&1
    { echo "# GRAPHSHIM_XSTREAM=1 APPS_EVENTS=kept"; grep -v '^inside' "$W/xk/apps.txt"; } >>"$t"
}
gpu_test() { # KNOB FILE
    GS_SHIM_ENV="GRAPHSHIM_XSTREAM=$1" GS_PLAIN2=0 GS_SHIM_RUNS=report GS_EXTRA=0 GS_NO_BUILD=1 OUT=$W/gt$1 \
        bash samples/gpu-test.sh ${GT_SAMPLES:-} >"$W/gt$1.log" 2>&1
    { sed -n '/^sample /,$p' "$W/gt$1/summary.txt" 2>/dev/null || tail -40 "$W/gt$1.log"; } >"$2"
    grep -E 'FAIL|DIFF|passed|failed' "$2" | tail -15 | tee -a "$OUT/session.txt"
}

for p in ${PARTS:-xs-apps xs-gpu-test}; do
    log "part $p"
    case $p in
    xs-apps) timeout "$TMO" bash -c "$(declare -f xs_apps); OUT=$OUT W=$W PAIRS=$PAIRS XS_APPS='${XS_APPS:-}' xs_apps" ;;
    xs-gpu-test | gpu-test)
        knob=1; [ "$p" = gpu-test ] && knob=0
        export -f gpu_test; W=$W OUT=$OUT timeout "$TMO" bash -c "gpu_test $knob $OUT/$p.txt" ;;
    apps) PAIRS=$PAIRS CHECK=0 OUT=$W/apps timeout "$TMO" bash bench/apps.sh >/dev/null 2>&1
        cp "$W/apps/apps.txt" "$OUT/apps.txt" ;;
    steps) PAIRS=$PAIRS OUT=$W/steps timeout "$TMO" bash bench/steps.sh >"$OUT/steps.txt" 2>&1
        # the runs' logs (an exit status other than 0 says which), the training
        # loop's reports (its exit report on stderr, the JSON)
        cp "$W"/steps/*.log "$OUT/" 2>/dev/null
        for d in "$W"/steps/sync*; do
            cp "$d/mlp_adamw.shim.err" "$OUT/mlp_adamw.$(basename "$d").err" 2>/dev/null
            cp "$d"/report.mlp_adamw.*.json "$OUT/" 2>/dev/null
        done ;;
    xstream) for x in 0 1; do
            echo "# GRAPHSHIM_XSTREAM=$x" >>"$OUT/xstream.txt"
            GRAPHSHIM_XSTREAM=$x PROBE=0 SAMPLES=0 OUT=$W/xst$x timeout "$TMO" bash bench/xstream.sh >>"$OUT/xstream.txt" 2>&1
        done ;;
    evprobe) python3 - >"$OUT/evprobe.txt" 2>&1 <<'PY'
import torch
s = torch.cuda.Stream()
h = []
for i in range(6):  # wait_stream's events: made and destroyed each call?
    e = torch.cuda.Event(); e.record(); s.wait_event(e); h.append(e.cuda_event); del e
    f = s.record_event(); torch.cuda.current_stream().wait_event(f); h.append(f.cuda_event); del f
print("event handles of 6 forks and joins:", " ".join(hex(x) for x in h))
print("distinct:", len(set(h)))
PY
        ;;
    decode) PARTS=all OUT=$W/decode timeout "$TMO" bash bench/decode.sh >"$OUT/decode.txt" 2>&1 ;;
    *) log "unknown part $p" ;;
    esac
    log "part $p rc $?"
done
