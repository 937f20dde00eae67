#!/usr/bin/env bash
# run.sh: what a user meets first, checked the way a user (or a hostile input)
# meets it: the launcher, the files graphshim writes, knob values and names,
# the test-only switch, a library loaded too late, and the demo's commands.
#
#   BUILD=build bash tests/cli/run.sh [CASE...]      (make cli-test runs it)
#
# Programs run over the fake driver (tests/fakecuda) in a clean environment,
# each case in a directory of its own, each program under a timeout (a FIFO must
# never hang graphshim).  Every case checks a behaviour the code before it got
# wrong, so each can fail.  Prints PASS or FAIL per case and a summary line;
# exits 1 if a case failed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=${BUILD:-build}
case $B in /*) AB=$B ;; *) AB=$ROOT/$B ;; esac
G=$AB/graphshim
LIB=$AB/libgraphshim.so
DRV=("$AB/tests/drvprog" direct legacy 2)
T=$(mktemp -d /tmp/gs-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT

# --- Helpers ------------------------------------------------------------------

why=()
# check CONDITION... -- MESSAGE: records MESSAGE as a failure unless the
# condition (a command) succeeds.
check() {
    local args=() a
    for a in "$@"; do
        shift
        [ "$a" = -- ] && break
        args+=("$a")
    done
    "${args[@]}" || why+=("$*")
}
# in one of the three phrasings below
same() { [ "$1" = "$2" ]; }
has() { grep -qF -- "$2" "$1"; }
hasnt() { ! grep -qF -- "$2" "$1"; }
# Lines of stderr (file err) that are graphshim's.
warnings() { grep -c '^graphshim:' err; }

# shim [NAME=value...] PROGRAM [ARGS...]: runs PROGRAM over the fake driver with
# graphshim preloaded; stdout in out, stderr in err, exit status in $rc.
shim() {
    timeout 20 env -i PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" LD_PRELOAD="$LIB" "$@" >out 2>err </dev/null
    rc=$?
}
# plain PROGRAM [ARGS...]: the same without graphshim, stdout in base.
plain() {
    timeout 20 env -i PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" "$@" >base 2>/dev/null </dev/null
}
# launcher ARGS...: the launcher, the same way.
launcher() {
    timeout 20 env -i PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" "$G" "$@" >out 2>err </dev/null
    rc=$?
}
# The library's version as include/graphshim.h gives it (GRAPHSHIM_VERSION,
# major * 10000 + minor * 100 + patch), written out.
header_version() {
    local n
    n=$(sed -n 's/^#define GRAPHSHIM_VERSION \([0-9]*\).*/\1/p' "$ROOT/include/graphshim.h")
    echo "$((n / 10000)).$((n / 100 % 100)).$((n % 100))"
}

# --- The launcher -------------------------------------------------------------

t_help_on_stdout() {
    local a
    for a in --help -h help; do
        launcher "$a"
        check same "$rc" 0 -- "graphshim $a: exit $rc, not 0"
        check has out "usage: graphshim run" -- "graphshim $a: no usage on stdout"
        check same "$(cat err)" "" -- "graphshim $a: wrote to stderr: $(head -2 err)"
    done
    launcher run --help
    check same "$rc" 0 -- "graphshim run --help: exit $rc, not 0"
    check has out "--report PATH" -- "graphshim run --help: no options on stdout"
    launcher report --help
    check same "$rc" 0 -- "graphshim report --help: exit $rc, not 0"
    check has out "usage: graphshim report" -- "graphshim report --help: no usage on stdout"
}

t_version() {
    local v
    v=$(header_version)
    launcher --version
    check same "$rc" 0 -- "--version: exit $rc"
    check same "$(sed -n 1p out | cut -d' ' -f1-2)" "graphshim $v" -- "--version, launcher: $(sed -n 1p out), expected $v"
    check same "$(sed -n 2p out | cut -d' ' -f1-2)" "libgraphshim.so $v" -- "--version, library: $(sed -n 2p out), expected $v"
}

t_no_arguments() {
    launcher
    check same "$rc" 2 -- "no arguments: exit $rc, not 2"
    check same "$(cat out)" "" -- "no arguments: wrote to stdout"
    check has err "graphshim --help" -- "no arguments: stderr does not point to --help"
}

