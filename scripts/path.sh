#!/usr/bin/env bash
# path.sh: the rooms a held launch, a held copy and a synchronize pass through
# (issue 49's measure of the house): the library built with
# -finstrument-functions into BUILD-path, guardprog over the fake driver, every
# function entered and left recorded (scripts/path_tracer.c), and for one call
# of each kind, in a loop already replayed, the files it entered, the rooms
# entered (a call into another file), the returns (back into another file) and
# the stays (a call within a file), counted by scripts/path.py.  Inline
# functions count where they are written (a header).
#
#   bash scripts/path.sh [BUILD]     (default build; make and make test-lib first)
set -eu -o pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
P=$B-path
mkdir -p "$P"
gcc -O2 -g -fPIC -c -o "$P/path_tracer.o" scripts/path_tracer.c
rm -f "$P/libgraphshim.so" # linked anew with the tracer (LDLIBS is no prerequisite)
make -s -j"$(nproc)" BUILD="$P" \
    CFLAGS="-O2 -g -finstrument-functions -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden" \
    LDLIBS="-ldl -lpthread $PWD/$P/path_tracer.o" "$P/libgraphshim.so"
run() { # SCENARIO ITERS: guardprog under the traced library
    env -i PATH="$PATH" LD_LIBRARY_PATH="$PWD/$B/fakecuda" LD_PRELOAD="$PWD/$P/libgraphshim.so" \
        PATH_TRACE="$P/trace.$1" GRAPHSHIM_MAX_DEFER_US=1000000 "$B/tests/guardprog" "$1" "$2" >/dev/null 2>&1
}
# sync: three launches and a synchronize a step, replayed from the third: the
# 6th step's second launch is held, its synchronize replays the graph.
run sync 8
echo "a held launch and the synchronize that replays it (guardprog sync, step 6):"
python3 scripts/path.py "$P/trace.sync" "$P/libgraphshim.so" cuLaunchKernel:17 cuStreamSynchronize:6
# upload: a step of a host copy and launches; the 6th step's copy is held.
run upload 8
echo "a held copy (guardprog upload, step 6):"
python3 scripts/path.py "$P/trace.upload" "$P/libgraphshim.so" cuMemcpyHtoDAsync_v2:6
