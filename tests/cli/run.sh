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
# The run's folder, in TMPDIR (make test gives each suite one of its own) or
# /tmp; what the cases' programs write to a temporary folder goes to $T/tmp, so
# that a case that counts files there sees its own alone, however many runs
# share the machine.
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-cli-XXXXXX")
trap 'rm -rf "$T"' EXIT
export TMPDIR=$T/tmp
mkdir "$TMPDIR"

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
    timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" LD_PRELOAD="$LIB" "$@" >out 2>err </dev/null
    rc=$?
}
# plain PROGRAM [ARGS...]: the same without graphshim, stdout in base.
plain() {
    timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" "$@" >base 2>/dev/null </dev/null
}
# launcher ARGS...: the launcher, the same way.
launcher() {
    timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" "$G" "$@" >out 2>err </dev/null
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

t_users_files_kept() {
    local n
    plain "${DRV[@]}"
    echo 'print("train")' >train.py
    echo '{"lr": 0.1}' >config.json
    echo 'my notes' >t2.py
    cp train.py train.keep && cp config.json config.keep && cp t2.py t2.keep
    launcher run --report train.py -- "${DRV[@]}"
    check same "$rc" 0 -- "--report train.py: exit $rc"
    check cmp -s out base -- "--report train.py: the output changed"
    check cmp -s train.py train.keep -- "--report train.py replaced the user's file: $(head -c 80 train.py)"
    check has err "GRAPHSHIM_REPORT=train.py holds a file that is neither a graphshim report nor a trace, so it is kept" -- \
        "--report train.py: $(cat err)"
    check same "$(warnings)" 1 -- "--report train.py: $(warnings) warnings, not 1: $(cat err)"
    launcher run --report config.json -- "${DRV[@]}"
    check cmp -s config.json config.keep -- "--report config.json replaced the user's file"
    launcher run --trace t2.py -- "${DRV[@]}"
    check cmp -s t2.py t2.keep -- "--trace t2.py appended to the user's file: $(tail -1 t2.py)"
    check has err "GRAPHSHIM_TRACE=t2.py holds a file that is neither" -- "--trace t2.py: $(cat err)"
    # Asked for: replaced, and so is a file of graphshim's without a word.
    launcher run --force --report config.json --trace t2.py -- "${DRV[@]}"
    check same "$(warnings)" 0 -- "--force: $(cat err)"
    check has config.json '"engine": true' -- "--force: config.json not replaced: $(head -c 80 config.json)"
    check hasnt t2.py 'my notes' -- "--force: t2.py kept the user's lines"
    check has t2.py 'tid=' -- "--force: no trace in t2.py"
    n=$(grep -c '^tid=' t2.py)
    launcher run --report config.json --trace t2.py -- "${DRV[@]}"
    check same "$(warnings)" 0 -- "a report and a trace of graphshim's: $(cat err)"
    check same "$(grep -c '^tid=' t2.py)" "$((2 * n))" -- "a trace was not appended to: $(grep -c '^tid=' t2.py) lines"
    # GRAPHSHIM_FORCE, the variable, and an empty file (nothing to lose).
    cp train.keep train.py
    shim GRAPHSHIM_FORCE=1 GRAPHSHIM_REPORT=train.py "${DRV[@]}"
    check has train.py 'graphshim report: engine on' -- "GRAPHSHIM_FORCE=1: not replaced: $(head -c 80 train.py)"
    : >empty.json
    shim GRAPHSHIM_REPORT=empty.json "${DRV[@]}"
    check has empty.json '"engine": true' -- "an empty file was not replaced: $(cat err)"
}

t_report_and_trace_one_file() {
    launcher run --report x.txt --trace x.txt -- "${DRV[@]}"
    check same "$rc" 0 -- "exit $rc"
    check has err "GRAPHSHIM_REPORT=x.txt is the file GRAPHSHIM_TRACE writes this process's trace to" -- "$(cat err)"
    check hasnt err "another process" -- "the clash blamed on another process: $(cat err)"
    check same "$(warnings)" 1 -- "$(warnings) warnings, not 1: $(cat err)"
    check same "$(ls | grep -c '^x')" 1 -- "files: $(ls | tr '\n' ' ')"
    check has x.txt 'tid=' -- "the trace was lost: $(head -c 80 x.txt)"
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

t_report_keeps_its_mode() {
    shim GRAPHSHIM=0 GRAPHSHIM_REPORT=r.json "${DRV[@]}"
    touch -d '1 minute ago' r.json
    chmod 600 r.json
    shim GRAPHSHIM_REPORT=r.json "${DRV[@]}"
    check has r.json '"engine": true' -- "the report was not replaced: $(head -c 80 r.json)"
    check same "$(stat -c %a r.json 2>&1)" 600 -- "a 0600 report became $(stat -c %a r.json 2>&1)"
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

t_failed_trace_leaves_no_empty_file() {
    # No byte can be written to a file (a file size limit of 0, as on a full
    # disk); the program's stderr is a pipe, which the limit spares.
    (trap '' XFSZ && ulimit -f 0 && exec timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" \
        LD_PRELOAD="$LIB" GRAPHSHIM_TRACE=t.txt "${DRV[@]}" 2>&1 >/dev/null </dev/null) | cat >err
    check test ! -e t.txt -- "an empty trace was left: $(ls -l t.txt 2>&1)"
    check has err "cannot write GRAPHSHIM_TRACE=t.txt" -- "no warning: $(cat err)"
    check same "$(warnings)" 1 -- "$(warnings) warnings, not 1: $(cat err)"
    # A trace that was there is never removed.
    : >t.txt
    (trap '' XFSZ && ulimit -f 0 && exec timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" \
        LD_PRELOAD="$LIB" GRAPHSHIM_TRACE=t.txt "${DRV[@]}" 2>&1 >/dev/null </dev/null) | cat >err
    check test -e t.txt -- "a trace that was there was removed"
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

t_reports_at_once_all_kept() {
    local i lost=0
    # Two short processes started at once by one shell, one report name, twelve
    # times: the first often writes before graphshim is loaded in the second
    # (without the siblings in its stamp, 4 of 12 reports were lost silently).
    # Each waits, started, for the other (a loaded machine may start the second
    # only after the first ended: two runs one after the other, which no stamp
    # tells from one run), then becomes the program.
    for i in $(seq 12); do
        rm -f r*.json started go
        for _ in 1 2; do
            timeout 20 env -i TMPDIR="$TMPDIR" LD_LIBRARY_PATH="$AB/fakecuda" LD_PRELOAD="$LIB" GRAPHSHIM_REPORT=r.json \
                sh -c 'echo >>started; until [ -e go ]; do sleep 0.005; done; exec "$@"' sh \
                "${DRV[@]}" >/dev/null 2>>errs </dev/null &
        done
        for _ in $(seq 2000); do [ "$(cat started 2>/dev/null | wc -l)" = 2 ] && break; sleep 0.005; done
        : >go
        wait
        [ "$(ls | grep -cE '^r(\.[0-9]+)?\.json$')" = 2 ] || lost=$((lost + 1))
    done
    check same "$lost" 0 -- "a report was lost in $lost of 12 tries"
    check same "$(grep -c 'holds the report of another process' errs)" 12 -- "warnings: $(sort errs | uniq -c | head -3)"
}

# --- graphshim report ---------------------------------------------------------

# total FILE KEY: the count KEY of a report's totals.
total() { sed -n 's/.*"totals": {.*"'"$2"'": \([0-9.]*\).*/\1/p' "$1" | head -1; }

t_report_input_bounded() {
    launcher report /dev/zero
    check same "$rc" 2 -- "/dev/zero: exit $rc (124: read without end)"
    check has err "cannot read /dev/zero (a NUL byte in it" -- "/dev/zero: $(head -c 200 err)"
    timeout 20 "$G" report - < <(yes) >out 2>err
    rc=$?
    check same "$rc" 2 -- "endless standard input: exit $rc (124: read without end)"
    check has err "cannot read standard input (more than 64 MiB" -- "endless standard input: $(head -c 200 err)"
    mkdir empty
    launcher report empty
    check same "$rc" 2 -- "an empty folder: exit $rc"
    check has err "the folder empty holds no report" -- "an empty folder: $(cat err)"
    check hasnt err "Input/output error" -- "a folder: $(cat err)"
}

t_report_from_standard_input() {
    shim GRAPHSHIM_REPORT=r.json "$AB/tests/guardprog" sync 8
    timeout 20 "$G" report --json - <r.json >out 2>err
    check same "$?" 0 -- "report --json -: $(cat err)"
    check cmp -s out r.json -- "report --json - did not print the report unchanged"
    timeout 20 "$G" report - <r.json >out 2>err
    check has out "graphshim report: 1 report (-), engine on in 1" -- "report -: $(head -2 out)"
}

t_report_printed_safely() {
    slow_report
    # A stream kind with an escape sequence, a bail name with a newline and one
    # with a byte that is not UTF-8, a file name with an escape.
    sed -e 's/"kind": "created"/"kind": "\\u001b]0;owned\\u0007"/' \
        -e 's/"bails": {"mismatch"/"bails": {"forged\\ngraphshim report: ok": 1, "bad\xff": 1, "mismatch"/' r.json >$'e\033[31m.json'
    launcher report $'e\033[31m.json'
    check same "$rc" 0 -- "exit $rc: $(cat err)"
    check same "$(grep -c $'\033' out)" 0 -- "an escape character printed raw: $(grep -a $'\033' out | cat -v | head -3)"
    check same "$(grep -c $'\xff' out)" 0 -- "a byte that is not UTF-8 printed raw"
    check has out '\x1b]0;owned\x07' -- "the kind not shown escaped: $(grep created out | cat -v)"
    check has out 'forged\x0agraphshim report: ok' -- "the bail name not shown escaped: $(grep -a forged out | cat -v)"
    check has out 'bad\xff' -- "the byte not shown escaped: $(grep -a 'bad' out | cat -v)"
    check same "$(grep -c '^graphshim report: ok' out)" 0 -- "a forged line: $(grep '^graphshim report: ok' out)"
    launcher report --json $'e\033[31m.json' r.json
    check same "$(grep -c $'\033\|\xff' out)" 0 -- "--json printed raw bytes: $(cat -v out | head -3)"
}

t_report_tool_linear_and_defined() {
    local names
    slow_report
    # 100,000 distinct bail names: quadratic took 51 s.
    awk 'BEGIN { printf "{"; for (i = 0; i < 100000; i++) printf "%s\"b%d\": 1", i ? ", " : "", i; printf "}" }' >names
    awk 'NR == FNR { n = $0; next } !done && sub(/"bails": \{[^}]*\}/, "\"bails\": " n) { done = 1 } { print }' names r.json >big.json
    SECONDS=0
    timeout 20 "$AB/tests/graphshim-report-ubsan" big.json >out 2>err
    check same "$?" 0 -- "100,000 bail names: exit $? (124: over 20 s): $(head -3 err)"
    check test "$SECONDS" -lt 5 -- "100,000 bail names: $SECONDS s"
    # The same names, each sampled at a site of its own: a search of all sites
    # for each name took 32 s.
    awk 'BEGIN { printf "{"; for (i = 0; i < 100000; i++)
        printf "%s\"b%d\": [{\"site\": \"f%d\", \"object\": \"p\", \"count\": 1, \"sampled\": 1, \"kernels\": []}]",
               i ? ", " : "", i, i; printf "}" }' >sites
    awk 'NR == FNR { n = $0; next } /"bail_sites": \{/ { print "  \"bail_sites\": " n ","; skip = 1; next }
         skip && /^  \},$/ { skip = 0; next } !skip { print }' sites big.json >sites.json
    SECONDS=0
    timeout 20 "$AB/tests/graphshim-report-ubsan" sites.json >out 2>err
    check same "$?" 0 -- "100,000 bail names with sites: exit $? (124: over 20 s): $(head -3 err)"
    check test "$SECONDS" -lt 5 -- "100,000 bail names with sites: $SECONDS s"
    check same "$(grep -c '^            at f[0-9]* (p): 1$' out)" 100000 -- "sites printed: $(grep -c ' at f' out)"
    # Under the sanitizer: a report without bails or sequences (qsort of none),
    # and bail counts whose sum overflows a long long.
    timeout 20 "$AB/tests/graphshim-report-ubsan" r.json >out 2>err
    check same "$?/$(cat err)" "0/" -- "a plain report under UBSan: $(head -3 err)"
    sed -E 's/"bails": \{[^}]*\}/"bails": {}/g' r.json >nobails.json
    timeout 20 "$AB/tests/graphshim-report-ubsan" nobails.json >out 2>err
    check same "$?/$(cat err)" "0/" -- "a report of no bails under UBSan: $(head -3 err)"
    sed -E 's/"bails": \{"mismatch": [0-9]+/"bails": {"mismatch": 9223372036854775807, "x": 9223372036854775807/' r.json >huge.json
    cp huge.json huge2.json
    timeout 20 "$AB/tests/graphshim-report-ubsan" huge.json huge2.json >out 2>err
    check same "$?/$(cat err)" "0/" -- "huge bail counts under UBSan: $(head -3 err)"
    timeout 20 "$AB/tests/graphshim-report-ubsan" --json huge.json huge2.json >out 2>err
    check same "$?/$(cat err)" "0/" -- "huge bail counts summed under UBSan: $(head -3 err)"
}

# svg_text SVG: the picture's words, a line per <text>, as a reader sees them.
svg_text() { sed -n 's/.*<text[^>]*>\(.*\)<\/text>$/\1/p' "$1" | sed 's/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g'; }

# has_seq FILE WORDS: FILE has WORDS followed by " (" or ":".
has_seq() { grep -qF -- "$2 (" "$1" || grep -qF -- "$2:" "$1"; }

# picture_agrees REPORT SVG: the words each stream, sequence, bail and total of
# REPORT (graphshim's JSON, a stream or sequence a line) must show in SVG.
picture_agrees() {
    local line
    svg_text "$2" >words
    {
        awk '/"totals":/ { match($0, /"ops": [0-9]+/); o = substr($0, RSTART + 7, RLENGTH - 7)
                           match($0, /"ops_replayed": [0-9]+/); r = substr($0, RSTART + 16, RLENGTH - 16)
                           match($0, /"launches_saved": [0-9]+/); l = substr($0, RSTART + 18, RLENGTH - 18)
                           printf "ops %d, replayed as graphs %d: hit rate %.1f%%\n", o, r, o ? 100 * r / o : 0
                           printf "graphs saved %d launches\n", l }' "$1"
        sed -n 's/^    {"id": \([0-9]*\), "stream": "\([^"]*\)", "kind": "\([^"]*\)", "ctx": \([0-9a-z]*\),.*/stream \1 \2 (\3, ctx \4)/p' "$1" |
            sed 's/ctx null)/ctx none)/'
        sed -n 's/^        {"ops": \([0-9]*\), "seen": \([0-9]*\),.*/sequence of \1 ops@: seen \2,/p' "$1"
        # Each stream's bails, each with the top site of its reason.
        grep '^    {"id"' "$1" | sed 's/.*"bails": {\([^}]*\)}.*/\1/' | tr ',' '\n' | sed -n 's/ *"\([^"]*\)": \([0-9]*\)/\2 \1/p' |
            while read -r n reason; do
                printf 'bailed %s x %s%s\n' "$n" "$reason" "$(sed -n 's/^    "'"$reason"'": \[{"site": "\([^"]*\)", "object": "\([^"]*\)".*/ at \1 (\2)/p' "$1")"
            done
    } >want
    check test -s want -- "nothing to look for in $1"
    while IFS= read -r line; do
        # "@" stands for the kinds' words, " (...)" or none, after the length.
        if [ "$line" = "${line#*@}" ]; then
            check has words "$line" -- "$2 lacks '$line' of $1: $(grep -F "${line%% *}" words | head -3)"
        else
            check has_seq words "${line%%@*}" -- "$2 lacks '${line%%@*}' of $1: $(grep -F "${line%% *}" words | head -3)"
            check has words "${line#*@}" -- "$2 lacks '${line#*@}': $(head -c 300 words)"
        fi
    done <want
}

t_report_picture() {
    local sc letters ticks
    command -v rsvg-convert >/dev/null || { why+=("rsvg-convert is not installed (apt-get install librsvg2-bin)"); return; }
    for sc in "mixed10 12" "mixed5000 8" "sites 60"; do
        shim GRAPHSHIM_REPORT="r.${sc% *}.json" "$AB/tests/guardprog" $sc
        launcher report --svg "${sc% *}.svg" "r.${sc% *}.json"
        check same "$rc/$(cat out err)" 0/ -- "report --svg for ${sc% *}: exit $rc: $(cat out err)"
        rsvg-convert -o "${sc% *}.png" "${sc% *}.svg" 2>err
        check same "$?/$(cat err)" 0/ -- "the renderer refused ${sc% *}.svg: $(cat err)"
        check same "$(head -c 4 "${sc% *}.png" | tail -c 3)" PNG -- "${sc% *}.png is no PNG"
        picture_agrees "r.${sc% *}.json" "${sc% *}.svg"
    done
    # A short step shows each op's kind, in order, and its chunk boundary.
    letters=$(sed -n 's/.*"shape": "\([^"]*\)".*/\1/p' r.mixed10.json)
    # mixed10 issues its input kernel, 4 kernels, a memset, 3 kernels, a copy to the host.
    check same "${letters//|/}" KKKKKSKKKD -- "the report's shape of mixed10: $letters"
    check same "$(sed -n 's/.*class="op">\(.\)<.*/\1/p' mixed10.svg | tr -d '\n')" "${letters//|/}" -- \
        "the ops' kinds: $(sed -n 's/.*class="op">\(.\)<.*/\1/p' mixed10.svg | tr -d '\n'), not ${letters//|/}"
    # Its ticks: where early chunks ended, where its replays launched some (more
    # graph launches than replays).
    ticks=$(awk -v n="$(tr -cd '|' <<<"$letters" | wc -c)" '/"shape"/ { match($0, /"replays": [0-9]+/); r = substr($0, RSTART + 11, RLENGTH - 11)
        match($0, /"graph_launches": [0-9]+/); l = substr($0, RSTART + 18, RLENGTH - 18); print (l + 0 > r + 0 ? n : 0) }' r.mixed10.json)
    check same "$(grep -c 'width="2" height=".*fill="#000"' mixed10.svg)" "$ticks" -- \
        "chunk boundaries: $(grep -c 'fill="#000"' mixed10.svg) drawn for shape $letters, not $ticks"
    # A step of 5000 ops is drawn to scale, not as 5000 boxes.
    svg_text mixed5000.svg >words
    check has words "op 5000 (to scale:" -- "5000 ops not to scale: $(grep 'op 5000' words)"
    check test "$(grep -c '<rect' mixed5000.svg)" -lt 700 -- "5000 ops: $(grep -c '<rect' mixed5000.svg) rectangles"
    # A report before shapes and graph launches: its steps by their length.
    sed 's/"graph_launches": [0-9]*, //; s/, "shape": "[^"]*"//' r.mixed10.json >old.json
    launcher report --svg old.svg old.json
    check same "$rc" 0 -- "a report without shapes: exit $rc: $(cat err)"
    picture_agrees old.json old.svg
    # What the report holds is escaped, and a picture that cannot be written is said.
    sed -e 's/"kind": "created"/"kind": "\\u001b]0;<owned>\&\\u0007"/' r.sites.json >evil.json
    launcher report --svg evil.svg evil.json
    rsvg-convert -o evil.png evil.svg 2>err
    check same "$?/$(cat err)" 0/ -- "the renderer refused a report's markup: $(cat err)"
    check same "$(grep -c $'\033' evil.svg)" 0 -- "an escape character drawn raw"
    check has evil.svg '(\x1b]0;&lt;owned&gt;&amp;\x07, ctx 0)' -- "the kind not escaped: $(grep -a 'stream 0' evil.svg)"
    launcher report --svg no/such/dir/x.svg r.sites.json
    check same "$rc" 2 -- "an unwritable picture: exit $rc, not 2"
    check has err "cannot write no/such/dir/x.svg" -- "an unwritable picture: $(cat err)"
}

# job_run RANK MODE: a rank of a job over the fake driver, under the launcher,
# its report in job/r.RANK.json.
job_run() {
    timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" RANK="$1" \
        "$G" run --report 'job/r.%r.json' -- "$AB/tests/guardprog" "$2" 8 >/dev/null 2>>errs
}

# rank_line RANK REPORT: the row the job summary must print for a rank's report.
rank_line() {
    awk -v r="$1" -v h="$(total "$2" hit_rate)" -v s="$(total "$2" launches_saved)" -v g="$(total "$2" graphs_captured)" \
        'BEGIN { printf "  %4s %7.1f%% %15d %8d", r, 100 * h, s, g }'
}

t_job_report() {
    local r
    # Rank 2 runs NCCL kernels, which are never held: it gains least.
    for r in 0 1 2 3; do
        job_run "$r" "$([ "$r" = 2 ] && echo nccl || echo sync)"
    done
    check same "$(cat errs)" "" -- "the ranks warned: $(cat errs)"
    check test -d job -- "the folder job/ was not made"
    check same "$(ls job | tr '\n' ' ')" "r.0.json r.1.json r.2.json r.3.json " -- "job/: $(ls job | tr '\n' ' ')"
    launcher report job/
    check same "$rc" 0 -- "report job/: exit $rc: $(cat err)"
    check has out "graphshim report: 4 reports (job/), engine on in 4" -- "report job/: $(head -1 out)"
    check has out "ranks (4 reports)" -- "report job/: no ranks: $(head -8 out)"
    for r in 0 1 2 3; do
        check has out "$(rank_line "$r" "job/r.$r.json")" -- "rank $r: '$(rank_line "$r" "job/r.$r.json")' not in: $(grep -A5 '^ranks' out)"
    done
    check has out "least gain: rank 2 (job/r.2.json)" -- "least gain: $(grep 'least gain' out)"
    check test "$(grep 'least gain' out | grep -c 'unholdable-op')" = 1 -- "why rank 2: $(grep 'least gain' out)"
    check has out "    unholdable-op: " -- "no hint for rank 2's bail: $(grep -A3 'least gain' out)"
    # The same job from a list of files, and as JSON.
    sed -n '/^ranks/,/^$/p' out >folder
    launcher report job/r.3.json job/r.1.json job/r.0.json job/r.2.json
    sed -n '/^ranks/,/^$/p' out >files
    check cmp -s folder files -- "files and folder differ: $(diff folder files | head -4 | tr '\n' ' ')"
    launcher report --json job
    check same "$rc" 0 -- "report --json job: exit $rc"
    check same "$(grep -c '^    {"rank": [0-3], "report": "job/r.[0-3].json"' out)" 4 -- "--json ranks: $(cat out)"
    check has out '"least_gain": {"rank": 2, "report": "job/r.2.json"' -- "--json least_gain: $(grep least_gain out)"
    check has out '"reports": 4,' -- "--json: $(head -3 out)"
    check same "$(total out launches_saved)" "$(for r in 0 1 2 3; do total "job/r.$r.json" launches_saved; done |
        awk '{ n += $1 } END { print n + 0 }')" -- "--json totals: $(grep totals out)"
}

t_nodes_set_named_alike() {
    local n
    shim GRAPHSHIM_REPORT=r.json GRAPHSHIM_LOG=info "$AB/tests/guardprog" params 12
    n=$(total r.json nodes_patched)
    check test "${n:-0}" -gt 0 -- "no nodes set: $(grep totals r.json)"
    check has err "($n nodes set)" -- "the library's text: $(grep 'in place' err)"
    launcher report r.json
    check has out "($n nodes set)" -- "graphshim report: $(grep 'in place' out)"
    check has "$ROOT/docs/report.md" "(M nodes set)" -- "docs/report.md names it otherwise"
    check same "$(cat "$ROOT/docs/report.md" out err | grep -c 'launches patched\|kernel nodes set')" 0 -- "another name"
}

# seq_key FILE OPS KEY: KEY of the report's sequence of OPS ops ("" where it has none).
seq_key() { grep -o '{"ops": '"$2"', [^}]*}' "$1" | head -1 | sed -n 's/.*"'"$3"'": \([-0-9.]*\).*/\1/p'; }
# seq_word FILE OPS KEY: the same for a string value
seq_word() { grep -o '{"ops": '"$2"', [^}]*}' "$1" | head -1 | sed -n 's/.*"'"$3"'": "\([^"]*\)".*/\1/p'; }

t_sequence_cost_shown() {
    local k cells=()
    # params: 3 kernels whose buffers alternate, timed eagerly and replayed.
    shim GRAPHSHIM_REPORT=r.json "$AB/tests/guardprog" params 12
    for k in graph_launches nodes_set graph_host_us eager_us replay_us saved_us build_us; do
        cells+=("$(seq_key r.json 3 "$k")")
    done
    check test -n "${cells[3]}" -a -n "${cells[5]}" -- "params 12: no eager_us or saved_us: $(grep '"ops": 3' r.json)"
    launcher report r.json
    check has out "graph_launches nodes_set graph_host_us   eager_us  replay_us     saved_us   build_us" -- "header: $(grep rank out)"
    check has out "$(printf '%14s %9s %13s %10s %10s %12s %10s  ' "${cells[@]}")" -- \
        "the row of $(grep '"ops": 3' r.json): $(sed -n '/^sequences/,/^$/p' out)"
    # What ended the sequence and the gain check's word, after build_us.
    check test "$(seq_word r.json 3 ended_by)" = sync -- "params 12: $(grep '"ops": 3' r.json)"
    check has out "$(printf '%10s  %-8s %-8s  ' "${cells[6]}" sync "$(seq_word r.json 3 gain)")" -- \
        "$(sed -n '/^sequences/,/^$/p' out)"
    # A report of an earlier version, without them: "-" in each column.
    sed -E 's/, "graph_launches": [^}]*}/}/' r.json >old.json
    launcher report old.json
    check same "$rc" 0 -- "an earlier report: exit $rc: $(cat err)"
    check has out "$(printf '%14s %9s %13s %10s %10s %12s %10s  %-8s %-8s  ' - - - - - - - - -)" -- \
        "$(sed -n '/^sequences/,/^$/p' out)"
}

# calls FILE: the driver calls the fake driver's log FILE holds.
calls() { wc -l <"$1" | tr -d ' '; }

t_headline_nets_own_calls() {
    local sc net
    # The fake driver logs every call: the report's net must be the difference.
    for sc in "params 40" "loop1 4" "sync 8" "slow 20"; do
        rm -f without with r.json
        timeout 20 env -i TMPDIR="$TMPDIR" FAKECUDA_LOG=without LD_LIBRARY_PATH="$AB/fakecuda" "$AB/tests/guardprog" $sc >/dev/null 2>&1
        shim FAKECUDA_LOG=with GRAPHSHIM_REPORT=r.json GRAPHSHIM_LOG=info "$AB/tests/guardprog" $sc
        net=$(sed -n 's/.*"net_calls_saved": \(-*[0-9]*\).*/\1/p' r.json | head -1)
        check same "$net" "$(($(calls without) - $(calls with)))" -- \
            "$sc: net_calls_saved $net, the fake driver's log: $(calls without) calls without, $(calls with) with"
        check same "$(total r.json own_calls)" "$(($(calls with) - $(calls without) + $(total r.json ops_replayed)))" -- \
            "$sc: own_calls $(total r.json own_calls)"
        check has err "driver calls: net ${net#-} $([ "${net:-0}" -lt 0 ] && echo more || echo fewer) than without graphshim" -- \
            "$sc: the text: $(grep 'driver calls' err)"
        launcher report r.json
        check has out "driver calls: net ${net#-} " -- "$sc: graphshim report: $(sed -n 2,4p out)"
    done
    # One meaning of "rank": the MPI rank.  The other tables number their rows.
    check same "$(grep -c '^  *rank ' out)" 0 -- "a table's sort position is called rank: $(grep '^  *rank ' out)"
    check has out "     # " -- "no # column: $(grep launches_saved out | head -2)"
    check has "$ROOT/README.md" "False until the program's first CUDA call" -- "the README does not say when active() is True"
    check has "$ROOT/README.md" "ops_held" -- "the README does not name counters()' fields"
}

t_no_cuda_call_no_report_said() {
    launcher run --report r.json -- true
    check same "$rc" 0 -- "run -- true: exit $rc"
    check test ! -e r.json -- "a report of no CUDA call"
    check has err "GRAPHSHIM_REPORT=r.json: no report was written, as no process of this run made a CUDA driver call" -- \
        "no word: $(cat err)"
    check same "$(warnings)" 1 -- "run -- true: $(warnings) warnings, not 1: $(cat err)"
    # The first process of the run speaks for the rest: once.
    launcher run --report r.json -- bash -c '/bin/true; /bin/true; exit 0'
    check same "$(warnings)" 1 -- "bash and two children: $(warnings) warnings, not 1: $(cat err)"
    # Where a child made the calls and wrote the report, nothing is said.
    launcher run --report 'job/r.%r.json' -- bash -c 'RANK=0 "$0" "$@" && RANK=1 "$0" "$@"; exit 0' "${DRV[@]}"
    check test -s job/r.1.json -- "no report of rank 1: $(cat err)"
    check same "$(warnings)" 0 -- "the children wrote, yet: $(cat err)"
    launcher run --report r.json -- "${DRV[@]}"
    check same "$(warnings)" 0 -- "a CUDA program: $(cat err)"
    shim GRAPHSHIM_REPORT=r2.json GRAPHSHIM_LOG=error true
    check same "$(cat err)" "" -- "GRAPHSHIM_LOG=error: $(cat err)"
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

# The on/off knobs, as docs/knobs.md (generated from the knob table) lists them.
bool_knobs() { sed -n 's/^| `\(GRAPHSHIM[A-Z_]*\)` | bool |.*/\1/p' "$ROOT/docs/knobs.md"; }

t_on_off_words() {
    local k w want n=0
    shim GRAPHSHIM=off GRAPHSHIM_REPORT=r.json "${DRV[@]}"
    check has r.json '"engine": false' -- "GRAPHSHIM=off left the engine on"
    check same "$(warnings)" 0 -- "GRAPHSHIM=off: $(cat err)"
    for k in $(bool_knobs); do
        n=$((n + 1))
        for w in 1 0 on off ON Off true false TRUE False yes no YES nO; do
            case $w in [1oOtTyY]*) want=1 ;; *) want=0 ;; esac
            case $w in [oO][fF][fF]) want=0 ;; esac
            shim "$k=$w" GRAPHSHIM_LOG=debug "${DRV[@]}"
            check has err "setting $k=$want" -- "$k=$w: not $want: $(grep "setting $k=" err)"
            check same "$(grep -c 'is not valid' err)" 0 -- "$k=$w refused: $(grep 'not valid' err)"
        done
        shim "$k=maybe" "${DRV[@]}"
        check has err "$k=\"maybe\" is not valid (expected 1 or 0 (or on/off, true/false, yes/no))" -- "$k=maybe: $(cat err)"
    done
    check test "$n" -ge 4 -- "docs/knobs.md lists $n on/off knobs"
}

