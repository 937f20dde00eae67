#!/usr/bin/env bash
# compare_builds.sh: graphshim's host cost per launch, this tree against another
# build of graphshim, side by side on one machine.
#
#   bash bench/compare_builds.sh OTHER_TREE [PAIRS]
#
# OTHER_TREE is a source tree of graphshim (git worktree, or git archive of a
# commit unpacked); it is built in OTHER_TREE/build.  Then, PAIRS times (default
# 3), alternating this tree and the other: shim_cost (over the stub) and
# launch_cost.sh (a real program; needs a GPU).  Host speed drifts over minutes,
# so only figures taken in the same pair are compared.
set -euo pipefail
cd "$(dirname "$0")/.."
OTHER=${1:?usage: compare_builds.sh OTHER_TREE [PAIRS]}
PAIRS=${2:-3}
make -s all "${BUILD:-build}/bench/shim_cost"
make -s -C "$OTHER" all build/bench/shim_cost
gpu=1
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || gpu=0
for p in $(seq "$PAIRS"); do
    for tree in . "$OTHER"; do
        name=$([ "$tree" = . ] && echo "this tree" || echo "$OTHER")
        echo "== pair $p: $name"
        "$tree/build/bench/shim_cost" | sed -n '2,4p;6p;8p;12p'
        if [ "$gpu" = 1 ]; then
            # launch_cost.sh runs from the repository root; BUILD names the library.
            if [ "$tree" = . ]; then
                ROUNDS=3 bash bench/launch_cost.sh | tail -5
            else
                ROUNDS=3 BUILD="$(realpath --relative-to=. "$OTHER")/build" bash bench/launch_cost.sh | tail -5
            fi
        fi
    done
done
