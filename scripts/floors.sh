#!/usr/bin/env bash
# floors.sh: the library's files and what each one uses, and three checks that
# keep the house as docs/internals.md draws it:
#
#   1. every edge goes down or stays on its floor: a floor is a folder, ranked
#      below; a file may use files of its own floor and of floors below it;
#   2. no circle among files: not through includes, not through calls, not
#      through both (tsort finds them);
#   3. every source file of the library has at most 400 lines, and no floor
#      holds more than 30 % of the library's lines.
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
rank() {
    local i=0 f
    for f in $FLOORS; do
        [ "$f" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}

# The library's objects: those whose source is still there (a moved file's old
# object may linger in a build directory).
objs=$(find "$B/obj" -name '*.o' | sort | while read -r o; do
    p=${o#"$B/obj/"}
    { [ -f "${p%.o}.c" ] || [ -f "${p%.o}.S" ]; } && echo "$o"
done)
[ -n "$objs" ] || { echo "floors: no objects under $B/obj (run make first)"; exit 2; }
srcs=$(find include driver interpose policy -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' -o -name '*.def' \) \
       ! -name knobs_doc.c | sort)

# The source file of an object: $B/obj/x/y.o -> x/y.c or x/y.S.
src_of() {
    local p=${1#"$B/obj/"}
    p=${p%.o}
    if [ -f "$p.c" ]; then echo "$p.c"; else echo "$p.S"; fi
}

declare -A def
for o in $objs; do
    s=$(src_of "$o")
    for sym in $(nm --defined-only -g "$o" | awk '{print $3}'); do def[$sym]=$s; done
done

edges=$(
    for o in $objs; do
        s=$(src_of "$o")
        for sym in $(nm -u "$o" | awk '{print $2}'); do
            d=${def[$sym]:-}
            [ -n "$d" ] && [ "$d" != "$s" ] && echo "$s $d"
        done
    done
    # Includes: the including file's folder first, then -Iinclude -Idriver -Iinterpose.
    for f in $srcs; do
        grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' "$f" | sed -E 's/.*"([^"]+)"/\1/' |
        while read -r inc; do
            for dir in "$(dirname "$f")" include driver interpose; do
                if [ -f "$dir/$inc" ]; then
                    t=$(realpath --relative-to=. "$dir/$inc")
                    [ "$t" != "$f" ] && echo "$f $t"
                    break
                fi
            done
        done
    done | sort -u
)

bad=0
# 1. Downward or level.
folder_edges=$(while read -r from to; do
    [ -n "${to:-}" ] || continue
    echo "$(dirname "$from") $(dirname "$to")"
done <<<"$edges" | sort | uniq -c)
echo "$folder_edges" | awk '$2 != $3 {print "  " $2 " -> " $3 " (" $1 " edges)"}'
while read -r from to; do
    [ -n "${to:-}" ] || continue
    rf=$(rank "$(dirname "$from")") rt=$(rank "$(dirname "$to")")
    if [ "$rf" -lt 0 ] || [ "$rt" -lt 0 ]; then
        echo "floors: $from -> $to: a folder without a floor (FLOORS in scripts/floors.sh)"
        bad=1
    elif [ "$rf" -lt "$rt" ]; then
        echo "floors: $from uses $to, a floor above it"
        bad=1
    fi
done <<<"$edges"

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

[ $bad = 0 ] && echo "floors: $(wc -l <<<"$edges") edges among $(wc -w <<<"$srcs") files, every one down or level, no circle"
exit $bad
