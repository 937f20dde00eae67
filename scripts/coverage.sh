#!/usr/bin/env bash
# coverage.sh: what generated programs alone reach of graphshim (make coverage).
#
# Builds the test library with gcov's counters in its own tree ($BUILD, default
# build/cov), runs the differential fuzzer over it for SECONDS_BUDGET seconds
# (default 120) from seed FUZZ_START (default 1), COVERAGE_INJECT (default 3)
# injected faults a seed, and prints
#   - per file of policy/, interpose/ and driver/: lines and branches reached
#     (a branch counts where it was taken at least once), and the sums;
#   - per row of driver/hooks.def of class op or boundary: whether a generated
#     program called it (the fake driver's call log of the programs' runs
#     without graphshim, COVERAGE_LOG_SEEDS of them, default 400).
# The table also goes to $BUILD/coverage.txt; gcov's own files to $BUILD/gcov/.
# Nothing but the fuzzer runs against the counters: the figures are the
# fuzzer's, not the hand-written tests'.  The build counts the branches of the
# library users run: the test build's assertions (GS_ASSERT) and its switch
# that turns rules off (GS_DROPPED) are compiled away there as in that library
# (-DGS_COVERAGE), and the loop settings that turn a rule off are skipped
# (fuzzrun --no-drop).  Before 2026-12-08 they were counted: 78 assertion
# branches the engine never takes on purpose, 56 of a rule dropped.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/cov}
SECONDS_BUDGET=${SECONDS_BUDGET:-300}
FUZZ_START=${FUZZ_START:-1}
LOG_SEEDS=${COVERAGE_LOG_SEEDS:-400}
JOBS=${FUZZ_JOBS:-$(nproc)}
INJECT=${COVERAGE_INJECT:-3}   # injected runs a seed (fuzzrun --inject; make fuzz-test runs 1)
# The loop, step and period programs (a third of a seed's time) with every Nth
# seed only: the same few rules each time; the seconds go to more programs.
LOOPS_EVERY=${COVERAGE_LOOPS_EVERY:-4}
OUTFILE=$BUILD/coverage.txt

make -s --no-print-directory BUILD="$BUILD" GS_COVERAGE_BUILD=1 GS_QUIET=1 \
    "$BUILD/tests/fuzzprog" "$BUILD/tests/fuzzrun" "$BUILD/test/libgraphshim.so" "$BUILD/libgraphshim.so" \
    "$BUILD/fakecuda/libcuda.so.1"
obj=$BUILD/test/obj
find "$obj" -name '*.gcda' -delete
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gs-coverage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "coverage: fuzzing for ${SECONDS_BUDGET}s from seed $FUZZ_START over the coverage build ($BUILD)"
# The whole log in $BUILD/fuzz.log; a difference does not stop the table.
fuzz_rc=0
TMPDIR=$tmp "$BUILD/tests/fuzzrun" --jobs "$JOBS" --start "$FUZZ_START" --seconds "$SECONDS_BUDGET" \
    --timeout 60 --max-threads 8 --inject "$INJECT" --loops-every "$LOOPS_EVERY" --no-drop >"$BUILD/fuzz.log" || fuzz_rc=$?
tail -n 20 "$BUILD/fuzz.log"

