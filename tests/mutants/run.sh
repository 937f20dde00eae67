#!/usr/bin/env bash
# tests/mutants/run.sh: plants each bug of tests/mutants/list in a scratch copy
# of the tree, one at a time, runs the suites that guard the engine (unit,
# integration, faults: the criterion suites of make test), and prints which
# planted bug was caught and by which test.  Every one must be: a bug the suites
# let through is a hole in them, and the run exits 1.
#
#   bash tests/mutants/run.sh [--list FILE] [--only ID,ID...] [--scratch DIR] [--judge fuzz]
#
# --judge fuzz: the differential fuzzer alone is the judge, not the suites:
# bounded runs over fixed ranges of seeds (FUZZ_JUDGE_START, default 1;
# FUZZ_JUDGE_COUNT seeds, default 120; at most FUZZ_JUDGE_SECONDS, default 60,
# a bug; then the phases of fuzz_judge below, 105 s more), stopped at the first
# difference, which must not occur on the tree without the bug (its seed run
# again there).  Missed bugs are counted, not
# failed: the run exits 0 and its last line says how many the fuzzer caught.
# FUZZ_JUDGE_ARGS: more fuzzrun options, for the judge's runs and the seed's
# run without the bug (`--loops --setting xs`: the programs across streams
# alone, for list-blind-xs: 300 seeds in the time all settings take 40).
#
# A planted bug is a literal replacement of text that occurs exactly once in its
# file; where it occurs zero or several times (the code moved on) the run says
# so and fails: the list is kept with the code.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
list=tests/mutants/list
only=
judge=suites
scratch=${TMPDIR:-/tmp}/graphshim-mutants.$$
jobs=${MUTANT_JOBS:-$(nproc)}
while [ $# -gt 0 ]; do
    case $1 in
    --list) list=$2; shift 2 ;;
    --only) only=,$2,; shift 2 ;;
    --scratch) scratch=$2; shift 2 ;;
    --judge) judge=$2; shift 2 ;;
    *) echo "mutants: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

say() { printf '%s\n' "$*"; }

# The scratch copy: the working tree as it is (committed or not), built once.
rm -rf "$scratch" && mkdir -p "$scratch"
tar -C "$root" --exclude=./build --exclude='./build-*' --exclude=./dist --exclude=./.git -cf - . | tar -C "$scratch" -xf -
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
targets="all build/test/libgraphshim.so build/prof/libgraphshim.so build/tests/unit build/tests/integration \
         build/tests/drvprog build/tests/guardprog build/tests/stepprog build/tests/periodprog build/tests/xsprog \
         build/tests/fuzzprog \
         build/tests/dlopen_tool.so \
         build/tests/nvtxprobe.so build/knobs_doc \
         build/fakecuda/libcuda.so.1"
[ "$judge" = fuzz ] && targets="build/libgraphshim.so build/test/libgraphshim.so build/tests/fuzzprog build/tests/fuzzrun \
         build/fakecuda/libcuda.so.1"
case $judge in suites | fuzz) ;; *) echo "mutants: --judge suites or fuzz, not '$judge'" >&2; exit 2 ;; esac
build() { make -s -j"$jobs" GS_QUIET=1 $targets >build.log 2>&1; }
if ! build; then cat build.log; say "mutants: the unchanged tree does not build"; exit 2; fi

# Runs the suites; prints the binary and the first failing test ("suite::name"),
# or nothing.
suites() {
    local log=$1 bin
    for bin in "unit" "integration !(faults)/*" "integration faults/*"; do
        : >"$log"
        set -- $bin
        build/tests/$1 --fail-fast -j"$jobs" ${2:+--filter "$2"} >"$log" 2>&1 && continue
        # "[FAIL] suite::name: (0.01s)": the test's whole name, without the colon
        echo "$1 $(grep -m1 -oE '\[FAIL\] [^ ]+' "$log" | sed 's/\[FAIL\] //; s/:$//')"
        return 1
    done
    return 0
}

# The fuzzer as the judge, in phases, each until its first difference or its
# time is up, the next only where it found none (FUZZ_JUDGE_PHASES; only "all"
# where FUZZ_JUDGE_ARGS names settings of its own):
#   all     every knob setting, loop program and one injected fault a seed
#   faults  injected faults alone, 4 a seed (FUZZ_JUDGE_FAULT_SECONDS, 60):
#           the all phase's seeds meet few of the faults a bug needs
#   plain   the knob settings alone, no loop program and no fault, on seeds
#           past the all phase's (FUZZ_JUDGE_PLAIN_SECONDS, 45)
# Prints "fuzzrun SEED PHASE" for the first seed that differed, or nothing.
phase_range() {
    case $1 in
    all) echo "--start ${FUZZ_JUDGE_START:-1} --count ${FUZZ_JUDGE_COUNT:-120} --seconds ${FUZZ_JUDGE_SECONDS:-60}" ;;
    faults) echo "--start 1 --count 2000 --seconds ${FUZZ_JUDGE_FAULT_SECONDS:-60}" ;;
    plain) echo "--start $(( ${FUZZ_JUDGE_START:-1} + ${FUZZ_JUDGE_COUNT:-120} )) --count 480 --seconds ${FUZZ_JUDGE_PLAIN_SECONDS:-45}" ;;
    esac
}
phase_mode() {
    case $1 in
    faults) echo "--inject-only --inject 4" ;;
    plain) echo "--inject 0 --loops-every 1000000 --xs-extra 0" ;;
    esac
}
phases=${FUZZ_JUDGE_PHASES:-all faults plain}
[ -n "${FUZZ_JUDGE_ARGS:-}" ] && phases=${FUZZ_JUDGE_PHASES:-all}
fuzz_judge() {
    local log=$1 p
    for p in $phases; do
        build/tests/fuzzrun --jobs "$jobs" $(phase_range "$p") $(phase_mode "$p") --first --timeout 20 --max-threads 8 \
            ${FUZZ_JUDGE_ARGS:-} >"$log" 2>&1 && continue
        echo "fuzzrun $(grep -m1 -oE 'DIFFERENCE seed [0-9]+' "$log" | awk '{ print $3 }') $p"
        return 1
    done
    return 0
}

