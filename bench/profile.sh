#!/usr/bin/env bash
# profile.sh: where graphshim's host time goes in a real program (make profile).
#
#   bash bench/profile.sh [workload ...]      (from the repo root; needs a GPU)
#
# Runs bench.cu's workloads (default: norepeat tiny1 tiny20 rare) under the
# profile build of the library, build/prof/libgraphshim.so, whose engine times
# its phases (policy/base/prof.h) and prints a table at exit: the launch as a whole,
# its key, op_begin (by what it did with the op), the driver's launch, op_end,
# and the engine's work around synchronizes.  Beside each, the same workload
# without the shim and with the normal library, for the time per iteration and
# the host time of issuing one (bench.cu's us_per_iter, host_us_per_iter).
# Environment: ITERS (500), OUT (build/profile; the tables go to OUT/profile.txt),
# NVCC_ARCH (-arch=native).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
OUT=${OUT:-$B/profile}
ITERS=${ITERS:-500}
mkdir -p "$B/bench" "$OUT"
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
make -s all profile >/dev/null || exit 1
$NVCC -O2 ${NVCC_ARCH:--arch=native} -o "$B/bench/bench" bench/bench.cu -lcublas || exit 1
[ $# -gt 0 ] || set -- norepeat tiny1 tiny20 rare
for w in "$@"; do
    {
        echo "== $w ($ITERS iterations x 7 repetitions)"
        for mode in eager shim profile; do
            case $mode in
            eager) o=$("$B/bench/bench" "$w" eager "$ITERS" 2>&1) ;;
            shim) o=$(LD_PRELOAD=$PWD/$B/libgraphshim.so "$B/bench/bench" "$w" eager "$ITERS" 2>&1) ;;
            profile) o=$(LD_PRELOAD=$PWD/$B/prof/libgraphshim.so "$B/bench/bench" "$w" eager "$ITERS" 2>&1) ;;
            esac
            printf '%-8s %s\n' "$mode" "$(echo "$o" | awk '$1 == "us_per_iter" || $1 == "host_us_per_iter" {printf "%s %s  ", $1, $2}')"
            [ "$mode" = profile ] && echo "$o" | sed -n '/^graphshim profile/,$p'
        done
        echo
    } | tee -a "$OUT/profile.txt"
done
