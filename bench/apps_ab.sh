#!/usr/bin/env bash
# apps_ab.sh RULE: what one guard rule does to the real applications, with the
# rule on and off (GRAPHSHIM_TEST_DROP_RULE=RULE) in turn, on, off, on, off, in
# one call on one machine: the same code on two machines of one kind differs by
# up to 6 % (docs/PERFORMANCE.md), more than most rules change.  Every run
# preloads the test build (BUILD/test/libgraphshim.so; the switch is its alone).
#
# Each of the four runs is bench/apps.sh over ONLY (default: the two training
# steps, the CNN and resnet18); per run, each app's row of apps.txt and its
# report's ops replayed in the resumed blocks and recaptures.  Logs go to
# OUT/on1, OUT/off1, ... (default build/bench-ab).  About 4 x 1 minute on an
# H100 for the default apps.  Run `make all test-lib` first.
#
#   bash bench/apps_ab.sh drain
#   ONLY='mlp|transformer_train' bash bench/apps_ab.sh resume
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
RULE=${1:?usage: bench/apps_ab.sh RULE (a name GRAPHSHIM_TEST_DROP_RULE takes)}
OUT=${OUT:-build/bench-ab}
export BUILD=${BUILD:-build}/test
APPS=${ONLY:-mlp|transformer_train|cnn|resnet}
mkdir -p "$OUT"
for run in on1 off1 on2 off2; do
    case $run in
    off*) export GRAPHSHIM_TEST_DROP_RULE=$RULE ;;
    *) unset GRAPHSHIM_TEST_DROP_RULE ;;
    esac
    OUT=$OUT/$run ONLY=$APPS bash bench/apps.sh > "$OUT/$run.log" 2>&1
    echo "== $run (rule $RULE ${run%?})"
    grep -E '^[a-z_]+ +([0-9]\.[0-9]{3}|SKIP|FAILED)' "$OUT/$run/apps.txt"
    grep -o 'resumed blocks ops [0-9]* replayed [0-9]*\|recaptures [0-9]*' "$OUT/$run/apps.txt" | paste -sd' '
done
