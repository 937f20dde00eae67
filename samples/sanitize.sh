#!/usr/bin/env bash
# sanitize.sh: compute-sanitizer (memcheck) over the samples, without and with
# graphshim.
#
#   bash samples/sanitize.sh [sample ...]        (from the repo root; needs a GPU)
#
# Samples: every samples/<name>.cu, built with the static and the shared CUDA
# runtime, run with GS_SAN_ITERS iterations (its argv), and torch_mlp.py with
# --iters GS_SAN_PY_ITERS.  Each runs twice under
#     compute-sanitizer --tool memcheck --target-processes all --log-file ...
#   plain   without the shim
#   shim    with LD_PRELOAD=<shim> (engine on) and GRAPHSHIM_REPORT
# A case passes when both runs exit 0, the shim run's `ERROR SUMMARY: N errors`
# equals the plain run's (0 expected: a non-zero plain count is noted) once the
# reports of graphshim's own layout probe are set aside (see probes()), their
# stdout is identical and, unless GS_CHECK_REPORT=0, the shim wrote its report
# (so it really ran under the sanitizer).
#
# How the shim gets into the program: compute-sanitizer follows child
# processes (--target-processes all) and uses LD_PRELOAD for its own helper,
# so the target is a small wrapper that adds the shim to the LD_PRELOAD the
# sanitizer gave it, then execs the program:
#     compute-sanitizer ... <wrapper> append <shim> <prog> [args]
# GS_SAN_PRELOAD=prepend puts the shim first instead; GS_SAN_PRELOAD=outer
# runs `env LD_PRELOAD=<shim> compute-sanitizer ... <prog>` (the sanitizer's
# front end then runs under the shim too).  The LD_PRELOAD the program saw is
# logged in <case>/<variant>.ld_preload.
#
# Environment:
#   OUT=dir              logs (default build/sanitize; old results there are removed)
#   GRAPHSHIM_LIB=path   the shim (default build/libgraphshim.so)
#   GS_BUILD=dir         build dir given to samples/Makefile (default build)
#   GS_NO_BUILD=1        do not run make (binaries already in $GS_BUILD/samples)
#   GS_JOBS=8            make -j
#   GS_SAN_JOBS=4        cases run at the same time
#   GS_SAN_ITERS=20      iterations of the CUDA samples
#   GS_SAN_PY_ITERS=20   iterations of torch_mlp.py
#   GS_SAN_TOOL=memcheck compute-sanitizer tool
#   GS_SAN_FLAGS=        extra compute-sanitizer flags (word-split)
#   GS_SAN_PRELOAD=append|prepend|outer   see above (default append)
#   GS_SAN_TIMEOUT=600   per-run timeout (s)
#   GS_RUNTIMES="static shared"   CUDA runtimes to test
#   GS_SKIP_TORCH=1      skip torch_mlp.py
#   GS_CHECK_REPORT=0    do not require the shim's report file
#   COMPUTE_SANITIZER    the tool (default: on the PATH, else $CUDA_HOME/bin)
#   PYTHON=python3       interpreter for torch_mlp.py
#   NVCC_ARCH, NVCC, CUDA_HOME are passed through to samples/Makefile.
# Output: $OUT/summary.txt, per case $OUT/<name>.<runtime>/ with each run's
# stdout, stderr and sanitizer log; last line `sanitize: N passed, M failed`.

set -u -o pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
T0=$SECONDS

abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$ROOT/$1" ;; esac; }

OUT=$(abspath "${OUT:-build/sanitize}")
SHIM=$(abspath "${GRAPHSHIM_LIB:-build/libgraphshim.so}")
GS_BUILD=$(abspath "${GS_BUILD:-build}")
NO_BUILD=${GS_NO_BUILD:-0}
JOBS=${GS_JOBS:-8}
SAN_JOBS=${GS_SAN_JOBS:-4}
ITERS=${GS_SAN_ITERS:-20}
PY_ITERS=${GS_SAN_PY_ITERS:-20}
TOOL=${GS_SAN_TOOL:-memcheck}
SAN_FLAGS=${GS_SAN_FLAGS:-}
PRELOAD_MODE=${GS_SAN_PRELOAD:-append}
RUN_TIMEOUT=${GS_SAN_TIMEOUT:-600}
RUNTIMES=${GS_RUNTIMES:-static shared}
SKIP_TORCH=${GS_SKIP_TORCH:-0}
CHECK_REPORT=${GS_CHECK_REPORT:-1}
PYTHON=${PYTHON:-python3}
PY_SAMPLES="torch_mlp"