t_unknown_command() {
    launcher frobnicate
    check same "$rc" 2 -- "unknown command: exit $rc, not 2"
    check has err "unknown command 'frobnicate'" -- "unknown command: $(head -1 err)"
    launcher --frobnicate
    check same "$rc" 2 -- "unknown option: exit $rc, not 2"
    check has err "unknown option '--frobnicate'" -- "unknown option: $(head -1 err)"
}

t_misspelled_option_is_an_error() {
    launcher run --reprot r.json -- sh -c 'touch ran'
    check same "$rc" 2 -- "run --reprot: exit $rc, not 2"
    check has err "unknown option '--reprot'" -- "run --reprot: $(head -1 err)"
    check test ! -e ran -- "run --reprot: the program ran"
    launcher run --report -- "${DRV[@]}"
    check same "$rc" 2 -- "run --report without a path: exit $rc, not 2"
}

t_missing_program() {
    launcher run -- ./no-such-program
    check same "$rc" 127 -- "missing ./program: exit $rc, not 127"
    check same "$(cat err)" "graphshim: ./no-such-program: no such file" -- "missing ./program: $(cat err)"
    launcher run -- no-such-command-anywhere
    check same "$rc" 127 -- "missing command: exit $rc, not 127"
    check same "$(cat err)" "graphshim: no-such-command-anywhere: command not found" -- "missing command: $(cat err)"
    launcher run -- /
    check same "$rc" 126 -- "a directory as program: exit $rc, not 126"
    launcher run
    check same "$rc" 2 -- "run without a program: exit $rc, not 2"
    check has err "no PROGRAM given" -- "run without a program: $(head -1 err)"
}

t_run_passes_program_and_status() {
    plain "${DRV[@]}"
    launcher run --report r.json --trace=t.txt -- "${DRV[@]}"
    check same "$rc" 0 -- "run: exit $rc"
    check cmp -s out base -- "run: the program's output changed"
    check test -s r.json -- "run --report: no report"
    check test -s t.txt -- "run --trace=: no trace"
    launcher run sh -c 'exit 3'
    check same "$rc" 3 -- "run: the program's exit status 3 came back as $rc"
}

t_readme_shows_help() {
    # The block after the line "$ graphshim --help" in the README, to its fence.
    awk '/^\$ graphshim --help$/ { on = 1; next } on && /^```/ { exit } on' "$ROOT/README.md" >readme
    launcher --help
    check test -s readme -- "README: no block after '\$ graphshim --help'"
    check cmp -s readme out -- "README's --help block differs from graphshim --help: $(diff readme out | head -4 | tr '\n' ' ')"
}

# --- The files graphshim writes -----------------------------------------------

t_report_symlink_refused() {
    plain "${DRV[@]}"
    echo keep >target
    ln -s target r.json
    ln -s nowhere d.json
    shim GRAPHSHIM_REPORT=r.json "${DRV[@]}"
    check same "$rc" 0 -- "exit $rc"
    check cmp -s out base -- "output changed"
    check same "$(cat target)" keep -- "the symlink's target was overwritten"
    check test -L r.json -- "the symlink was replaced"
    check same "$(warnings)" 1 -- "$(warnings) warnings, not 1: $(cat err)"
    check has err "is a symbolic link" -- "warning: $(cat err)"
    shim GRAPHSHIM_REPORT=d.json "${DRV[@]}"
    check test ! -e nowhere -- "a dangling symlink's target was created"
}

t_trace_symlink_refused() {
    echo keep >target
    ln -s target t.txt
    shim GRAPHSHIM_TRACE=t.txt "${DRV[@]}"
    check same "$rc" 0 -- "exit $rc"
    check same "$(cat target)" keep -- "the trace was appended to the symlink's target"
    check same "$(warnings)" 1 -- "$(warnings) warnings, not 1: $(cat err)"
}

t_fifo_never_hangs() {
    local reader
    mkfifo f
    shim GRAPHSHIM_REPORT=f "${DRV[@]}"
    check same "$rc" 0 -- "report to a FIFO: exit $rc (124: hung)"
    check has err "is a FIFO" -- "report to a FIFO: $(cat err)"
    shim GRAPHSHIM_TRACE=f "${DRV[@]}"
    check same "$rc" 0 -- "trace to a FIFO without a reader: exit $rc (124: hung)"
    check same "$(warnings)" 1 -- "trace to a FIFO: $(warnings) warnings, not 1: $(cat err)"
    # With a reader the FIFO opens; it must still be refused, and nothing sent.
    timeout 10 cat f >got &
    reader=$!
    sleep 0.2
    shim GRAPHSHIM_TRACE=f "${DRV[@]}"
    check same "$rc" 0 -- "trace to a FIFO with a reader: exit $rc"
    check has err "is a FIFO" -- "trace to a FIFO with a reader: $(cat err)"
    wait "$reader"
    check test ! -s got -- "trace lines went into a FIFO"
}

