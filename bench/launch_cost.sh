#!/usr/bin/env bash
# launch_cost.sh: the shim's host cost per launch, measured side by side.
#
# Builds bench/launch_cost.cu and runs it, alternating, without the shim, with
# GRAPHSHIM=0 (pure pass-through) and with the engine on (the 128-launch batch
# repeats, so the engine holds its launches and replays them as a graph: the cost
# per launch is then the held-launch cost).  With the default early chunks, four
# graph launches (at 8, 16, 32 and 64 held launches) fall inside each timed
# batch; a second engine run with GRAPHSHIM_CHUNK_OPS=0 times the held launches
# alone.  Prints the median of the runs' medians, and the differences to the run
# without the shim.  The last line is the runtime's own host time per <<<>>>: a
# held <<<>>> less a held cuLaunchKernel, chunks off (the runtime makes one
# cuLaunchKernel per <<<>>>, nothing else), time that a program replaying a
# hand-written graph never spends, and graphshim cannot take away.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}/bench
mkdir -p "$B"
${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc} -O2 ${NVCC_ARCH:--arch=native} -o "$B/launch_cost" bench/launch_cost.cu -lcuda
SHIM=$PWD/${BUILD:-build}/libgraphshim.so
ROUNDS=${ROUNDS:-5}
declare -A rt drv
for r in $(seq "$ROUNDS"); do
    for mode in plain off on on0; do
        case $mode in
            plain) out=$("$B/launch_cost") ;;
            off) out=$(LD_PRELOAD=$SHIM GRAPHSHIM=0 "$B/launch_cost") ;;
            on) out=$(LD_PRELOAD=$SHIM "$B/launch_cost") ;;
            on0) out=$(LD_PRELOAD=$SHIM GRAPHSHIM_CHUNK_OPS=0 "$B/launch_cost") ;;
        esac
        rt[$mode]+="$(echo "$out" | awk '/runtime_launch_ns/{print $2}') "
        drv[$mode]+="$(echo "$out" | awk '/driver_launch_ns/{print $2}') "
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
printf '%-34s %12s %12s\n' "host ns per launch (median of $ROUNDS)" "<<<>>>" "cuLaunchKernel"
for mode in plain off on on0; do
    r=$(echo "${rt[$mode]}" | median); d=$(echo "${drv[$mode]}" | median)
    eval "R_$mode=$r D_$mode=$d"
    case $mode in plain) label="no shim" ;; off) label="GRAPHSHIM=0 (pass-through)" ;; on) label="engine on (held, chunks inside)" ;;
        on0) label="engine on, GRAPHSHIM_CHUNK_OPS=0" ;; esac
    printf '%-34s %12.1f %12.1f\n' "$label" "$r" "$d"
done
awk -v a="$R_off" -v b="$R_plain" -v c="$D_off" -v d="$D_plain" \
    'BEGIN { printf "%-34s %12.1f %12.1f\n", "pass-through cost (off - no shim)", a - b, c - d }'
awk -v a="$R_on" -v c="$D_on" \
    'BEGIN { printf "%-34s %12.1f %12.1f\n", "held launch cost (engine on)", a, c }'
awk -v a="$R_on0" -v c="$D_on0" \
    'BEGIN { printf "%-34s %12.1f %12.1f\n", "held launch alone (no chunks)", a, c }'
awk -v a="$R_on0" -v c="$D_on0" \
    'BEGIN { printf "%-34s %12.1f\n", "runtime'"'"'s own part (held, no chunks)", a - c }'
