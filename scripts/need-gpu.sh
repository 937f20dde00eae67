#!/bin/sh
# need-gpu.sh: the first step of the make targets that run on a GPU (gpu-test,
# bench): where no GPU is visible it says so in one line and fails, before
# anything runs.  A GPU is visible where nvidia-smi -L lists one.
#
#   sh scripts/need-gpu.sh TARGET
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "${n:-0}" -gt 0 ] && exit 0
echo "make $1: no GPU here (nvidia-smi lists none), so nothing was run; make test runs over the fake driver without one" >&2
exit 2
