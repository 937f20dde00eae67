# lib.sh: what tests/wheel/check.sh and tests/wheel/gpu.sh share (sourced).
#
# The sourcing script sets T (a scratch directory), V (the virtual environment's
# directory) and RUN_ENV (the env command line every program runs under), and
# reads passed and failed at the end.

passed=0 failed=0

# expect WHAT COMMAND...: one check: a line PASS where COMMAND succeeds, else
# FAIL and the first lines of $T/err.
expect() {
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "PASS $what"
    else
        failed=$((failed + 1))
        echo "FAIL $what"
        [ ! -s "$T/err" ] || sed 's/^/    /' "$T/err" | head -8
    fi
}

# quiet COMMAND...: runs COMMAND under RUN_ENV with stdin closed and a timeout
# of QUIET_TIMEOUT seconds (default 60); stdout in $T/out, stderr in $T/err,
# exit status in $rc.
quiet() {
    timeout "${QUIET_TIMEOUT:-60}" "${RUN_ENV[@]}" "$@" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
}

# is GOT WANT: GOT is WANT; else says both on $T/err.
is() { [ "$1" = "$2" ] || { echo "'$1', expected '$2'" >>"$T/err"; false; }; }

# expect_replays WHAT REPORT: the JSON report REPORT counts graph replays (a
# check).
expect_replays() {
    quiet python -c 'import json, sys; print(json.load(open(sys.argv[1]))["totals"]["replays"])' "$2"
    expect "$1 ($(cat "$T/out") replays)" eval '[ "$(cat "$T/out")" -gt 0 ] 2>/dev/null'
}

# The virtual environment's files, one path a line.
files_of_venv() { (cd "$V" && find . | LC_ALL=C sort); }

# install_wheel PYTHON WHEEL [VENV-OPTIONS...]: a new virtual environment V of
# PYTHON with WHEEL installed by pip without an index (checks); its files before
# the install in $T/venv-before, SITE its site-packages, PIP its pip.  Where
# PYTHON cannot make one with pip (no ensurepip), V gets none and PYTHON's pip
# installs into it (pip --python).  With --system-site-packages, where PYTHON is itself a virtual
# environment (whose packages V would not see: V's system is PYTHON's base
# interpreter), a .pth file in V adds PYTHON's site-packages.
install_wheel() {
    local py=$1 wheel=$2 outer
    shift 2
    PIP=("$V/bin/python" -m pip)
    quiet "$py" -m venv "$@" "$V"
    if [ "$rc" != 0 ]; then
        rm -rf "$V"
        quiet "$py" -m venv --without-pip "$@" "$V"
        PIP=("$py" -m pip --python "$V/bin/python")
    fi
    expect "python -m venv $* (exit $rc)" is "$rc" 0
    SITE=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    case " $* " in *" --system-site-packages "*)
        outer=$("$py" -c 'import site, sys; sys.prefix != sys.base_prefix and print("\n".join(site.getsitepackages()))')
        [ -z "$outer" ] || echo "$outer" >"$SITE/outer-site-packages.pth" ;;
    esac
    files_of_venv >"$T/venv-before"
    quiet "${PIP[@]}" install --no-index "$wheel"
    expect "pip install --no-index $(basename "$wheel") into it (exit $rc)" is "$rc" 0
}

# uninstall_wheel: pip uninstall, and the environment's files as before the
# install (two checks).
uninstall_wheel() {
    quiet "${PIP[@]}" uninstall -y graphshim
    expect "pip uninstall -y graphshim: exit 0" is "$rc" 0
    files_of_venv >"$T/venv-after"
    : >"$T/err"
    expect "after the uninstall the venv holds the files it held before the install" \
        eval 'diff "$T/venv-before" "$T/venv-after" >"$T/err"'
}