judge_run() {
    if [ "$judge" = fuzz ]; then fuzz_judge "$1"; else suites "$1"; fi
}

# Does the test that caught a planted bug pass without it?  A test that fails
# on the unchanged tree too caught nothing.
passes_unplanted() {
    local bin=$1 name=$2
    [ -n "$name" ] || return 1
    if [ "$bin" = fuzzrun ]; then
        build/tests/fuzzrun --seed "$name" $(phase_mode "${3:-all}") --max-threads 8 --timeout 20 ${FUZZ_JUDGE_ARGS:-} \
            >unplanted.log 2>&1
        return
    fi
    build/tests/$bin -j"$jobs" --filter "${name/::/\/}" >unplanted.log 2>&1 &&
        grep -q 'Tested: [1-9]' unplanted.log
}

# The list: blocks of "key value" lines (mutant, rule, file, from, to, why),
# a blank line between blocks, # comments.
declare -a ids files froms tos whys rules
n=0
while IFS= read -r line || [ -n "$line" ]; do
    case $line in '#'*) continue ;; esac
    key=${line%% *}
    val=${line#"$key"}
    val=${val#"${val%%[! ]*}"}
    case $key in
    mutant) n=$((n + 1)); ids[n]=$val ;;
    rule) rules[n]=$val ;;
    file) files[n]=$val ;;
    from) froms[n]=$val ;;
    to) tos[n]=$val ;;
    why) whys[n]=$val ;;
    '') ;;
    *) say "mutants: $list: unknown key '$key'"; exit 2 ;;
    esac
done <"$root/$list"

caught=0 missed=0 broken=0 ran=0
t0=$(date +%s)
for i in $(seq 1 "$n"); do
    id=${ids[i]} f=${files[i]}
    [ -n "$only" ] && [[ $only != *",$id,"* ]] && continue
    ran=$((ran + 1))
    cp "$f" "$f.orig"
    # The replacement, literal: exactly one occurrence of from in the file.
    if ! FROM=${froms[i]} TO=${tos[i]} awk '
        BEGIN { from = ENVIRON["FROM"]; to = ENVIRON["TO"]; hits = 0 }
        { line = $0; out = ""
          while ((p = index(line, from)) > 0) { hits++; out = out substr(line, 1, p - 1) to; line = substr(line, p + length(from)) }
          print out line }
        END { exit hits == 1 ? 0 : 1 }' "$f.orig" >"$f"; then
        say "BROKEN  $id: '${froms[i]}' does not occur exactly once in $f"
        broken=$((broken + 1)); mv "$f.orig" "$f"; touch "$f"; continue
    fi
    s0=$(date +%s)
    if ! build; then
        say "BROKEN  $id: does not compile"; sed -n 1,20p build.log
        broken=$((broken + 1))
    elif by=$(judge_run "mutant-$id.log"); then
        say "MISSED  $id ($((  $(date +%s) - s0 )) s): ${whys[i]} [${rules[i]}]"
        missed=$((missed + 1))
    else
        mv "$f.orig" "$f" && touch "$f"
        if build && passes_unplanted $by; then
            what=${by#* }
            [ "$judge" = fuzz ] && what="the fuzzer, seed ${what% *} (phase ${what##* })"
            say "caught  $id ($(( $(date +%s) - s0 )) s) by $what [${rules[i]}]"
            caught=$((caught + 1))
        else
            say "FLAKY   $id: ${by#* } failed with it planted and fails without it too [${rules[i]}]"
            missed=$((missed + 1))
        fi
        continue
    fi
    mv "$f.orig" "$f" && touch "$f"
done
build >/dev/null 2>&1
judged=
[ "$judge" = fuzz ] && judged=" (the fuzzer alone the judge)"
say "mutants: $ran planted, $caught caught, $missed missed or flaky, $broken broken, in $(( $(date +%s) - t0 )) s$judged"
[ "$judge" = fuzz ] && exit $((broken > 0))
[ $((missed + broken)) -eq 0 ]
