#!/usr/bin/env bash
# floors.sh: the library's files and what each one uses, and five checks that
# keep the house as docs/internals.md draws it:
#
#   1. every edge goes down or stays on its floor: a floor is a folder, ranked
#      below; a file may use files of its own floor and of floors below it;
#   2. no circle among files: not through includes, not through calls, not
#      through both (tsort finds them);
#   3. every source file of the library has at most 400 lines, and no floor
#      holds more than 30 % of the library's lines;
#   4. every function of the library has at most 80 lines, from the line at
#      column 0 that names it to its closing brace (a function's body opens
#      with "{" alone at column 0, as everywhere here);
#   5. each field listed in scripts/owners is written only by the files listed
#      as its owners (a write: assigned, incremented, decremented or stored
#      atomically, through -> or ., also within a sub-struct; fields are
#      matched by name).
#
# An edge A -> B is "A includes B" (#include "...", resolved as the compiler
# does) or "A's object calls a function, or reads a variable, defined in B's
# object" (nm -u against nm --defined-only).  A file's own header is a file of
# its own: a.c includes a.h, and a.c calls b.c where it uses b's functions.
#
#   bash scripts/floors.sh [BUILD]       (default build; run make first)
set -u -o pipefail
B=${1:-build}

# Floors, lowest first.  A folder not listed fails the check: a new folder
# gets its place here.
FLOORS="include driver policy/base policy/graph policy/stream policy/rules policy/report policy/entry interpose"

