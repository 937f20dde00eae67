#!/usr/bin/env bash
# floors.sh: the library's files and what each one uses, and five checks that
# keep the house as docs/internals.md draws it:
#
#   1. every edge goes down or stays on its floor: a floor is a folder, ranked
#      below; a file may use files of its own floor and of floors below it;
#   2. no circle among files: not through includes, not through calls, not
#      through both (tsort finds them); and no circle among modules, where a
#      module is a .c and the .h of its stem in its folder (a lone file is a
#      module of its own), but those of the modules CIRCLES_KNOWN lists, named
#      every run;
#   3. every source file of the library has at most 400 lines, and no floor
#      holds more than 30 % of the library's lines;
#   4. every function of the library, and of the tests' C files (tests/), has
#      at most 80 lines, from the line at
#      column 0 that names it to its closing "}" at column 0 (its body opens
#      with "{" alone at column 0, or with the head's last line ending in
#      ") {"; a criterion Test is one), but those LONG_KNOWN lists, named every run;
#   5. each field listed in scripts/owners is written only by the files listed
#      as its owners (a write: assigned, incremented, decremented, stored
#      atomically, or the destination of a memset, memcpy or memmove by its
#      address; through -> or ., also within a sub-struct; a sub-struct
#      listed by its name is written where any member of it is; fields are
#      matched by name).
#
# An edge A -> B is "A includes B" (#include "...", resolved as the compiler
# does) or "A's object calls a function, or reads a variable, defined in B's
# object" (nm -u against nm --defined-only).  A file's own header is a file of
# its own: a.c includes a.h, and a.c calls b.c where it uses b's functions.
# Among modules the two are one: a.c -> b.h and b.c -> a.h make a circle of
# modules a and b, where the files alone make none.
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

# 2, among modules: each edge from its module to its module, a module's own
# edges (a.c -> a.h) left out.  A circle here is the set of modules that reach
# each other (what each module reaches, walked in awk): tsort names only the
# loops it breaks, so a module on a circle could go unnamed.  Modules in
# circles known today (CIRCLES_KNOWN), each printed every run, until their
# circle is broken and they are taken off this list.
CIRCLES_KNOWN=""
known=" $(echo $CIRCLES_KNOWN) "
modules=$(sed -E 's/\.[ch]$//' <<<"$srcs" | sort -u)
medges=$(awk 'NF == 2 { a = $1; b = $2; sub(/\.[ch]$/, "", a); sub(/\.[ch]$/, "", b); if (a != b) print a, b }' <<<"$edges" | sort -u)
# One line a circle, its modules in order; modules numbered in order first.
circles=$({ sed 's/^/M /' <<<"$modules"; echo "$medges"; } | awk '
    function node(m) { if (!(m in id)) { id[m] = ++n; name[n] = m } return id[m] }
    $1 == "M" { node($2); next }
    NF == 2 { a = node($1); out[a] = out[a] " " node($2) }
    END {
        # r[i, j]: j is reached from i along one edge or more.
        for (i = 1; i <= n; i++) {
            split("", seen); q[1] = i; h = 1; t = 1
            while (h <= t) {
                k = split(out[q[h++]], next_, " ")
                for (x = 1; x <= k; x++)
                    if (!(next_[x] in seen)) { seen[next_[x]] = 1; r[i, next_[x]] = 1; q[++t] = next_[x] }
            }
        }
        for (i = 1; i <= n; i++) {
            if (!((i, i) in r) || (i in done)) continue
            line = ""
            for (j = i; j <= n; j++) if ((i, j) in r && (j, i) in r) { line = line " " name[j]; done[j] = 1 }
            print substr(line, 2)
        }
    }')
while read -r c; do
    [ -n "$c" ] || continue
    new=""
    for m in $c; do [[ $known == *" $m "* ]] || new="$new $m"; done
    if [ -z "$new" ]; then
        echo "  known: a circle among modules: $c (CIRCLES_KNOWN in scripts/floors.sh)"
        continue
    fi
    # A new circle, with the edges that make it, for whoever breaks it.
    echo "floors: a circle among modules: $c (not on CIRCLES_KNOWN:$new)"
    awk -v c=" $c " '{ a = $1; b = $2; sub(/\.[ch]$/, "", a); sub(/\.[ch]$/, "", b)
        if (a != b && index(c, " " a " ") && index(c, " " b " ")) print "  " $1 " -> " $2 }' <<<"$edges"
    bad=1
