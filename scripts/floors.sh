#!/usr/bin/env bash
# floors.sh: the folder-level call graph of libgraphshim's objects, and a check
# that every edge goes down: interpose/ -> policy/ -> driver/ (interpose/ may
# also call driver/ directly).  An edge is a symbol that objects of one folder
# use (nm -u) and objects of another define (nm --defined-only).
#
#   bash scripts/floors.sh [BUILD]       (default build; run make first)
set -u -o pipefail
B=${1:-build}
rank() { case $1 in interpose) echo 2 ;; policy) echo 1 ;; driver) echo 0 ;; *) echo -1 ;; esac; }
objs=$(find "$B/obj" -name '*.o' | sort)
[ -n "$objs" ] || { echo "floors: no objects under $B/obj (run make first)"; exit 2; }
declare -A def
for o in $objs; do
    f=$(basename "$(dirname "$o")")
    for s in $(nm --defined-only -g "$o" | awk '{print $3}'); do def[$s]=$f; done
done
edges=$(for o in $objs; do
    f=$(basename "$(dirname "$o")")
    for s in $(nm -u "$o" | awk '{print $2}'); do
        d=${def[$s]:-}
        [ -n "$d" ] && [ "$d" != "$f" ] && echo "$f -> $d"
    done
done | sort | uniq -c)
echo "$edges"
bad=0
while read -r n from _ to; do
    [ -n "${to:-}" ] || continue
    if [ "$(rank "$from")" -le "$(rank "$to")" ]; then
        echo "floors: $from calls up into $to ($n symbols)"
        bad=1
    fi
done <<<"$edges"
[ $bad = 0 ] && echo "floors: every call goes down"
exit $bad