# The library's objects: those whose source is still there (a moved file's old
# object may linger in a build directory), but the knob table's printer.
objs=$(find "$B/obj" -name '*.o' ! -name knobs_doc.o | sort | while read -r o; do
    p=${o#"$B/obj/"}
    { [ -f "${p%.o}.c" ] || [ -f "${p%.o}.S" ]; } && echo "$o"
done)
[ -n "$objs" ] || { echo "floors: no objects under $B/obj (run make first)"; exit 2; }
srcs=$(find include driver interpose policy -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' -o -name '*.def' \) \
       ! -name knobs_doc.c | sort)

# Each file's edges, from one nm of the defined symbols, one of the undefined
# ones, and one grep of the includes (a process costs milliseconds here).
# nm -A prints "OBJECT:..."; an object's source is x/y.c or x/y.S.
objsrc() { awk -v B="$B/obj/" '{ o = $0; sub("^" B, "", o); sub(/\.o$/, "", o); print $0, o }' <<<"$objs"; }
edges=$(
    {
        objsrc | while read -r o p; do
            [ -f "$p.c" ] && echo "S $o $p.c" || echo "S $o $p.S"
        done
        nm -A --defined-only -g $objs | awk '{ split($1, f, ":"); print "D", f[1], $3 }'
        nm -A -u $objs | awk '{ split($1, f, ":"); print "U", f[1], $NF }'
    } | awk '
        $1 == "S" { src[$2] = $3; next }
        $1 == "D" { def[$3] = src[$2]; next }
        $1 == "U" && ($3 in def) && def[$3] != src[$2] { print src[$2], def[$3] }'
    # Includes: the including file's folder first, then -Iinclude -Idriver -Iinterpose.
    grep -HoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' $srcs | sed -E 's/^([^:]*):.*"([^"]+)"/\1 \2/' |
    while read -r f inc; do
        d=${f%/*}
        for dir in "$d" include driver interpose; do
            if [ -f "$dir/$inc" ]; then
                t=$dir/$inc
                # ../ steps, as realpath would resolve them (no links here).
                while [[ $t == */../* ]]; do t=$(sed -E 's#[^/]+/\.\./##' <<<"$t"); done
                [ "$t" != "$f" ] && echo "$f $t"
                break
            fi
        done
    done
)
edges=$(sort -u <<<"$edges")

bad=0
# 1. Downward or level.
echo "$edges" | awk 'NF == 2 { a = $1; b = $2; sub(/\/[^\/]*$/, "", a); sub(/\/[^\/]*$/, "", b); n[a " -> " b] += (a != b) }
    END { for (k in n) if (n[k]) print "  " k " (" n[k] " edges)" }' | sort
out=$(awk -v floors="$FLOORS" '
    BEGIN { n = split(floors, f, " "); for (i = 1; i <= n; i++) rank[f[i]] = i }
    NF == 2 {
        a = $1; b = $2; sub(/\/[^\/]*$/, "", a); sub(/\/[^\/]*$/, "", b)
        if (!(a in rank) || !(b in rank))
            print "floors: " $1 " -> " $2 ": a folder without a floor (FLOORS in scripts/floors.sh)"
        else if (rank[a] < rank[b])
            print "floors: " $1 " uses " $2 ", a floor above it"
    }' <<<"$edges")
[ -z "$out" ] || { echo "$out"; bad=1; }

# 2. No circle (tsort names the files of each one it meets).
if ! loops=$(awk 'NF == 2' <<<"$edges" | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
    echo "floors: a circle among files:"
    echo "$loops" | sed 's/^tsort: /  /'
    bad=1
fi

# 3. Sizes.
total=$(cat $srcs | wc -l)
for f in $srcs; do
    n=$(wc -l <"$f")
    [ "$n" -le 400 ] || { echo "floors: $f has $n lines (at most 400)"; bad=1; }
done
for fl in $FLOORS; do
    n=$(find "$fl" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' -o -name '*.def' \) ! -name knobs_doc.c \
        -exec cat {} + 2>/dev/null | wc -l)
    echo "  $fl: $n lines"
    [ $((n * 100)) -le $((total * 30)) ] || { echo "floors: $fl holds $n of $total lines (at most 30 %)"; bad=1; }
done

# 4. Functions.  Those over 80 lines known today (FILE:NAME), each printed
# every run, until it is shortened and taken off this list.
LONG_KNOWN=""
long=$(for f in $srcs; do
    case $f in *.c | *.h) ;; *) continue ;; esac
    awk '/^[A-Za-z_].*\(/ { head = FNR; name = $0 }
         /^\{/ { start = head }
         /^\}/ && start { n = FNR - start + 1; if (n > 80) { sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
                                                               print FILENAME ":" name " " start " " n }
                          start = 0 }' "$f"
done)
while read -r fn start n; do
    [ -n "$fn" ] || continue
    if [[ " $LONG_KNOWN " == *" $fn "* ]]; then
        echo "  known: ${fn%%:*}:$start ${fn#*:} has $n lines (at most 80; LONG_KNOWN in scripts/floors.sh)"
    else
        echo "floors: ${fn%%:*}:$start ${fn#*:} has $n lines (at most 80)"
        bad=1
    fi
done <<<"$long"
for fn in $LONG_KNOWN; do
    grep -q "^$fn " <<<"$long" || { echo "floors: $fn is no longer over 80 lines: take it off LONG_KNOWN"; bad=1; }
done

# 5. Owners of fields.
owners=$(dirname "$0")/owners
# A field's struct may be reached through others (n->chunk.chunk_votes).
lv='([A-Za-z_][A-Za-z0-9_]*(->|\.))+'
writes=$(while read -r field own; do
    case $field in '' | '#'*) continue ;; esac
    grep -nE "(->|\.)$field[[:space:]]*([-+*/|&^]?=[^=]|\+\+|--)|(\+\+|--)[[:space:]]*$lv$field([^][A-Za-z0-9_.-]|$)|atomic_(store|exchange|fetch_[a-z]+|compare_exchange_[a-z]+)(_explicit)?\(&$lv$field\b" \
        $srcs /dev/null | while IFS=: read -r f line _; do
        case " $own " in *" $f "*) ;; *) echo "floors: $f:$line writes $field, which only $own may write (scripts/owners)" ;; esac
    done
done <"$owners")
[ -z "$writes" ] || { echo "$writes"; bad=1; }
nfields=$(grep -cvE '^[[:space:]]*(#|$)' "$owners")
nknown=$(wc -w <<<"$LONG_KNOWN")
[ "$nknown" = 0 ] && known_text="" || known_text=" but $nknown known"

[ $bad = 0 ] && echo "floors: $(wc -l <<<"$edges") edges among $(wc -w <<<"$srcs") files, every one down or level, no circle; no function over 80 lines$known_text; $nfields fields written by their owners alone"
exit $bad
