#!/usr/bin/env bash
# steps.sh: loops that do not synchronize every step (issue 57; make bench-steps).
# Each row is bench/apps.sh's (the same protocol in one process, graphshim
# paused and resumed in ABBA blocks, the same columns: bench/apps/README.md):
# the training and inference loops (ONLY, default MLP AdamW training, resnet18
# at batch 1, a 4-layer encoder) with the framework's synchronize after every
# step, every 10th and every 100th (SYNC_EVERY, default "1 10 100"; the app's
# --sync-every), then the JAX jit loop of four small products waited on every
# step (jax_step: its step ends in event records and a host function, never in a
# synchronize).  Output: the tables on stdout and in OUT/steps.txt, each run's
# logs and reports under OUT/syncN and OUT/jax (OUT: build/bench-steps); last,
# bench/step_shape.sh (the same shape in C: eager, graphshim, a hand-written graph).
# Environment as bench/apps.sh's (PAIRS, CHECK, BUILD, BENCH_CPUS, GRAPHSHIM_*).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD
OUT=${OUT:-$BUILD/bench-steps}
APPS=${ONLY:-mlp_adamw|resnet_infer|encoder_infer}
mkdir -p "$OUT"
TXT=$OUT/steps.txt
: >"$TXT"
bad=0
# table TITLE DIR: TITLE, then DIR's apps.txt without its two lines of preamble
table() {
    { echo "== $1"; sed -n '3,$p' "$2/apps.txt"; } | tee -a "$TXT"
}
for n in ${SYNC_EVERY:-1 10 100}; do
    OUT=$OUT/sync$n ONLY="$APPS" APPS_SYNC_EVERY=$n bash bench/apps.sh >"$OUT/sync$n.log" 2>&1 || bad=1
    table "a synchronize every $n steps" "$OUT/sync$n"
done
OUT=$OUT/jax ONLY=jax_step bash bench/apps.sh >"$OUT/jax.log" 2>&1 || bad=1
table "JAX jit loop of four products, waited on every step (event records, a host function)" "$OUT/jax"
OUT=$OUT/shape bash bench/step_shape.sh | tee -a "$TXT" || bad=1
echo "tables: $TXT"
exit $bad