log() { printf '%s\n' "$*"; }
die() { log "sanitize: $*"; log "sanitize: 0 passed, 1 failed"; exit 2; }

case $PRELOAD_MODE in append | prepend | outer) ;; *) die "GS_SAN_PRELOAD must be append, prepend or outer" ;; esac
[[ "$SAN_JOBS" =~ ^[1-9][0-9]*$ ]] || die "GS_SAN_JOBS must be a positive integer"

SAN=${COMPUTE_SANITIZER:-}
if [ -z "$SAN" ]; then
    SAN=$(command -v compute-sanitizer 2>/dev/null || true)
    [ -n "$SAN" ] || SAN=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
fi
[ -x "$SAN" ] || die "compute-sanitizer not found (PATH, \$CUDA_HOME/bin; or set COMPUTE_SANITIZER)"
[ -f "$SHIM" ] || die "shim not found: $SHIM (build it first: make)"

mkdir -p "$OUT" || exit 2
for f in "$OUT"/*.static "$OUT"/*.shared "$OUT"/*.py "$OUT"/summary.txt "$OUT"/env.txt "$OUT"/build.log; do
    [ -e "$f" ] && rm -rf -- "$f"
done
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/gs-sanitize.XXXXXX") || exit 2
trap 'rm -rf "$TMPD"' EXIT

# the wrapper the sanitizer runs: MODE SHIM LOGFILE PROG [ARGS]
WRAP=$TMPD/gs-san-wrap
cat >"$WRAP" <<'EOF'
#!/bin/sh
mode=$1 shim=$2 logf=$3
shift 3
if [ -n "$shim" ]; then
    case $mode in
    append) LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim" ;;
    prepend) LD_PRELOAD="$shim${LD_PRELOAD:+:$LD_PRELOAD}" ;;
    esac
    export LD_PRELOAD
fi
printf 'LD_PRELOAD=%s\n' "${LD_PRELOAD:-}" >"$logf"
exec "$@"
EOF
chmod +x "$WRAP"

# selected cases: "name type"
declare -a ALL=()
for f in samples/*.cu; do ALL+=("$(basename "$f" .cu) cu"); done
for n in $PY_SAMPLES; do ALL+=("$n py"); done
declare -a SEL=()
if [ $# -gt 0 ]; then
    for a in "$@"; do
        a=${a%.py}
        hit=""
        for c in "${ALL[@]}"; do [ "${c% *}" = "$a" ] && hit=$c; done
        [ -n "$hit" ] || { log "sanitize: unknown sample '$a'"; exit 2; }
        SEL+=("$hit")
    done
else
    SEL=("${ALL[@]}")
fi

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "shim: $SHIM"
    echo "sanitizer: $SAN ($("$SAN" --version 2>&1 | grep -i version | head -1))"
    echo "tool: $TOOL; preload: $PRELOAD_MODE; flags: $SAN_FLAGS; iters: $ITERS (py $PY_ITERS)"
    nvidia-smi -L 2>&1 | head -8
} >"$OUT/env.txt"

need_build=0
for c in "${SEL[@]}"; do [ "${c#* }" = cu ] && need_build=1; done
if [ "$need_build" = 1 ] && [ "$NO_BUILD" != 1 ]; then
    log "sanitize: building samples (log: $OUT/build.log)"
    if ! make -C samples -j"$JOBS" BUILD="$GS_BUILD" >"$OUT/build.log" 2>&1; then
        tail -40 "$OUT/build.log"
        die "building the samples failed"
    fi
fi
BIN="$GS_BUILD/samples"

# variables of the caller that must not leak into the runs
declare -a UNSET=(-u LD_PRELOAD)
while read -r v; do
    [ -n "$v" ] && UNSET+=(-u "$v")
done < <(compgen -e | grep '^GRAPHSHIM' || true)

# run_variant DIR VARIANT SHIMPATH(or empty) CMD...
run_variant() {
    local dir=$1 v=$2 shim=$3 t rc dt
    shift 3
    local -a san=("$SAN" --tool "$TOOL" --target-processes all --log-file "$dir/$v.san.%p.log")
    # shellcheck disable=SC2206
    [ -n "$SAN_FLAGS" ] && san+=($SAN_FLAGS)
    local -a pre=(env "${UNSET[@]}" PYTHONDONTWRITEBYTECODE=1)
    local mode=$PRELOAD_MODE
    if [ -n "$shim" ]; then
        pre+=(GRAPHSHIM_REPORT="$dir/$v.report.json")
        if [ "$mode" = outer ]; then
            pre+=(LD_PRELOAD="$shim")
            shim=""
        fi
    fi
    t=$(date +%s.%N)
    timeout -k 10 "$RUN_TIMEOUT" "${pre[@]}" "${san[@]}" "$WRAP" "$mode" "$shim" "$dir/$v.ld_preload" "$@" \
        >"$dir/$v.stdout" 2>"$dir/$v.stderr" </dev/null
    rc=$?
    dt=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
    printf '%s rc=%s time=%s\n' "$v" "$rc" "$dt" >>"$dir/runs.txt"
}

run_field() { awk -v v="$2" -v f="$3=" '$1 == v { for (i = 2; i <= NF; i++) if (index($i, f) == 1) { print substr($i, length(f) + 1); exit } }' "$1/runs.txt"; }

# errors DIR VARIANT: sum of `ERROR SUMMARY: N error(s)` over the run's logs, or NA
errors() {
    local f found=0 sum=0 n
    for f in "$1/$2".san.*.log; do
        [ -f "$f" ] || continue
        while read -r n; do
            found=1
            sum=$((sum + n))
        done < <(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' "$f")
    done
    [ "$found" = 1 ] && echo "$sum" || echo NA
}

# probes DIR VARIANT: reports of a parameter-layout query past the kernel's last
# parameter.  graphshim learns a kernel's layout by asking cuFuncGetParamInfo
# (or cuKernelGetParamInfo) for parameters 0, 1, ... until the driver answers
# CUDA_ERROR_INVALID_VALUE: the driver has no call that gives the count.  The
# sanitizer reports each such end as an API error of the program.
probes() {
    cat "$1/$2".san.*.log 2>/dev/null |
        grep -cE 'Program hit CUDA_ERROR_INVALID_VALUE .* on CUDA API call to cu(Func|Kernel)GetParamInfo' || true
}

replays_of() {
    python3 - "$1" <<'PYEOF' 2>/dev/null || echo NA
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    t = d.get("totals") if isinstance(d.get("totals"), dict) else {}
    r = t.get("replays", d.get("replays"))
    print(int(r) if isinstance(r, (int, float)) and not isinstance(r, bool) else "NA")
except Exception:
    print("NA")
PYEOF
}

# run_case NAME TYPE RUNTIME: writes DIR/row and DIR/why (empty: pass)
run_case() {
    local name=$1 type=$2 rt=$3
    local dir="$OUT/$name.$rt" tc=$SECONDS
    local -a cmd why=()
    mkdir -p "$dir"
    if [ "$type" = cu ]; then
        cmd=("$BIN/$name.$rt" "$ITERS")
    else
        cmd=("$PYTHON" "$ROOT/samples/$name.py" --iters "$PY_ITERS")
    fi
    run_variant "$dir" plain "" "${cmd[@]}"
    run_variant "$dir" shim "$SHIM" "${cmd[@]}"

    local v rc
    for v in plain shim; do
        rc=$(run_field "$dir" "$v" rc)
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            why+=("$v: timeout (${RUN_TIMEOUT}s)")
        elif [ "$rc" != 0 ]; then
            why+=("$v: exit $rc ($(grep -v '^[[:space:]]*$' "$dir/$v.stderr" | tail -1 | cut -c1-160))")
        fi
    done
    local ep es
    ep=$(errors "$dir" plain)
    es=$(errors "$dir" shim)
    [ "$ep" = NA ] && why+=("plain: no 'ERROR SUMMARY' in the sanitizer log")
    [ "$es" = NA ] && why+=("shim: no 'ERROR SUMMARY' in the sanitizer log")
    if [ "$ep" != NA ] && [ "$es" != NA ]; then
        local pp ps
        pp=$(probes "$dir" plain)
        ps=$(probes "$dir" shim)
        if [ $((es - ps)) != $((ep - pp)) ]; then
            why+=("shim: $es sanitizer errors, plain $ep (kinds: shim.errors.top)")
        elif [ "$ps" != "$pp" ]; then
            echo "note: $((ps - pp)) of the shim run's $es reports are graphshim's own layout probe (cuFuncGetParamInfo past the last parameter)" >>"$dir/notes"
        fi
    fi
    for v in plain shim; do  # the most frequent kinds of report, for a quick look
        cat "$dir/$v".san.*.log 2>/dev/null |
            grep -E '^========= +(Invalid|Program hit|Uninitialized|Leaked|Malloc|Race|Barrier|Error|Cuda|CUDA|Host API|Warning)' |
            sed -E 's/0x[0-9a-fA-F]+/0x../g; s/[0-9]+ bytes/N bytes/g' | sort | uniq -c | sort -rn | head -8 \
            >"$dir/$v.errors.top" || true
    done
    [ "$ep" != NA ] && [ "$ep" != 0 ] && echo "note: the plain run has $ep sanitizer errors (0 expected)" >>"$dir/notes"
    local ident=yes
    if ! cmp -s "$dir/plain.stdout" "$dir/shim.stdout"; then
        ident=no
        why+=("shim: stdout differs from plain")
        diff "$dir/plain.stdout" "$dir/shim.stdout" >"$dir/shim.stdout.diff" 2>&1
    fi
    [ -s "$dir/plain.stdout" ] || why+=("plain: empty stdout")
    local rep=NA
    if [ -f "$dir/shim.report.json" ]; then
        rep=$(replays_of "$dir/shim.report.json")
    elif [ "$CHECK_REPORT" != 0 ]; then
        why+=("shim: no report written (was the shim loaded? see shim.ld_preload)")
    fi
    local res=PASS
    [ ${#why[@]} -gt 0 ] && res=FAIL
    printf '%s\n' "${why[@]+"${why[@]}"}" | sed '/^$/d' >"$dir/why"
    printf '%-14s %-7s %12s %12s %-9s %8s %s\n' "$name" "$rt" "$ep" "$es" "$ident" "$rep" "$res" >"$dir/row"
    log "  $(printf '%-14s %-7s %s  (%ds; plain %ss, shim %ss; errors %s / %s)' "$name" "$rt" "$res" \
        $((SECONDS - tc)) "$(run_field "$dir" plain time)" "$(run_field "$dir" shim time)" "$ep" "$es")"
}

log "sanitize: $TOOL over ${#SEL[@]} samples, $SAN_JOBS at a time (logs: $OUT)"
declare -a CASES=()
for c in "${SEL[@]}"; do
    name=${c% *} type=${c#* }
    # mem_zerocopy's kernel waits for a latch the host sets while it runs: under
    # memcheck it never saw the latch set and gave up after 10 s, without
    # graphshim as with it (H100).
    if [ "$name" = mem_zerocopy ] && [ "$TOOL" = memcheck ]; then
        log "  $name: not run (its kernel waits for the host while it runs, which it never saw under memcheck)"
        continue
    fi
    if [ "$type" = py ]; then
        if [ "$SKIP_TORCH" = 1 ]; then
            log "  $name: not run (GS_SKIP_TORCH=1)"
            continue
        fi
        CASES+=("$name $type py")
    else
        for rt in $RUNTIMES; do CASES+=("$name $type $rt"); done
    fi
done
for c in "${CASES[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$SAN_JOBS" ]; do wait -n; done
    # shellcheck disable=SC2086
    run_case $c &
done
wait

NPASS=0
NFAIL=0
{
    echo
    printf '%-14s %-7s %12s %12s %-9s %8s %s\n' sample runtime plain_errors shim_errors identical replays result
    declare -a FAILS=()
    for c in "${CASES[@]}"; do
        read -r name _ rt <<<"$c"
        dir="$OUT/$name.$rt"
        if [ -f "$dir/row" ]; then
            cat "$dir/row"
        else
            printf '%-14s %-7s %12s %12s %-9s %8s %s\n' "$name" "$rt" NA NA no NA FAIL
            echo "case did not finish" >"$dir/why"
        fi
        if [ -s "$dir/why" ] || [ ! -f "$dir/row" ]; then
            NFAIL=$((NFAIL + 1))
            while read -r w; do FAILS+=("$name/$rt: $w"); done <"$dir/why"
        else
            NPASS=$((NPASS + 1))
        fi
        [ -f "$dir/notes" ] && while read -r w; do FAILS+=("$name/$rt: $w"); done <"$dir/notes"
    done
    if [ ${#FAILS[@]} -gt 0 ]; then
        echo
        echo "failures and notes:"
        printf '  %s\n' "${FAILS[@]}"
    fi
    echo
    echo "sanitize: logs in $OUT; $TOOL, shim via $PRELOAD_MODE; elapsed $((SECONDS - T0)) s"
    echo "sanitize: $NPASS passed, $NFAIL failed"
    echo "$NPASS $NFAIL" >"$TMPD/counts"
} | tee "$OUT/summary.txt"

read -r NPASS NFAIL <"$TMPD/counts"
[ "$NFAIL" -eq 0 ] && [ "$NPASS" -gt 0 ]
