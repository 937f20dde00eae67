#!/usr/bin/env bash
# check.sh: the wheel (make wheel) as a user meets it: installed with pip into a
# new virtual environment, without an index, used there, and uninstalled.
#
#   BUILD=build WHEEL_PYTHON=/usr/bin/python3 bash tests/wheel/check.sh
#                                           (make wheel-test builds what it needs)
#
# Checks, in order, each a line PASS or FAIL:
#   the wheel's name, its tag and its files: the version of the file VERSION, a
#     platform tag that claims no older glibc than its ELF files need (and that
#     the same check refuses a tag claiming one version less), the build's
#     binaries;
#   pip install --no-index into python -m venv;
#   graphshim --version and python -m graphshim --help: the launcher's lines
#     and exit statuses, through the installed command;
#   the fake-driver demo (guardprog params 40, as make demo) through the
#     installed command: the same output as without it, and a report that the
#     installed report tool reads;
#   the module's pause, resume, paused() and counters over the fake driver
#     (tests/wheel/paused.py), under `graphshim run` and `python -m
#     graphshim run`, and without graphshim: the same output all three ways;
#   pip uninstall: the environment's files as before the install.
# Prints "wheel: N passed, M failed"; exits 1 if a check failed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=${BUILD:-build}
case $B in /*) AB=$B ;; *) AB=$ROOT/$B ;; esac
PY=${WHEEL_PYTHON:-/usr/bin/python3}
VERSION=$(cat VERSION)
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-wheel-XXXXXX")
trap 'rm -rf "$T"' EXIT
V=$T/venv
# Programs run in a clean environment, the venv first in PATH, over the fake
# driver.
RUN_ENV=(env -i PATH="$V/bin:$PATH" HOME="$T" LD_LIBRARY_PATH="$AB/fakecuda"
         PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1)
. tests/wheel/lib.sh

# --- The wheel's name, tag and files -------------------------------------------

wheels=(dist/graphshim-*.whl)
W=${wheels[0]}
: >"$T/err"
expect "one wheel in dist, of version $VERSION" \
    test "${#wheels[@]}" = 1 -a -f "$W" -a "${W#dist/graphshim-$VERSION-py3-none-}" != "$W"
mkdir "$T/unzipped"
$PY -m zipfile -e "$W" "$T/unzipped"
TAG=$(basename "$W" .whl)
TAG=${TAG#graphshim-"$VERSION"-}
expect "the wheel's WHEEL file names the tag of its file name ($TAG)" \
    grep -qx "Tag: $TAG" "$T/unzipped/graphshim-$VERSION.dist-info/WHEEL"
elves=()
for f in $(cd "$T/unzipped" && find . -type f | sort); do
    [ "$(head -c 4 "$T/unzipped/$f" | od -An -c | tr -d ' ')" = '177ELF' ] && elves+=("$T/unzipped/$f")
done
# executable_in_wheel PATH: the wheel's entry PATH has its owner's x bit.
executable_in_wheel() {
    $PY -c 'import sys, zipfile; sys.exit(not zipfile.ZipFile(sys.argv[1]).getinfo(sys.argv[2]).external_attr >> 16 & 0o100)' \
        "$W" "$1"
}
# honest_tag TAG FILE...: TAG (py3-none-PLATFORM) claims no older glibc, and the
# same architecture, as FILEs need (scripts/wheel-platform.sh).
honest_tag() {
    local tag=$1 need have
    shift
    need=$(sh scripts/wheel-platform.sh "$@") || return 1
    have=${tag#py3-none-manylinux_2_}
    [ "${have#*_}" = "${need#manylinux_2_*_}" ] &&
        [ "${have%%_*}" -ge "$(echo "$need" | cut -d_ -f3)" ] 2>/dev/null ||
        { echo "tag $tag, the binaries need $need" >>"$T/err"; false; }
}
: >"$T/err"
expect "the tag claims no older glibc than the wheel's ${#elves[@]} ELF files need" \
    honest_tag "$TAG" "${elves[@]}"
older=$(sh scripts/wheel-platform.sh "${elves[@]}" | awk -F_ '{ printf "py3-none-manylinux_2_%d_%s_%s", $3 - 1, $4, $5 }')
: >"$T/err"
expect "the same check refuses the tag $older for them" eval '! honest_tag "$older" "${elves[@]}"'
: >"$T/err"
for f in libgraphshim.so graphshim graphshim-report graphshim-gate; do
    expect "graphshim/$f in the wheel is the build's $f, executable" \
        eval "cmp '$AB/$f' '$T/unzipped/graphshim/$f' >>'$T/err' 2>&1 && executable_in_wheel graphshim/$f"
done
expect "a console command graphshim = graphshim.__main__:main" \
    grep -qx 'graphshim = graphshim.__main__:main' "$T/unzipped/graphshim-$VERSION.dist-info/entry_points.txt"

# --- Installed into a new virtual environment -----------------------------------

install_wheel "$PY" "$ROOT/$W"

quiet graphshim --version
expect "graphshim --version: exit 0" is "$rc" 0
expect "graphshim --version: the launcher's line" \
    is "$(sed -n 1p "$T/out")" "graphshim $VERSION (launcher $SITE/graphshim/graphshim)"
expect "graphshim --version: the library's line" \
    is "$(sed -n 2p "$T/out")" "libgraphshim.so $VERSION ($SITE/graphshim/libgraphshim.so)"
quiet python -c 'import graphshim; print(graphshim.__version__)'
expect "graphshim.__version__ is $VERSION" is "$(cat "$T/out")" "$VERSION"

"$AB/graphshim" --help >"$T/help"
quiet python -m graphshim --help
expect "python -m graphshim --help: exit 0, the launcher's help on stdout" \
    eval 'is "$rc" 0 && cmp "$T/out" "$T/help" >>"$T/err" && is "$(cat "$T/err")" ""'
quiet graphshim
expect "graphshim without arguments: exit 2" is "$rc" 2
quiet python -m graphshim frobnicate
expect "python -m graphshim frobnicate: exit 2" is "$rc" 2
quiet graphshim run -- no-such-command-anywhere
expect "graphshim run -- a missing command: exit 127" is "$rc" 127
quiet python -m graphshim run -- sh -c 'exit 7'
expect "python -m graphshim run: the program's exit status" is "$rc" 7
quiet env LD_PRELOAD=/nonexistent/other.so graphshim run -- sh -c 'echo "$LD_PRELOAD"'
expect "graphshim run: the package's library first in LD_PRELOAD, by absolute path" \
    is "$(cat "$T/out")" "$SITE/graphshim/libgraphshim.so:/nonexistent/other.so"

# The README's `~/gs-env/bin/graphshim run -- python train.py`, the environment
# not activated (not in PATH): python is the environment's, which imports graphshim.
timeout 60 env -i PATH=/usr/bin:/bin HOME="$T" LD_LIBRARY_PATH="$AB/fakecuda" "$V/bin/graphshim" run -- \
    python -c 'import sys, graphshim; print(sys.prefix)' >"$T/out" 2>"$T/err" </dev/null
expect "the environment's graphshim, not activated, runs the environment's python" is "$(cat "$T/out")" "$V"

# --- The fake-driver demo through the installed command ---------------------------

quiet "$AB/tests/guardprog" params 40
cp "$T/out" "$T/plain"
quiet graphshim run --report "$T/demo.json" -- "$AB/tests/guardprog" params 40
expect "demo: graphshim run -- guardprog params 40: exit 0, the output without graphshim" \
    eval 'is "$rc" 0 && test -s "$T/plain" && cmp "$T/out" "$T/plain" >>"$T/err"'
expect_replays "demo: a report with replays in it" "$T/demo.json"
quiet graphshim report "$T/demo.json"
expect "demo: graphshim report reads it" eval 'is "$rc" 0 && grep -q "^graphshim report: 1 report" "$T/out"'

# --- The module over the fake driver ------------------------------------------------

# Held work waits up to a second for its boundary (GRAPHSHIM_MAX_DEFER_US), so the
# counters' checks do not depend on how loaded the machine is.
quiet python tests/wheel/paused.py fake plain
cp "$T/out" "$T/plain"
expect "module without graphshim: NotLoadedError, paused() runs its block" \
    eval 'is "$rc" 0 && test -s "$T/plain"'
for cmd in "graphshim run" "python -m graphshim run"; do
    quiet env GRAPHSHIM_MAX_DEFER_US=1000000 $cmd -- python tests/wheel/paused.py fake shim
    expect "module under $cmd: counters rise while active, not while paused" is "$rc" 0
    expect "module under $cmd: the output without graphshim" cmp "$T/out" "$T/plain"
done

# --- Uninstalled -------------------------------------------------------------------

uninstall_wheel

echo "wheel: $passed passed, $failed failed"
[ "$failed" = 0 ]
