#!/usr/bin/env bash
# gpu-jobs.sh: the checks of jobs of several GPUs in one call (make gpu-jobs):
#   samples   the multi-GPU samples of samples/gpu-test.sh (torchrun jobs with
#             a process a GPU, peer_threads, two_ctx) and samples/ranks-test.sh
#             (no rank stranded); torchrun with GS_NPROC processes, 4 where 4
#             GPUs are there, else 2;
#   apps      the jobs of bench/apps.sh (data, tensor, fully-sharded and
#             pipeline parallel training, APPS_NPROC=2 processes), PAIRS pairs
#             of blocks, graphshim paused and resumed at the same step on every
#             rank.
# Each part's summary goes to stdout; everything under OUT (default
# build/gpu-jobs), the per-run logs packed (at most a few files: the device
# tool brings back 8).  PARTS="samples apps" (default both); PAIRS (20);
# GS_SHIM_RUNS (report: the Python samples' runs under the shim besides the
# plain one; "off trace" adds those).  Needs 2 GPUs or more (else every part
# says SKIP).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-build/gpu-jobs}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
PARTS=${PARTS:-samples apps}
SAMPLES="torch_allreduce torch_ddp torch_ddp_adamw torch_fsdp torch_tp torch_pipeline torch_ranks_differ peer_threads two_ctx"
mkdir -p "$OUT"
rc=0

nvidia-smi -L 2>/dev/null | tee "$OUT/gpus.txt"

if [[ " $PARTS " == *" samples "* ]]; then
    OUT=$OUT/samples GS_SHIM_RUNS=${GS_SHIM_RUNS:-report} GS_PLAIN2=0 GS_EXTRA=0 GS_PACK_LOGS=1 \
        bash samples/gpu-test.sh $SAMPLES ranks >"$OUT/samples.log" 2>&1 || rc=1
    echo "== samples (gpu-test.sh, status $rc)"
    sed -n '/^sample /,$p' "$OUT/samples/summary.txt" 2>/dev/null || tail -n 30 "$OUT/samples.log"
    echo "-- hit rate of each rank"
    grep -E '^  [a-z_0-9]+ +tr |^      rank [0-9]+:' "$OUT/samples.log"
fi

if [[ " $PARTS " == *" apps "* ]]; then
    PAIRS=${PAIRS:-20} OUT=$OUT/apps ONLY='^(ddp_train|tp_train|fsdp_train|pipe_train)$' \
        bash bench/apps.sh >"$OUT/apps.log" 2>&1 || rc=1
    echo "== apps (bench/apps.sh, PAIRS=${PAIRS:-20})"
    grep -E '^[a-z_]+ +([0-9]\.[0-9]{3}|SKIP|FAILED)|graphshim:' "$OUT/apps/apps.txt" 2>/dev/null ||
        tail -n 20 "$OUT/apps.log"
    tar czf "$OUT/apps-logs.tar.gz" -C "$OUT" apps && rm -rf "$OUT/apps"
fi
exit $rc