done <<<"$circles"
incircle=" $(echo $circles) "
for m in $CIRCLES_KNOWN; do
    [[ $incircle == *" $m "* ]] || { echo "floors: $m is in no circle among modules: take it off CIRCLES_KNOWN"; bad=1; }
done

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
# every run, until it is shortened and taken off this list.  The tests are held
# to the library's bar.
LONG_KNOWN=""
tsrcs=$( [ -d tests ] && find tests -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
long=$(for f in $srcs $tsrcs; do
    case $f in *.c | *.h) ;; *) continue ;; esac
    # A head: a line at column 0 that names something and opens "(".  The
    # body opens with "{" alone at column 0, or at the end of the head when
    # its last line (itself, or one indented below it) ends in ") {" and no
    # line of it has ";" or "=": a struct's, union's or enum's head has no
    # "(", an initializer has "=", a prototype ";", a macro's body a "\" at
    # the end of its lines, and a statement stands indented inside a body.
    # Its name: the word before the head's "(", past any __attribute__((...));
    # a criterion test's, its name argument (Test(suite, name, ...),
    # ParameterizedTest(type, suite, name, ...)).
    awk 'function fname(s,  a, k) {
             if (s ~ /^(Parameterized)?Test\(/) {
                 k = s ~ /^Test/ ? 2 : 3; sub(/^[A-Za-z]*\(/, "", s); split(s, a, ",")
                 s = a[k]; gsub(/[ \t)]/, "", s); return s }
             sub(/^(__attribute__[ \t]*\(\([^()]*(\([^()]*\)[^()]*)*\)\)[ \t]*)+/, "", s)
             sub(/\(.*/, "", s); sub(/.*[ \t*]/, "", s); return s }
         /^[^ \t]/ { open = 0 }
         /^[A-Za-z_].*\(/ { head = FNR; name = $0; open = !/[;=]/ }
         open && /[;=]/ { open = 0 }
         open && !start && /\)[ \t]*\{[ \t]*$/ { start = head; open = 0 }
         /^\{/ { start = head }
         /^\}/ && start { n = FNR - start + 1; if (n > 80) print FILENAME ":" fname(name) " " start " " n
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
# A memset, memcpy or memmove writes its first argument: &s->field, or an
# element of it (&s->field[i]); &s->field.sub writes sub, listed by its name.
mem='(^|[^A-Za-z0-9_])(__builtin_)?mem(set|cpy|move)\([[:space:]]*&[[:space:]]*'
# A sub-struct listed by its name is written where any member of it is
# (s->chunk.last_chunk = ...; the stream's state by owner, stream.h).
sub='(\.[A-Za-z_][A-Za-z0-9_]*|\[[^]]*\])*'
writes=$(while read -r field own; do
    case $field in '' | '#'*) continue ;; esac
    grep -nE "(->|\.)$field$sub[[:space:]]*([-+*/|&^]?=[^=]|\+\+|--)|(\+\+|--)[[:space:]]*$lv$field$sub([^][A-Za-z0-9_.-]|$)|atomic_(store|exchange|fetch_[a-z]+|compare_exchange_[a-z]+)(_explicit)?\(&$lv$field\b|$mem$lv$field$sub[[:space:]]*[,[]" \
        $srcs /dev/null | while IFS=: read -r f line _; do
        case " $own " in *" $f "*) ;; *) echo "floors: $f:$line writes $field, which only $own may write (scripts/owners)" ;; esac
    done
done <"$owners")
[ -z "$writes" ] || { echo "$writes"; bad=1; }
nfields=$(grep -cvE '^[[:space:]]*(#|$)' "$owners")
nknown=$(wc -w <<<"$LONG_KNOWN")
[ "$nknown" = 0 ] && known_text="" || known_text=" but $nknown known"

ncircles=$(grep -c . <<<"$circles")
[ "$ncircles" = 0 ] && circles_text=" or modules" ||
    circles_text=", none among modules but $ncircles known (of $(wc -w <<<"$CIRCLES_KNOWN") modules)"

[ $bad = 0 ] && echo "floors: $(wc -l <<<"$edges") edges among $(wc -w <<<"$srcs") files in $(wc -l <<<"$modules") modules, every one down or level, no circle among files$circles_text; no function over 80 lines$known_text; $nfields fields written by their owners alone"
exit $bad
