#!/bin/sh
# need-gpu.sh: the first step of the make targets that run on a GPU (gpu-test,
# bench): where no GPU is visible it says so in one line and fails, before
# anything runs.  A GPU is visible where nvidia-smi -L lists one.
#
#   sh scripts/need-gpu.sh TARGET
if ! command -v nvidia-smi >/dev/null 2>&1; then
    why="no nvidia-smi on PATH"
else
    out=$(nvidia-smi -L 2>&1)
    printf '%s\n' "$out" | grep -q '^GPU ' && exit 0
    why="nvidia-smi -L lists none: $(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | head -n 1 | cut -c1-120)"
fi
echo "make $1: no GPU here ($why), so nothing was run; make test runs over the fake driver without one" >&2
exit 2