t_empty_value_warned() {
    shim GRAPHSHIM_WARMUP= GRAPHSHIM= GRAPHSHIM_REPORT=r.json "${DRV[@]}"
    check has err "GRAPHSHIM_WARMUP is set to the empty string" -- "GRAPHSHIM_WARMUP=: $(cat err)"
    check has err "GRAPHSHIM is set to the empty string, which is no value; using the default, 1" -- "GRAPHSHIM=: $(cat err)"
    check same "$(warnings)" 2 -- "$(warnings) warnings, not 2: $(cat err)"
    check has r.json '"engine": true' -- "GRAPHSHIM= turned the engine off"
    shim GRAPHSHIM_REPORT= "${DRV[@]}"
    check has err "GRAPHSHIM_REPORT is set to the empty string" -- "GRAPHSHIM_REPORT=: $(cat err)"
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

# --- Checks: graphshim report --check, GRAPHSHIM_CHECK -------------------------

# A report of guardprog slow 20: hit rate 0.7-0.85, 70-90 launches saved, one stream.
slow_report() {
    shim GRAPHSHIM_REPORT=r.json "$AB/tests/guardprog" slow 20
}

t_report_check_pass() {
    slow_report
    launcher report --check 'hit_rate>=0.5' --check 'launches_saved >= 10, streams.replays>=1' r.json
    check same "$rc" 0 -- "checks that hold: exit $rc, not 0: $(cat out err)"
    check same "$(cat out err)" "" -- "checks that hold printed: $(cat out err)"
}

t_report_check_fail() {
    slow_report
    cp r.json r2.json
    launcher report --check 'hit_rate>=0.99' --check 'launches_saved>=1000,ops>=1' --check 'streams.replays>1000' \
        r.json r2.json
    check same "$rc" 1 -- "failed checks: exit $rc, not 1"
    check same "$(wc -l <out)" 4 -- "not one line per failed check (and stream): $(cat out)"
    check has out "check failed: hit_rate>=0.99: hit_rate is 0." -- "hit_rate: $(cat out)"
    check has out "check failed: launches_saved>=1000: launches_saved is" -- "launches_saved: $(cat out)"
    check has out "(2 reports)" -- "the job's sum not named: $(cat out)"
    check same "$(grep -c 'streams.replays>1000: stream 0 (created' out)" 2 -- "per stream: $(cat out)"
    check hasnt out "ops>=1:" -- "a check that holds printed: $(cat out)"
}

t_report_check_bad_expression() {
    local e
    slow_report
    for e in 'hit_rate>>0.8' 'hit_rate>=' 'hit_rate' '>=0.8' 'hit_rate>=0.8x' 'hit_rate>=0.8,' ''; do
        launcher report --check "$e" r.json
        check same "$rc" 2 -- "bad check '$e': exit $rc, not 2"
        check has err "bad check" -- "bad check '$e': $(cat err)"
        check same "$(cat out)" "" -- "bad check '$e' printed: $(cat out)"
    done
    # The message quotes the check: an escape in it is shown, not sent.
    launcher report --check $'hit\033]0;owned\007_rate>=1' r.json
    check same "$rc" 2 -- "a check with an escape: exit $rc, not 2"
    check same "$(grep -c $'\033' err)" 0 -- "an escape character printed raw: $(cat -v err)"
    check has err 'hit\x1b]0;owned\x07_rate>=1' -- "the check not shown escaped: $(cat -v err)"
}

t_report_check_unknown_field() {
    slow_report
    launcher report --check 'hitrate>=0.8' r.json
    check same "$rc" 2 -- "unknown field: exit $rc, not 2"
    check has err "unknown field 'hitrate' in check 'hitrate>=0.8'" -- "unknown field: $(cat err)"
    check has err "hit_rate, replays" -- "the fields known not listed: $(cat err)"
    launcher report --check 'streams.graphs_alive>=1' r.json
    check same "$rc" 2 -- "a total's name as a stream's: exit $rc, not 2"
}

t_check_at_exit() {
    plain "$AB/tests/guardprog" slow 20
    shim GRAPHSHIM_CHECK='hit_rate>=0.99, ops>=1' "$AB/tests/guardprog" slow 20
    check same "$rc" 0 -- "GRAPHSHIM_CHECK changed the exit status: $rc"
    check same "$(cat out)" "$(cat base)" -- "GRAPHSHIM_CHECK changed the output"
    check same "$(cat err)" "graphshim: check failed: hit_rate>=0.99: hit_rate is $(sed -n 's/.*is //p' err)" -- \
        "not one line for the failed check: $(cat err)"
    shim GRAPHSHIM_CHECK='hit_rate>=0.99' GRAPHSHIM_CHECK_EXIT=1 "$AB/tests/guardprog" slow 20
    check same "$rc" 1 -- "GRAPHSHIM_CHECK_EXIT=1: exit $rc, not 1"
    shim GRAPHSHIM_CHECK='hit_rate>=0.5' GRAPHSHIM_CHECK_EXIT=1 "$AB/tests/guardprog" slow 20
    check same "$rc/$(cat err)" "0/" -- "a check that holds: exit $rc, $(cat err)"
    shim GRAPHSHIM_CHECK='hitrate>=0.5' "$AB/tests/guardprog" slow 20
    check same "$rc/$(warnings)" "0/1" -- "a bad GRAPHSHIM_CHECK without _EXIT: exit $rc, $(cat err)"
    check has err "GRAPHSHIM_CHECK: unknown field 'hitrate'" -- "a bad GRAPHSHIM_CHECK: $(cat err)"
}

t_check_exit_bad_expression_fails() {
    shim GRAPHSHIM_CHECK='bogus>=1' GRAPHSHIM_CHECK_EXIT=1 "$AB/tests/guardprog" slow 20
    check same "$rc" 2 -- "a bad GRAPHSHIM_CHECK with _EXIT: exit $rc, not 2: $(cat err)"
    check has err "unknown field 'bogus'" -- "the bad check not named: $(cat err)"
    check has err "so the run fails with exit status 2" -- "the failure not said: $(cat err)"
    # The same where graphshim never started.
    shim GRAPHSHIM_CHECK='bogus>=1' GRAPHSHIM_CHECK_EXIT=1 true
    check same "$rc" 2 -- "a bad GRAPHSHIM_CHECK, no CUDA: exit $rc, not 2: $(cat err)"
}

t_check_exit_nothing_measured_fails() {
    shim GRAPHSHIM_CHECK='graph_failures==0' GRAPHSHIM_CHECK_EXIT=1 true
    check same "$rc" 1 -- "no CUDA call under the gate: exit $rc, not 1"
    check has err "check failed: nothing was measured" -- "no CUDA call: $(cat err)"
    # A shell that starts the CUDA program passes where the program does (bash
    # ends with exit, and so judges; dash ends with _exit, and says nothing).
    timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" GRAPHSHIM_CHECK='ops>=1' GRAPHSHIM_CHECK_EXIT=1 \
        "$G" run -- bash -c '"$0" "$@" >/dev/null; exit 0' "${DRV[@]}" >out 2>err </dev/null
    check same "$?/$(cat err)" "0/" -- "a shell around a CUDA program failed the gate: $(cat err)"
    check same "$(ls -A "$TMPDIR" | grep -c "^graphshim-gate\.$(id -u)\.")" 0 -- "a mark was left in the temporary folder"
    # In the report tool: reports that count no op.
    slow_report
    sed -E 's/"ops": [0-9]+/"ops": 0/g' r.json >zero.json
    launcher report --check 'graph_failures==0' zero.json
    check same "$rc" 1 -- "a report of no op passed the gate: exit $rc"
    check has out "nothing was measured" -- "no op: $(cat out)"
}

t_check_streams_never_vacuous() {
    slow_report
    awk '/"streams": \[/ { print "  \"streams\": []"; print "}"; exit } { print }' r.json >nostreams.json
    launcher report --check 'streams.hit_rate>=0.9' nostreams.json
    check same "$rc" 1 -- "a stream's check over no stream: exit $rc, not 1: $(cat out err)"
    check has out "streams.hit_rate>=0.9: no stream saw an op" -- "not said: $(cat out)"
}

t_check_accepts_what_docs_say() {
    local e
    slow_report
    for e in 'ops>=-nan' 'ops>=+nan' 'ops>=+inf' 'ops>=-NaN' 'ops>=nan(1)' 'hit _rate>=0.6' 'ops>=1 000' 'ops>=0x10' \
             'ops>=1e' 'streams. ops>=1' 'ops> =1'; do
        launcher report --check "$e" r.json
        check same "$rc" 2 -- "'$e' accepted: exit $rc: $(cat out err)"
        check has err "bad check" -- "'$e': $(cat err)"
    done
    for e in ' hit_rate >= 0.1 ' 'ops>=1e1' 'ops>=.5' 'ops>=+1' 'hit_rate>-1' 'ops>=1.' 'streams.ops >= 1'; do
        launcher report --check "$e" r.json
        check same "$rc" 0 -- "'$e' refused: exit $rc: $(cat out err)"
    done
    launcher report --check
    check same "$rc" 2 -- "--check without a value: exit $rc"
    check has err "--check needs a CHECK" -- "--check without a value: $(head -1 err)"
    check hasnt err "unknown option" -- "--check without a value: $(head -1 err)"
    launcher --help
    check has out "--check CHECK" -- "--help does not name --check"
    check has out "GRAPHSHIM_CHECK_EXIT=1" -- "--help does not name GRAPHSHIM_CHECK_EXIT"
    check has "$ROOT/README.md" "GRAPHSHIM_CHECK_EXIT" -- "the README does not name GRAPHSHIM_CHECK_EXIT"
    check has "$ROOT/docs/report.md" "at most 32 checks" -- "docs/report.md does not give the limit"
}

t_check_inputs_counted_once() {
    local saved
    mkdir job
    shim GRAPHSHIM_REPORT=job/r.0.json "$AB/tests/guardprog" slow 20
    saved=$(total job/r.0.json launches_saved)
    launcher report --check "launches_saved<=$saved" job/r.0.json job/r.0.json
    check same "$rc" 0 -- "a file given twice was summed twice: $(cat out)"
    check has err "job/r.0.json is given twice: counted once" -- "not said: $(cat err)"
    launcher report --check "launches_saved<=$saved" job/ job/r.0.json ./job/r.0.json
    check same "$rc" 0 -- "a folder's report named again was summed twice: $(cat out)"
    launcher report --check 'ops>=1' missing.json
    check same "$rc" 2 -- "a missing input: exit $rc, not 2"
    # A stray file of the folder is skipped, with a warning; the table stays.
    echo '{"lr": 0.1}' >job/config.json
    echo 'not json' >job/notes.json
    launcher report job/
    check same "$rc" 0 -- "a folder with a config.json: exit $rc: $(cat err)"
    check has err "skipped job/config.json (not a graphshim report" -- "config.json: $(cat err)"
    check has err "skipped job/notes.json" -- "notes.json: $(cat err)"
    check has out "graphshim report: 1 report (job/)" -- "no table: $(head -2 out)"
    launcher report job/config.json
    check same "$rc" 2 -- "a file named that is no report: exit $rc, not 2"
}

# --- The test-only switch, a late load, the demo ------------------------------

t_test_switch_cannot_be_silenced() {
    LIB=$AB/test/libgraphshim.so shim GRAPHSHIM_TEST_DROP_RULE=sync GRAPHSHIM_LOG=error "${DRV[@]}"
    check has err "GRAPHSHIM_TEST_DROP_RULE=sync is set" -- "GRAPHSHIM_LOG=error silenced it: $(cat err)"
}

t_late_load_noticed() {
    timeout 20 env -i TMPDIR="$TMPDIR" LD_LIBRARY_PATH="$AB/fakecuda" "$AB/tests/lateload" "$LIB" >out 2>err
    check has err "loaded while the program runs (dlopen)" -- "dlopen: $(cat err)"
    check same "$(warnings)" 1 -- "dlopen: $(warnings) lines"
    timeout 20 env -i TMPDIR="$TMPDIR" LD_LIBRARY_PATH="$AB/fakecuda" "$AB/tests/lateload" "$LIB" cuda-first >out 2>err
    check has err "loaded after the CUDA driver" -- "dlopen after libcuda: $(cat err)"
    shim "$AB/tests/lateload" - cuda-first
    check same "$(cat err)" "" -- "preloaded, yet: $(cat err)"
}

t_tests_leave_no_temporary_files() {
    # A few of make test's criterion tests, the ones that make temporary files,
    # with a temporary folder of their own (a folder of /tmp would meet other
    # users' files); a failing test must not leave its files either.
    mkdir "$T/x"
    TMPDIR=$T/x timeout 120 "$AB/fakecuda/test_fakecuda" --filter 'log/*' >log 2>&1
    check same "$?" 0 -- "test_fakecuda log/*: $(tail -2 log)"
    TMPDIR=$T/x timeout 120 "$AB/fakecuda/test_fakecuda" --filter 'faults/*' >log 2>&1
    check same "$?" 0 -- "test_fakecuda faults/*: $(tail -2 log)"
    TMPDIR=$T/x timeout 120 "$AB/tests/integration" --filter 'report_tool/*' >log 2>&1
    check same "$?" 0 -- "integration report_tool/*: $(tail -2 log)"
    check same "$(ls -A "$T/x" | head -5 | tr '\n' ' ')" "" -- "left in the temporary folder: $(ls -A "$T/x" | head -5 | tr '\n' ' ')"
}

t_demo_commands_paste() {
    local cmd n=0 here=$PWD
    BUILD=$B bash "$ROOT/scripts/demo.sh" >demo 2>&1
    check same "$?" 0 -- "demo.sh failed: $(tail -3 demo)"
    while IFS= read -r cmd; do
        n=$((n + 1))
        (cd "$ROOT" && timeout 20 env -i TMPDIR="$TMPDIR" PATH="$PATH" sh -c "${cmd#\$ }" >"$here/pasted" 2>&1)
        check same "$?" 0 -- "pasted '${cmd#\$ }' failed: $(head -2 pasted)"
    done < <(grep '^\$ ' demo)
    check test "$n" -ge 2 -- "demo.sh shows $n commands"
    # Over the fake, the report's times are the fake's: the demo never says
    # there are none below a report that shows them.
    if grep -q ' saved ~\| lost ~' demo; then
        check hasnt demo "no times" -- "demo.sh says 'no times' below a report with times: $(grep -m1 'saved ~' demo)"
    fi
}

# --- The GPU targets without a GPU ---------------------------------------------

# gpu_make TARGET [NAME=value...]: make TARGET where nvidia-smi lists no GPU (a
# stand-in nvidia-smi comes first on PATH), output in out, status in $rc.
gpu_make() {
    local target=$1
    shift
    mkdir -p bin
    printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >bin/nvidia-smi
    chmod +x bin/nvidia-smi
    (cd "$ROOT" && timeout 120 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS PATH="$PWD/bin:$PATH" "$@" \
        make --no-print-directory BUILD="$AB" "$target") >out 2>&1 </dev/null
    rc=$?
}

t_gpu_targets_stop_without_a_gpu() {
    local t
    for t in gpu-test bench sanitize bench-apps bench-node-update; do
        SECONDS=0
        gpu_make "$t"
        check test "$rc" != 0 -- "make $t without a GPU: exit 0"
        check test "$rc" != 124 -- "make $t without a GPU: ran on past 120 s"
        check test "$SECONDS" -lt 30 -- "make $t without a GPU: $SECONDS s before it stopped"
        check same "$(grep -vc '^make: \*\*\*' out)" 1 -- "make $t without a GPU: not one line: $(head -5 out)"
        check has out "make $t: no GPU here" -- "make $t without a GPU: $(head -3 out)"
    done
}

t_first_minute() {
    local r=$ROOT/README.md
    # Without the CUDA headers: what to install, not make's "No rule".
    (cd "$ROOT" && timeout 60 env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory CUDA_HOME=/nonexistent \
        BUILD="$PWD/b" all) >out 2>&1 </dev/null
    check hasnt out "No rule to make target" -- "no CUDA headers: $(head -2 out)"
    check has out "is missing: install the CUDA toolkit 13.0 or newer" -- "no CUDA headers: $(head -2 out)"
    # A text report given to graphshim report is named as one.
    shim GRAPHSHIM_REPORT=r.txt "${DRV[@]}"
    launcher report r.txt
    check same "$rc" 2 -- "report r.txt: exit $rc"
    check has err "r.txt: a text report" -- "report r.txt: $(cat err)"
    # The demo over the fake driver says what it shows, never "slower".
    BUILD=$B bash "$ROOT/scripts/demo.sh" >demo 2>&1
    check hasnt demo "wall time" -- "the fake demo shows times: $(grep 'wall time' demo)"
    check has demo "driver calls in the fake driver's log:" -- "the fake demo: $(tail -3 demo)"
    check has demo "fewer than without graphshim" -- "the demo's program does not save calls: $(grep 'driver calls' demo)"
    # The README's first minute: gains, a report, the fake driver, pip.
    check has "$r" "## What to expect" -- "README: no table of gains"
    check has "$r" "It does not help where" -- "README: not where it does not help"
    check has "$r" "## What a report looks like" -- "README: no report"
    check has "$r" "LD_LIBRARY_PATH=build/fakecuda build/graphshim run" -- "README: not how to try a program over the fake"
    check has "$r" "python3 -m venv" -- "README: pip without a virtual environment"
    check has "$r" "WHEEL_PYTHON" -- "README: no WHEEL_PYTHON"
    check has "$r" "glibc is 2.34 or newer" -- "README: no glibc floor"
}

# bench_with PROGRAM-BODY: bench.sh's tiny1 row, one round, where bench.cu
# "compiles" into a shell script of that body (a stand-in nvcc).
bench_with() {
    mkdir -p bin o
    printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\n[ -n "${out:-}" ] || exit 0\nprintf "#!/bin/sh\\n%%s\\n" "$BODY" >"$out" && chmod +x "$out"\n' >bin/nvcc
    chmod +x bin/nvcc
    (cd "$ROOT" && BODY=$1 timeout 120 env -u MAKEFLAGS -u MAKELEVEL NVCC="$OLDPWD/bin/nvcc" BUILD="$OLDPWD/b" \
        OUT="$OLDPWD/o" ONLY='^tiny1$' ROUNDS=1 SKIP_TORCH=1 COST=0 bash bench/bench.sh) >out 2>&1 </dev/null
    rc=$?
}

t_bench_rows_never_yes_without_runs() {
    bench_with 'exit 1'
    check test "$rc" != 0 -- "bench.sh with runs that gave nothing: exit 0"
    check same "$(grep -c '^tiny1 ' o/bench.txt)" 1 -- "no tiny1 row: $(cat out)"
    check same "$(grep '^tiny1 ' o/bench.txt | grep -c ' yes$')" 0 -- "a row of no runs says yes: $(grep '^tiny1 ' o/bench.txt)"
    check has o/bench.txt "no-result(eager" -- "the row does not say no-result: $(grep '^tiny1 ' o/bench.txt)"
    # Runs that print a time and a checksum: the same row says yes.
    rm -rf o b
    bench_with 'echo us_per_iter 10; echo checksum 42'
    check same "$rc" 0 -- "bench.sh with runs: exit $rc: $(tail -3 out)"
    check same "$(grep '^tiny1 ' o/bench.txt | awk '{ print $NF }')" yes -- "a row of agreeing runs: $(grep '^tiny1 ' o/bench.txt)"
}

# The gate judged by the launcher, the report at a signal's end, honest counts
# and kept files.
. tests/cli/gate.sh

# --- Runner -------------------------------------------------------------------

cases=(help_on_stdout version no_arguments unknown_command misspelled_option_is_an_error missing_program
       run_passes_program_and_status readme_shows_help
       users_files_kept report_and_trace_one_file report_symlink_refused trace_symlink_refused fifo_never_hangs devices_refused report_on_stderr_by_name
       files_mode_0644 report_keeps_its_mode write_error_keeps_old_report failed_trace_leaves_no_empty_file long_path_refused_not_cut percent_in_every_path
       same_run_reports_kept reports_at_once_all_kept
       report_input_bounded report_printed_safely report_tool_linear_and_defined report_from_standard_input job_report nodes_set_named_alike sequence_cost_shown headline_nets_own_calls no_cuda_call_no_report_said
       report_picture
       blanks_never_accepted on_off_words empty_value_warned values_printed_escaped log_error_silences_warnings unknown_names_named
       test_switch_cannot_be_silenced late_load_noticed tests_leave_no_temporary_files demo_commands_paste
       gpu_targets_stop_without_a_gpu first_minute bench_rows_never_yes_without_runs
       report_check_pass report_check_fail report_check_bad_expression report_check_unknown_field check_at_exit
       check_exit_bad_expression_fails check_exit_nothing_measured_fails check_streams_never_vacuous
       check_accepts_what_docs_say check_inputs_counted_once
       gate_judges_the_run gate_says_why_nothing_was_measured gate_settings_fail_closed job_check_names_silent_ranks
       report_at_a_signal launches_saved_as_the_driver_saw graphshims_files_by_their_mark readme_commands_as_written
       preloaded_shell_fails_with_its_child)
[ $# -gt 0 ] && cases=("$@")
passed=0 failed=0
for c in "${cases[@]}"; do
    mkdir "$T/$c"
    why=()
    (
        cd "$T/$c" || exit
        "t_$c"
        for w in ${why[@]+"${why[@]}"}; do echo "$w"; done
        : >"$T/$c.done"
    ) >"$T/$c.why"
    [ -e "$T/$c.done" ] || echo "the case stopped before its end (a shell error above)" >>"$T/$c.why"
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
