# gate.sh: cases of tests/cli/run.sh (sourced by it) for the CI gate judged by
# the launcher, the report at a signal's end, honest counts, kept files, and
# the README's commands run as written.
# Each case runs in its own folder, with a temporary folder of its own
# ($PWD/tmp) as TMPDIR, and checks that no mark is left there.

# genv: the clean environment of a case's programs, over the fake driver.
genv() {
    mkdir -p tmp
    { timeout 20 env -i PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" TMPDIR="$PWD/tmp" "$@" >out 2>err </dev/null; } 2>/dev/null
    rc=$?
}
# gate CHECK PROGRAM [ARGS...]: graphshim run under GRAPHSHIM_CHECK=CHECK and
# GRAPHSHIM_CHECK_EXIT=1.
gate() {
    local c=$1
    shift
    genv GRAPHSHIM_CHECK="$c" GRAPHSHIM_CHECK_EXIT=1 "$G" run -- "$@"
}
no_marks_left() { [ -z "$(ls -A tmp)" ]; }
EP=$AB/tests/endprog

# --- The gate judges the whole run (graphshim run under GRAPHSHIM_CHECK) ---------

t_gate_judges_the_run() {
    # The first process ends with _exit: never checked, the run fails.
    gate 'hit_rate>=0' "$EP" _exit
    check same "$rc" 1 -- "a program ending with _exit passed the gate: exit $rc: $(cat err)"
    check has err "ended without running exit handlers (_exit" -- "_exit not said: $(cat err)"
    if command -v python3 >/dev/null; then
        gate 'hit_rate>=0.99' python3 -c 'import ctypes,os; ctypes.CDLL("libcuda.so.1").cuInit(0); os._exit(0)'
        check same "$rc" 1 -- "python's os._exit passed the gate: exit $rc: $(cat err)"
    fi
    # A shell that runs a failing program, then true.
    gate 'hit_rate>=0.99' sh -c '"$0" exit >/dev/null; true' "$EP"
    check same "$rc" 1 -- "sh -c 'failing; true' passed the gate: exit $rc: $(cat err)"
    check has err "failed its checks" -- "the failed process not said: $(cat err)"
    # A #!/bin/sh script around a program that holds the checks passes, silent.
    printf '#!/bin/sh\n"%s" exit\n' "$EP" >job.sh
    chmod +x job.sh
    gate 'hit_rate>=0.5,ops>=60' ./job.sh
    check same "$rc/$(cat err)" "0/" -- "a script around a good program: exit $rc: $(cat err)"
    printf '#!/bin/sh\n"%s" exit\nexit 0\n' "$EP" >job.sh
    gate 'hit_rate>=0.99' ./job.sh
    check same "$rc" 1 -- "a #!/bin/sh script around a failing program passed: exit $rc: $(cat err)"
    # A program that changes TMPDIR on the way is still judged by what it measured.
    gate 'hit_rate>=0.5' bash -c 'TMPDIR=$PWD "$0" exit >/dev/null; exit 0' "$EP"
    check same "$rc/$(cat err)" "0/" -- "TMPDIR changed in the run: exit $rc: $(cat err)"
    # graphshim run inside a judged run (a CI script that calls it): one judge.
    gate 'hit_rate>=0.5' bash -c '"$0" run -- "$1" exit >/dev/null; exit 0' "$G" "$EP"
    check same "$rc/$(cat err)" "0/" -- "graphshim run inside graphshim run: exit $rc: $(cat err)"
    gate 'hit_rate>=0.99' bash -c '"$0" run -- "$1" exit >/dev/null; exit 0' "$G" "$EP"
    check same "$rc" 1 -- "graphshim run inside graphshim run, a check failing: exit $rc: $(cat err)"
    check no_marks_left -- "marks left in TMPDIR: $(ls -A tmp)"
}

t_gate_says_why_nothing_was_measured() {
    gate 'graph_failures==0' true
    check same "$rc" 1 -- "no CUDA call passed: exit $rc"
    check has err "no process of this run made a CUDA driver call" -- "no CUDA call: $(cat err)"
    genv GRAPHSHIM=0 GRAPHSHIM_CHECK='graph_failures==0' GRAPHSHIM_CHECK_EXIT=1 "$G" run -- "$EP" exit
    check same "$rc" 1 -- "the engine off passed: exit $rc"
    check has err "engine was off in 1 process" -- "the engine off not said: $(cat err)"
    # A process with the engine off beside one that measured: named, and failed.
    genv GRAPHSHIM_CHECK='hit_rate>=0.5' GRAPHSHIM_CHECK_EXIT=1 "$G" run -- \
        sh -c '"$0" exit; GRAPHSHIM=0 "$0" exit' "$EP"
    check same "$rc" 1 -- "a process with the engine off hid in the run: exit $rc: $(cat err)"
    check has err "engine was off in 1 process of this run" -- "not named: $(cat err)"
    check no_marks_left -- "marks left in TMPDIR: $(ls -A tmp)"
}

t_gate_settings_fail_closed() {
    local v long i
    for v in ' 1' 2 enabled ''; do
        genv GRAPHSHIM_CHECK='hit_rate>=0' GRAPHSHIM_CHECK_EXIT="$v" "$G" run -- "$EP" exit
        check same "$rc" 2 -- "graphshim run, GRAPHSHIM_CHECK_EXIT='$v': exit $rc, not 2: $(cat err)"
        check has err "GRAPHSHIM_CHECK_EXIT cannot be read" -- "GRAPHSHIM_CHECK_EXIT='$v' not said: $(cat err)"
        genv GRAPHSHIM_CHECK='hit_rate>=0' GRAPHSHIM_CHECK_EXIT="$v" LD_PRELOAD="$LIB" "$EP" exit
        check same "$rc" 2 -- "preloaded, GRAPHSHIM_CHECK_EXIT='$v': exit $rc, not 2: $(cat err)"
        check hasnt err "using the default" -- "preloaded, GRAPHSHIM_CHECK_EXIT='$v': a default named: $(cat err)"
    done
    # 32 checks, as the docs allow, with blanks: longer than 1023 bytes.
    long='ops  >=  1'
    for i in $(seq 31); do long="$long     ,     streams.ops     >=     $i"; done
    check test "${#long}" -gt 1023 -- "the 32 checks are only ${#long} bytes"
    gate "$long" "$EP" exit
    check same "$rc/$(cat err)" "0/" -- "32 checks of ${#long} bytes under graphshim run: exit $rc: $(cat err)"
    genv GRAPHSHIM_CHECK="$long,ops>=1000" GRAPHSHIM_CHECK_EXIT=1 LD_PRELOAD="$LIB" "$EP" exit
    check same "$rc" 2 -- "33 checks preloaded: exit $rc, not 2: $(cat err)"
    genv GRAPHSHIM_CHECK="${long%     ,*},ops>=1000" GRAPHSHIM_CHECK_EXIT=1 LD_PRELOAD="$LIB" "$EP" exit
    check same "$rc" 1 -- "32 long checks preloaded, one failing: exit $rc, not 1: $(cat err)"
    check has err "check failed: ops>=1000" -- "the failing check not said: $(cat err)"
}

t_job_check_names_silent_ranks() {
    mkdir job
    genv GRAPHSHIM_REPORT=job/r.0.json LD_PRELOAD="$LIB" "$EP" exit
    genv GRAPHSHIM=0 GRAPHSHIM_REPORT=job/r.1.json LD_PRELOAD="$LIB" "$EP" exit
    check test -s job/r.1.json -- "no report of the rank with the engine off"
    launcher report --check 'hit_rate>=0.5' job/
    check same "$rc" 1 -- "a rank with the engine off passed the job's check: exit $rc: $(cat out err)"
    check has out "nothing was measured in job/r.1.json: its engine was off" -- "the rank not named: $(cat out)"
    # An input that is not valid JSON beside a good one: exit 2.
    : >e.json
    launcher report --check 'hit_rate>=0.5' job/r.0.json e.json
    check same "$rc" 2 -- "an empty input beside a report: exit $rc, not 2: $(cat out err)"
    echo '{"engine": tru' >bad.json
    launcher report job/r.0.json bad.json
    check same "$rc" 2 -- "a bad JSON input beside a report, no check: exit $rc, not 2"
}

# --- The report whatever ends the program -------------------------------------------

# Waits (60 s at most: a loaded machine, two test runs at once) until the
# program started in the background says it is ready, so that a signal meets
# it and not the launcher still starting it.
await_ready() {
    local n
    for n in $(seq 600); do grep -q ready out && return 0; sleep 0.1; done
    check same "not ready" ready -- "the program never said ready: $(cat err)"
}

t_report_at_a_signal() {
    local sig n pid
    for sig in INT TERM HUP; do
        n=$(kill -l "$sig")
        rm -f r.json
        genv GRAPHSHIM_REPORT=r.json LD_PRELOAD="$LIB" "$EP" "$sig"
        check same "$rc" $((128 + n)) -- "SIG$sig: exit $rc, not $((128 + n)) (the signal's): $(cat err)"
        check has r.json '"ops": 60,' -- "SIG$sig: no report of 60 ops: $(head -c 300 r.json 2>&1)"
    done
    # The program's own handler runs first, and decides (here: exit 7).
    rm -f r.json
    genv GRAPHSHIM_REPORT=r.json LD_PRELOAD="$LIB" "$EP" handler-TERM
    check same "$rc/$(cat out)" "7/handler 15" -- "the program's handler: exit $rc, $(cat out err)"
    check has r.json '"ops": 60,' -- "no report after the program's handler"
    # A handler of the program's that puts the default back and sends the
    # signal again, to end by it: the report first, then the same end.
    rm -f r.json
    genv GRAPHSHIM_REPORT=r.json LD_PRELOAD="$LIB" "$EP" reraise-TERM
    check same "$rc/$(cat out)" "143/handler 15" -- "a handler that ends by the signal: exit $rc, $(cat out err)"
    check has r.json '"ops": 60,' -- "no report where the program's handler ends by the signal"
    # Killed from outside while it waits.
    rm -f r.json
    mkdir -p tmp
    env -i PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" TMPDIR="$PWD/tmp" GRAPHSHIM_REPORT=r.json \
        LD_PRELOAD="$LIB" "$EP" wait >out 2>err </dev/null &
    pid=$!
    await_ready
    kill -TERM "$pid"
    { wait "$pid"; } 2>/dev/null
    rc=$?
    check same "$rc" 143 -- "killed by SIGTERM: exit $rc: $(cat err)"
    check has r.json '"ops": 60,' -- "killed by SIGTERM: no report"
    # SIGTERM to graphshim run under the gate (a Kubernetes pod's first
    # process): passed on to the program, which writes its report; the run is
    # judged, and ends by the same signal.
    rm -f r.json
    env -i PATH="$PATH" LD_LIBRARY_PATH="$AB/fakecuda" TMPDIR="$PWD/tmp" GRAPHSHIM_REPORT=r.json \
        GRAPHSHIM_CHECK='hit_rate>=0.99' "$G" run -- "$EP" wait >out 2>err </dev/null &
    pid=$!
    await_ready
    kill -TERM "$pid"
    { wait "$pid"; } 2>/dev/null
    rc=$?
    check same "$rc" 143 -- "graphshim run killed by SIGTERM: exit $rc: $(cat err)"
    check has r.json '"ops": 60,' -- "graphshim run killed by SIGTERM: the program wrote no report"
    check has err "check failed: hit_rate>=0.99" -- "graphshim run killed by SIGTERM: not judged: $(cat err)"
    check no_marks_left -- "marks left in TMPDIR: $(ls -A tmp)"
    # Under the gate, the checks are judged and the status is the signal's.
    gate 'hit_rate>=0.99' "$EP" INT
    check same "$rc" 130 -- "SIGINT under the gate: exit $rc, not 130: $(cat err)"
    check has err "check failed: hit_rate>=0.99" -- "SIGINT under the gate: the checks not judged: $(cat err)"
    if command -v python3 >/dev/null; then
        rm -f r.json
        genv GRAPHSHIM_REPORT=r.json LD_PRELOAD="$LIB" python3 -c \
            'import ctypes,os,signal,time; ctypes.CDLL("libcuda.so.1").cuInit(0); os.kill(os.getpid(), signal.SIGINT); time.sleep(5)'
        check same "$rc" 130 -- "python's Ctrl-C: exit $rc, not 130"
        check has r.json '"engine": true' -- "python's Ctrl-C: no report: $(cat err)"
    fi
}

# --- Honest counts, kept files --------------------------------------------------------

# launches_saved is ops replayed less the graphs the driver launched: the fake
# driver's log counts them (cuGraphLaunch, cuGraphLaunch_ptsz), here where
# every replay's last chunk ends at its last op (3-op sequences, chunks of 3),
# where some do (pageable-loop) and where none does.
t_launches_saved_as_the_driver_saw() {
    local sc launched replayed saved
    for sc in "3 sync 40" "8 pageable-loop 20" "8 slow 20" "8 loop1 4" "8 sync 40"; do
        rm -f log r.json
        # shellcheck disable=SC2086 # the scenario and its count
        genv FAKECUDA_LOG="$PWD/log" GRAPHSHIM_CHUNK_OPS=${sc%% *} GRAPHSHIM_REPORT=r.json LD_PRELOAD="$LIB" \
            "$AB/tests/guardprog" ${sc#* }
        launched=$(grep -c '^cuGraphLaunch' log)
        replayed=$(total r.json ops_replayed)
        saved=$(total r.json launches_saved)
        check same "$((replayed - saved))" "$launched" -- \
            "$sc: $replayed ops replayed, $saved launches saved, but the driver launched $launched graphs, not $((replayed - saved))"
        check same "$(sed -n 's/.*"launches_saved": \([0-9]*\), "patched_launches".*/\1/p' r.json | awk '{ s += $1 } END { print s }')" \
            "$saved" -- "$sc: the streams' launches_saved do not add up to the total's $saved"
    done
    # The text says so, and its count is the driver's too.
    rm -f log
    genv FAKECUDA_LOG="$PWD/log" GRAPHSHIM_CHUNK_OPS=3 GRAPHSHIM_LOG=info LD_PRELOAD="$LIB" "$AB/tests/guardprog" sync 40
    check has err "replays launched no graph: their ops had all gone out in early chunks" -- "text: $(head -4 err)"
    replayed=$(sed -n 's/.*replayed as graphs \([0-9]*\):.*/\1/p' err)
    check same "$(sed -n 's/.* saved \([0-9]*\) launches$/\1/p' err)" "$((replayed - $(grep -c '^cuGraphLaunch' log)))" -- \
        "text: the launches saved are not the ops replayed less the driver's graph launches: $(head -3 err)"
}

t_graphshims_files_by_their_mark() {
    printf '{\n  "engine": "vllm",\n  "tp": 2\n}\n' >engine.json
    cp engine.json engine.keep
    genv GRAPHSHIM_REPORT=engine.json LD_PRELOAD="$LIB" "$EP" exit
    check cmp -s engine.json engine.keep -- "a user's JSON whose first key is engine was replaced: $(head -c 80 engine.json)"
    check has err "GRAPHSHIM_REPORT=engine.json holds a file that is neither" -- "not said: $(cat err)"
    printf 'tid=4 is the thread to watch\n' >notes.txt
    cp notes.txt notes.keep
    genv GRAPHSHIM_TRACE=notes.txt LD_PRELOAD="$LIB" "$EP" exit
    check cmp -s notes.txt notes.keep -- "a user's file starting tid= was appended to: $(tail -1 notes.txt)"
    check has err "GRAPHSHIM_TRACE=notes.txt holds a file that is neither" -- "not said: $(cat err)"
    # graphshim's own files still are: a report, text or JSON, and a trace.
    genv GRAPHSHIM_REPORT=r.json GRAPHSHIM_TRACE=t.txt LD_PRELOAD="$LIB" "$EP" exit
    genv GRAPHSHIM=0 GRAPHSHIM_REPORT=off.txt LD_PRELOAD="$LIB" "$EP" exit
    touch -d '1 minute ago' r.json t.txt off.txt
    genv GRAPHSHIM_REPORT=r.json GRAPHSHIM_TRACE=t.txt LD_PRELOAD="$LIB" "$EP" exit
    check same "$(cat err)" "" -- "graphshim's own files refused: $(cat err)"
    genv GRAPHSHIM_REPORT=off.txt LD_PRELOAD="$LIB" "$EP" exit
    check has off.txt "engine on" -- "a text report of the engine off not replaced: $(head -1 off.txt)"
}

# --- The README as written ------------------------------------------------------------

# block FILE LINE: the first fenced block of FILE after the first line that
# starts with LINE.
block() { awk -v at="$2" 'index($0, at) == 1 { f = 1 } f && /^```/ { n++; if (n == 2) exit; next } f && n == 1' "$1"; }

# The README's own-program recipe and its job's commands, taken from README.md,
# run as written from a folder laid out as the repository's root (build and
# tests), over a program of the fake's kernel convention; torchrun is a stand-in
# that starts 4 ranks of it.
t_readme_commands_as_written() {
    local line n=0
    ln -s "$AB" build
    ln -s "$ROOT/tests" tests
    cat >myprog.c <<'PROG'
#include <cuda.h>
#include <stdio.h>
#include "fakecuda.h"
static int ticks;
FAKECUDA_KERNEL0(tick) { ticks++; }
int main(void)
{
    CUdevice d; CUcontext c; CUmodule m; CUfunction f;
    cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
    cuModuleLoadData(&m, "image"); cuModuleGetFunction(&f, m, "tick");
    for (int i = 0; i < 20; i++) {
        for (int k = 0; k < 4; k++)
            cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
        cuCtxSynchronize();
    }
    printf("%d ticks\n", ticks);
    return ticks != 80;
}
PROG
    while IFS= read -r line; do
        n=$((n + 1))
        genv sh -c "$line"
        check same "$rc" 0 -- "README: '$line' failed: $(head -3 err)"
    done < <(block "$ROOT/README.md" "Without a GPU, a program of your own")
    check same "$n" 2 -- "README: the own-program recipe has $n commands, not 2"
    check has out "80 ticks" -- "README: myprog's output: $(cat out)"
    check has err "graphshim report: engine on" -- "README: no report on stderr: $(head -3 err)"
    mkdir bin
    printf '#!/bin/sh\nfor r in 0 1 2 3; do RANK=$r ./myprog || exit; done\n' >bin/torchrun
    chmod +x bin/torchrun
    n=0
    while IFS= read -r line; do
        n=$((n + 1))
        genv PATH="$PWD/bin:$AB:$PATH" LD_LIBRARY_PATH="$AB/fakecuda" sh -c "$line"
        check same "$rc" 0 -- "README: '$line' failed: $(head -3 err)"
    done < <(block "$ROOT/README.md" "A job of several GPUs runs the same way")
    check same "$n" 2 -- "README: the job has $n commands, not 2"
    check same "$(ls job)" "$(printf 'r.%s.json\n' 0 1 2 3)" -- "README: the job's reports: $(ls job)"
    check has out "ranks (4 reports)" -- "README: graphshim report job/: $(head -5 out)"
}

# Without the launcher (LD_PRELOAD and GRAPHSHIM_CHECK by hand), a shell that
# ends through its exit handlers (bash) judges the run it begins: it fails where
# its child failed a check, though it ran true after it.
t_preloaded_shell_fails_with_its_child() {
    genv GRAPHSHIM_CHECK='hit_rate>=0.99' GRAPHSHIM_CHECK_EXIT=1 LD_PRELOAD="$LIB" \
        bash -c '"$0" exit >/dev/null; true' "$EP"
    check same "$rc" 1 -- "bash -c 'failing; true', preloaded: exit $rc, not 1: $(cat err)"
    check has err "a process of this run failed its checks" -- "not said: $(cat err)"
    genv GRAPHSHIM_CHECK='hit_rate>=0.5' GRAPHSHIM_CHECK_EXIT=1 LD_PRELOAD="$LIB" \
        bash -c '"$0" exit >/dev/null; true' "$EP"
    check same "$rc/$(cat err)" "0/" -- "bash -c 'passing; true', preloaded: exit $rc: $(cat err)"
    check no_marks_left -- "marks left in TMPDIR: $(ls -A tmp)"
}
