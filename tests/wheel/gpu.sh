#!/usr/bin/env bash
# gpu.sh: the wheel on a GPU machine with PyTorch, as a pip user meets it.
#
#   bash tests/wheel/gpu.sh [WHEEL]
#
# WHEEL: a wheel built by make wheel (default: the one in dist/).  It needs no
# build tool and no index: python3 -m venv --system-site-packages (so that the
# machine's PyTorch is seen) and pip install --no-index WHEEL.  Then:
#   samples/torch_mlp.py run through the installed graphshim command prints the
#     same bytes as without it, and writes a report in which graphs replayed,
#     which the installed report tool reads;
#   tests/wheel/paused.py torch: the counters rise while graphshim is active and
#     not inside `with graphshim.paused():` nor between pause() and resume(),
#     and the output is the same as without graphshim;
#   pip uninstall leaves the environment as it was.
# Logs (each run's stdout, their stderr, the report, and the PASS/FAIL lines in
# summary.txt) go to $OUT/wheel-gpu where OUT is set, else to a directory it
# names.  PYTHON: the
# interpreter with PyTorch (default python3).  Exits 1 if a check failed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
PY=${PYTHON:-python3}
if [ $# -gt 0 ]; then
    W=$1
else
    wheels=(dist/graphshim-*.whl)
    W=${wheels[0]}
    [ "${#wheels[@]}" = 1 ] || { echo "gpu.sh: ${#wheels[@]} wheels in dist/: name one" >&2; exit 2; }
fi
[ -f "$W" ] || { echo "gpu.sh: no wheel $W (make wheel builds one)" >&2; exit 2; }
case $W in /*) ;; *) W=$ROOT/$W ;; esac
if [ -n "${OUT:-}" ]; then
    LOG=$OUT/wheel-gpu
    mkdir -p "$LOG"
else
    LOG=$(mktemp -d /tmp/gs-wheel-gpu-XXXXXX)
fi
T=$(mktemp -d /tmp/gs-wheel-XXXXXX)
trap 'rm -rf "$T"' EXIT
V=$T/venv
RUN_ENV=(env PATH="$V/bin:$PATH" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1)
QUIET_TIMEOUT=300
. tests/wheel/lib.sh

# keep NAME: the last run's stdout as $LOG/NAME.out, its stderr under a line
# "== NAME" in $LOG/stderr.txt.  With summary.txt and the report: 8 files.
: >"$LOG/stderr.txt"
keep() {
    cp "$T/out" "$LOG/$1.out"
    { echo "== $1 (exit $rc)"; cat "$T/err"; } >>"$LOG/stderr.txt"
}

{
    echo "gpu.sh: $(basename "$W") on $(nvidia-smi -L 2>/dev/null | head -1)"
    install_wheel "$PY" "$W" --system-site-packages

    quiet python samples/torch_mlp.py
    keep mlp.plain
    expect "torch_mlp without graphshim: exit 0" is "$rc" 0
    quiet graphshim run --report "$LOG/mlp.report.json" -- python samples/torch_mlp.py
    keep mlp.graphshim
    expect "torch_mlp through graphshim run: exit 0" is "$rc" 0
    : >"$T/err"
    expect "torch_mlp through graphshim run: the same stdout bytes" \
        eval 'test -s "$LOG/mlp.plain.out" && cmp "$LOG/mlp.plain.out" "$LOG/mlp.graphshim.out" >"$T/err"'
    expect_replays "torch_mlp: a report with replays in it" "$LOG/mlp.report.json"
    quiet graphshim report "$LOG/mlp.report.json"
    keep mlp.report
    expect "torch_mlp: graphshim report reads it" eval 'is "$rc" 0 && grep -q "^graphshim report: 1 report" "$T/out"'

    quiet python tests/wheel/paused.py torch plain
    keep paused.plain
    expect "paused.py torch without graphshim: NotLoadedError, paused() runs its block" is "$rc" 0
    quiet graphshim run -- python tests/wheel/paused.py torch shim
    keep paused.graphshim
    expect "paused.py torch under graphshim: counters rise while active, not while paused" is "$rc" 0
    : >"$T/err"
    expect "paused.py torch under graphshim: the output without graphshim" \
        eval 'test -s "$LOG/paused.plain.out" && cmp "$LOG/paused.plain.out" "$LOG/paused.graphshim.out" >"$T/err"'

    uninstall_wheel
    echo "wheel on a GPU: $passed passed, $failed failed (logs: $LOG)"
} 2>&1 | tee "$LOG/summary.txt"
grep -q ", 0 failed (logs" "$LOG/summary.txt"
