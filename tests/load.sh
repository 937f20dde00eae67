#!/usr/bin/env bash
# tests/load.sh: the engine and integration suites, N times in a row (default
# 20), with every core kept busy by a spinning process beside them: a test that
# depends on the machine's speed fails here.  Stops at the first failure.
#
#   bash tests/load.sh [N]      (after make test; BUILD as the Makefile's)
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
n=${1:-20}
hogs=
for _ in $(seq "$(nproc)"); do
    sh -c 'while :; do :; done' &
    hogs="$hogs $!"
done
trap 'kill $hogs 2>/dev/null' EXIT
t0=$(date +%s)
for i in $(seq "$n"); do
    s0=$(date +%s)
    if ! "$B/tests/integration" --filter '!(faults)/*' >"$B/tests/log/load.$i.log" 2>&1; then
        grep '\[FAIL\]' "$B/tests/log/load.$i.log"
        echo "load: run $i of $n failed ($B/tests/log/load.$i.log), with $(nproc) cores busy"
        exit 1
    fi
    echo "load: run $i passed in $(( $(date +%s) - s0 )) s: $(grep -o 'Tested: [0-9]*' "$B/tests/log/load.$i.log")"
done
echo "load: $n passed, 0 failed, in $(( $(date +%s) - t0 )) s with $(nproc) cores busy"