# --- Lines and branches, per file ------------------------------------------
# row NAME LINES_REACHED LINES BRANCHES_TAKEN BRANCHES: one line of the table.
row() {
    awk -v n="$1" -v lr="$2" -v ln="$3" -v br="$4" -v bn="$5" 'BEGIN {
        printf "%-34s %6d/%-5d %4.0f%% %6d/%-5d %4.0f%%\n", n, lr, ln, ln ? 100 * lr / ln : 0, br, bn, bn ? 100 * br / bn : 0 }'
}
mkdir -p "$BUILD/gcov"
rm -f "$BUILD/gcov/"*.gcov
{
    printf '%-34s %17s %19s\n' "file" "lines reached" "branches taken"
    el=0 eL=0 eb=0 eB=0
    for dir in policy interpose driver; do
        tl=0 ll=0 tb=0 lb=0
        for src in $(find "$dir" -name '*.c' ! -name knobs_doc.c | sort); do
            gcno=$obj/${src%.c}.gcno
            [ -f "$gcno" ] || continue
            # gcov -b: "Lines executed:P% of N", "Taken at least once:P% of N"
            # from the root, where the objects' source paths lead (gcov's
            # annotated files land here, then move to $BUILD/gcov)
            out=$(gcov -b -p -o "$(dirname "$gcno")" "$src" 2>/dev/null | awk -v f="$(basename "$src")" '
                    /^File / { want = index($0, f "\x27") > 0 }
                    want && /^Lines executed:/ { split($2, a, "%"); sub(/.*:/, "", a[1]); l = a[1]; nl = $4 }
                    want && /^Taken at least once:/ { split($4, a, "%"); sub(/.*:/, "", a[1]); b = a[1]; nb = $6 }
                    END { printf "%s %s %s %s\n", l + 0, nl + 0, b + 0, nb + 0 }')
            mv -f -- *.gcov "$BUILD/gcov/" 2>/dev/null || true
            read -r lp ln bp bn <<<"$out"
            lr=$(awk -v p="$lp" -v n="$ln" 'BEGIN { printf "%d", p * n / 100 + 0.5 }')
            br=$(awk -v p="$bp" -v n="$bn" 'BEGIN { printf "%d", p * n / 100 + 0.5 }')
            row "$src" "$lr" "$ln" "$br" "$bn"
            tl=$((tl + ln)) ll=$((ll + lr)) tb=$((tb + bn)) lb=$((lb + br))
            case $src in policy/entry/* | policy/graph/* | policy/rules/* | policy/stream/*)
                el=$((el + ln)) eL=$((eL + lr)) eb=$((eb + bn)) eB=$((eB + br)) ;;
            esac
        done
        row "$dir/ (all)" "$ll" "$tl" "$lb" "$tb"
    done
    # The engine: the rooms that decide what is held, graphed and issued.
    row "engine: policy/{entry,graph,rules,stream}" "$eL" "$el" "$eB" "$eb"
} | tee "$OUTFILE.files"

# --- hooks.def rows of ops and boundaries a generated program calls -----------
# The programs' own calls: each seed's plain run with the fake driver's log.
for s in $(seq "$FUZZ_START" $((FUZZ_START + LOG_SEEDS - 1))); do
    FAKECUDA_LOG=$tmp/calls.log LD_LIBRARY_PATH=$BUILD/fakecuda timeout 30 \
        "$BUILD/tests/fuzzprog" "$s" 8 >/dev/null 2>&1 || true
    awk '{ print $1 }' "$tmp/calls.log" | sort -u >>"$tmp/called"
    rm -f "$tmp/calls.log"
done
sort -u "$tmp/called" -o "$tmp/called"
# Rows: GS_HOOK/GS_HAND/GS_PASS/GS_ALLOCATE(name, abi, version, pt, class...):
# the classes that hold work or end a segment (driver/driver.h).
printf '#define GS_HOOK(n, a, v, p, c, ...) ROW a c\n#define GS_HAND(n, a, v, p, c) ROW a c\n#define GS_PASS(n, a, v, p, c) ROW a c\n#define GS_ALLOCATE(n, a, v, p, ...) ROW a ALLOC\n#include "hooks.def"\n' |
    cc -E -P -Idriver - | grep -oE 'ROW +[A-Za-z0-9_]+ +[A-Z_]+' | awk '{ print $2, $3 }' >"$tmp/rows"
{
    echo
    echo "hooks.def rows of ops and boundaries called by generated programs ($LOG_SEEDS seeds):"
    awk -v called="$tmp/called" '
        BEGIN { while ((getline c < called) > 0) seen[c] = 1 }
        $2 != "QUERY" && $2 != "PROC" {
            n++; if ($1 in seen) y++; else miss = miss "  never: " $1 " (" $2 ")\n"
        }
        END { printf "  %d of %d rows called\n%s", y, n, miss }' "$tmp/rows"
} | tee "$OUTFILE.rows"
cat "$OUTFILE.files" "$OUTFILE.rows" >"$OUTFILE"
rm -f "$OUTFILE.files" "$OUTFILE.rows"
echo "coverage: the table is in $OUTFILE, gcov's annotated sources in $BUILD/gcov/"
[ "$fuzz_rc" -eq 0 ] || echo "coverage: the fuzzer found differences (exit $fuzz_rc): $BUILD/fuzz.log"
exit "$fuzz_rc"