t_devices_refused() {
    plain "${DRV[@]}"
    shim GRAPHSHIM_REPORT=/dev/full "${DRV[@]}"
    check same "$rc" 0 -- "/dev/full: exit $rc"
    check same "$(warnings)" 1 -- "/dev/full: $(warnings) warnings, not 1: $(cat err)"
    # stdout is the file out: the report must not truncate the program's output.
    shim GRAPHSHIM_REPORT=/dev/stdout "${DRV[@]}"
    check cmp -s out base -- "/dev/stdout: the program's output file was changed"
    check same "$(warnings)" 1 -- "/dev/stdout: $(warnings) warnings, not 1: $(cat err)"
}

t_report_on_stderr_by_name() {
    local name
    plain "${DRV[@]}"
    for name in - stderr; do
        shim GRAPHSHIM_REPORT="$name" "${DRV[@]}"
        check cmp -s out base -- "$name: output changed"
        check has err "graphshim report: engine on" -- "$name: no report on stderr"
        check test ! -e "$name" -- "$name: a file named $name was written"
    done
}

t_files_mode_0644() {
    (umask 000 && shim GRAPHSHIM_REPORT=r.json GRAPHSHIM_TRACE=t.txt "${DRV[@]}")
    check same "$(stat -c %a r.json 2>&1)" 644 -- "report mode $(stat -c %a r.json 2>&1) under umask 000"
    check same "$(stat -c %a t.txt 2>&1)" 644 -- "trace mode $(stat -c %a t.txt 2>&1) under umask 000"
}

t_write_error_keeps_old_report() {
    echo old >r.json
    touch -d '1 minute ago' r.json
    # A file size limit of 1 KiB: the report (JSON, over 1 KiB) cannot be
    # written, as on a full disk.  SIGXFSZ ignored: write fails with EFBIG.
    (trap '' XFSZ && ulimit -f 1 && shim GRAPHSHIM_REPORT=r.json GRAPHSHIM_TRACE=t.txt "${DRV[@]}")
    check same "$(cat r.json)" old -- "a failed write left a half report: $(head -c 80 r.json)"
    check same "$(find . -name '*.tmp' | wc -l)" 0 -- "a temporary file was left"
    check has err "cannot write GRAPHSHIM_REPORT" -- "no warning for the report: $(cat err)"
    check has err "cannot write GRAPHSHIM_TRACE" -- "no warning for the trace: $(cat err)"
    check same "$(warnings)" 2 -- "$(warnings) warnings, not 2 (one per file): $(cat err)"
}

t_long_path_refused_not_cut() {
    # A path over 1023 bytes whose first 1023 would be a valid file name.
    local p=$PWD/ k
    k=$(((1023 - ${#p} - 40) / 2))
    p+=$(printf './%.0s' $(seq "$k"))r$(printf 'x%.0s' $(seq 100)).json
    shim GRAPHSHIM_REPORT="$p" "${DRV[@]}"
    check same "$rc" 0 -- "exit $rc"
    check same "$(ls | grep -c '^r')" 0 -- "a report was written at a cut path: $(ls | grep '^r')"
    check same "$(warnings)" 1 -- "$(warnings) warnings, not 1: $(cat err)"
    check has err "longer than 1023 bytes" -- "warning: $(cut -c1-200 err)"
    shim GRAPHSHIM_TRACE="$p" "${DRV[@]}"
    check same "$(ls | grep -c '^r')" 0 -- "a trace was written at a cut path"
}

t_percent_in_every_path() {
    shim RANK=3 GRAPHSHIM_TRACE='t.%p.%r.%%.txt' GRAPHSHIM_REPORT='r.%p.%r.%%.json' "${DRV[@]}"
    check same "$(ls | grep -cE '^t\.[0-9]+\.3\.%\.txt$')" 1 -- "trace names: $(ls | tr '\n' ' ')"
    check same "$(ls | grep -cE '^r\.[0-9]+\.3\.%\.json$')" 1 -- "report names: $(ls | tr '\n' ' ')"
}

t_same_run_reports_kept() {
    # Two workers of one job at once, one report name.
    shim GRAPHSHIM_REPORT=r.json "$AB/tests/guardprog" spawn sync 4
    check same "$rc" 0 -- "spawn: exit $rc: $(cat err)"
    check same "$(ls | grep -cE '^r(\.[0-9]+)?\.json$')" 2 -- "concurrent workers: $(ls | tr '\n' ' ')"
    check has err "holds the report of another process of this run" -- "no warning: $(cat err)"
    rm -f r*.json
    # Two programs one after the other in one run.
    launcher run --report r.json -- sh -c '"$0" "$@" && "$0" "$@"' "${DRV[@]}"
    check same "$(ls | grep -cE '^r(\.[0-9]+)?\.json$')" 2 -- "one run, two programs: $(ls | tr '\n' ' ')"
    check same "$(warnings)" 1 -- "one run, two programs: $(warnings) warnings, not 1"
    # A new run replaces an earlier run's report, without a word, however soon
    # after it it starts: one after another from a shell without the knob (by
    # the file's time, coarse to a few ms, 13 of 59 such runs warned).
    rm -f r*.json
    shim sh -c 'for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do GRAPHSHIM_REPORT=r.json "$0" "$@" >/dev/null || exit 1; done' \
        "${DRV[@]}"
    check same "$rc" 0 -- "twelve runs: exit $rc: $(cat err)"
    check same "$(ls | grep -c '^r')" 1 -- "twelve runs: $(ls | tr '\n' ' ')"
    check same "$(warnings)" 0 -- "twelve runs: a later one warned: $(cat err)"
    # The same under a wrapper that carries the knob (timeout, srun), started
    # moments after the last run wrote: the report bears its run's name, so no
    # run takes the last one's for a sibling's (by the times alone, 7 of 20 did).
    rm -f r*.json
    if "$AB/tests/runname" --can .; then
        for _ in 1 2 3 4 5 6 7 8; do
            shim GRAPHSHIM_REPORT=r.json timeout 20 "${DRV[@]}"
            cat err >>errs
        done
        check same "$(ls | grep -c '^r')" 1 -- "eight runs under timeout: $(ls | tr '\n' ' ')"
        check same "$(grep -c '^graphshim:' errs)" 0 -- "a run under timeout warned: $(cat errs)"
        check test -n "$("$AB/tests/runname" r.json)" -- "the report bears no run name"
        # Two workers of a shell that set the knob after it started: their walks
        # end at themselves, so the names differ; the quick one's report, written
        # after the slow one started, is still kept (by the names alone it went).
        rm -f r*.json
        launcher run -- sh -c 'export GRAPHSHIM_REPORT=r.json; "$0" body-stall 12 >/dev/null & sleep 0.01; "$1" "$2" "$3" "$4"; wait' \
            "$AB/tests/guardprog" "${DRV[@]}"
        check same "$(ls | grep -cE '^r(\.[0-9]+)?\.json$')" 2 -- "workers of an exporting shell: $(ls | tr '\n' ' '): $(cat err)"
    else
        echo "note: this file system keeps no user attributes: run names not checked" >&2
    fi
}

# --- Knob values and names ----------------------------------------------------

t_blanks_never_accepted() {
    shim GRAPHSHIM=" 0" GRAPHSHIM_WARMUP="5 " GRAPHSHIM_REPORT=r.json "${DRV[@]}"
    check has r.json '"engine": true' -- 'GRAPHSHIM=" 0" turned the engine off'
    check has err 'GRAPHSHIM=" 0" is not valid' -- "GRAPHSHIM=\" 0\": $(cat err)"
    check has err 'GRAPHSHIM_WARMUP="5 " is not valid' -- "GRAPHSHIM_WARMUP=\"5 \": $(cat err)"
    check same "$(warnings)" 2 -- "$(warnings) warnings, not 2: $(cat err)"
    shim GRAPHSHIM_REPORT=" r.json" "${DRV[@]}"
    check test ! -e " r.json" -- "a report path with a blank in front was used"
    check same "$(warnings)" 1 -- "report path with a blank: $(warnings) warnings, not 1"
}

t_values_printed_escaped() {
    shim GRAPHSHIM_WARMUP=$'3\ngraphshim: forged line' "${DRV[@]}"
    check same "$(wc -l <err)" 1 -- "a newline in a value split the warning: $(cat err)"
    check has err 'GRAPHSHIM_WARMUP="3\ngraphshim: forged line" is not valid' -- "not escaped: $(cat err)"
    shim GRAPHSHIM_WARMUP="$(printf '9%.0s' $(seq 3000))" "${DRV[@]}"
    check same "$(wc -l <err)" 1 -- "a long value: $(wc -l <err) lines"
    check has err "using the default, 2" -- "a long value cut the message: $(tail -c 100 err)"
    check test "$(wc -c <err)" -lt 600 -- "a long value was not capped: $(wc -c <err) bytes"
}

t_log_error_silences_warnings() {
    shim GRAPHSHIM_WARMUP=abc GRAPHSHIM_LOG=error "${DRV[@]}"
    check same "$(cat err)" "" -- "GRAPHSHIM_LOG=error printed: $(cat err)"
}

t_unknown_names_named() {
    shim GRAPHSHIM_WARMPU=3 GRAPHSHIM_FROBNICATE_EVERYTHING=1 "${DRV[@]}"
    check has err "GRAPHSHIM_WARMPU is not a graphshim setting (did you mean GRAPHSHIM_WARMUP?)" -- "$(cat err)"
    check has err "GRAPHSHIM_FROBNICATE_EVERYTHING is not a graphshim setting" -- "$(cat err)"
    check same "$(grep -c 'FROBNICATE.*did you mean' err)" 0 -- "a far name got a suggestion: $(cat err)"
    check same "$(warnings)" 2 -- "$(warnings) warnings, not 2"
}

# --- The test-only switch, a late load, the demo ------------------------------

t_test_switch_cannot_be_silenced() {
    LIB=$AB/test/libgraphshim.so shim GRAPHSHIM_TEST_DROP_RULE=sync GRAPHSHIM_LOG=error "${DRV[@]}"
    check has err "GRAPHSHIM_TEST_DROP_RULE=sync is set" -- "GRAPHSHIM_LOG=error silenced it: $(cat err)"
}

t_late_load_noticed() {
    timeout 20 env -i LD_LIBRARY_PATH="$AB/fakecuda" "$AB/tests/lateload" "$LIB" >out 2>err
    check has err "loaded while the program runs (dlopen)" -- "dlopen: $(cat err)"
    check same "$(warnings)" 1 -- "dlopen: $(warnings) lines"
    timeout 20 env -i LD_LIBRARY_PATH="$AB/fakecuda" "$AB/tests/lateload" "$LIB" cuda-first >out 2>err
    check has err "loaded after the CUDA driver" -- "dlopen after libcuda: $(cat err)"
    shim "$AB/tests/lateload" - cuda-first
    check same "$(cat err)" "" -- "preloaded, yet: $(cat err)"
}

t_demo_commands_paste() {
    local cmd n=0 here=$PWD
    BUILD=$B bash "$ROOT/scripts/demo.sh" >demo 2>&1
    check same "$?" 0 -- "demo.sh failed: $(tail -3 demo)"
    while IFS= read -r cmd; do
        n=$((n + 1))
        (cd "$ROOT" && timeout 20 env -i PATH="$PATH" sh -c "${cmd#\$ }" >"$here/pasted" 2>&1)
        check same "$?" 0 -- "pasted '${cmd#\$ }' failed: $(head -2 pasted)"
    done < <(grep '^\$ ' demo)
    check test "$n" -ge 2 -- "demo.sh shows $n commands"
}

# --- Runner -------------------------------------------------------------------

cases=(help_on_stdout version no_arguments unknown_command misspelled_option_is_an_error missing_program
       run_passes_program_and_status readme_shows_help
       report_symlink_refused trace_symlink_refused fifo_never_hangs devices_refused report_on_stderr_by_name
       files_mode_0644 write_error_keeps_old_report long_path_refused_not_cut percent_in_every_path
       same_run_reports_kept
       blanks_never_accepted values_printed_escaped log_error_silences_warnings unknown_names_named
       test_switch_cannot_be_silenced late_load_noticed demo_commands_paste)
[ $# -gt 0 ] && cases=("$@")
passed=0 failed=0
for c in "${cases[@]}"; do
    mkdir "$T/$c"
    why=()
    (
        cd "$T/$c" || exit
        "t_$c"
        for w in ${why[@]+"${why[@]}"}; do echo "$w"; done
    ) >"$T/$c.why"
    if [ -s "$T/$c.why" ]; then
        failed=$((failed + 1))
        echo "FAIL $c"
        sed 's/^/    /' "$T/$c.why" | cut -c1-300
    else
        passed=$((passed + 1))
        echo "PASS $c"
    fi
done
echo "cli: $passed passed, $failed failed"
[ "$failed" = 0 ]
