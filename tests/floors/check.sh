#!/usr/bin/env bash
# check.sh: scripts/floors.sh on the library as it is (it must pass), then on
# copies of its sources with one fault each, where it must fail: an include that
# goes up a floor, a circle of includes, a circle of modules that no circle of
# files shows, a module left on CIRCLES_KNOWN in no circle, a file over 400 lines, a folder without a floor,
# functions over 80 lines (their bodies opened by "{" alone, by ") {" on the
# head's line, or on its last line; a test's too), and fields of scripts/owners written by a
# file that does not own them (assigned, incremented, stored atomically, also
# through a node's or a stream's sub-struct, and by memset or memcpy).  The objects (for the
# calls) are the build's own.
#
#   bash tests/floors/check.sh [BUILD]
set -u -o pipefail
B=${1:-build}
root=$PWD
bash scripts/floors.sh "$B" || exit 1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 faults=0
# expect NAME PATTERN [NOT]: floors.sh over the copy fails, saying PATTERN (and
# not NOT: the fault is found by the check meant for it, not another).
expect() {
    local out
    faults=$((faults + 1))
    if out=$(cd "$tmp" && bash scripts/floors.sh build 2>&1); then
        echo "floors check: $1: floors.sh passed, and should have failed"
        fails=1
    elif ! grep -q -- "$2" <<<"$out"; then
        echo "floors check: $1: floors.sh failed without saying \"$2\":"
        echo "$out" | grep '^floors' | head -5
        fails=1
    elif [ -n "${3:-}" ] && grep -q -- "$3" <<<"$out"; then
        echo "floors check: $1: floors.sh also said \"$3\":"
        echo "$out" | grep '^floors' | head -5
        fails=1
    else
        echo "floors check: $1: fails as it should"
    fi
}
fresh() {
    rm -rf "${tmp:?}"/*
    cp -r include driver interpose policy scripts "$tmp"
    case $B in /*) ln -s "$B" "$tmp/build" ;; *) ln -s "$root/$B" "$tmp/build" ;; esac
}

fresh
sed -i 's|#include "log.h"|#include "log.h"\n#include "../entry/engine.h"|' "$tmp/policy/base/log.c"
expect "an include up a floor" "policy/base/log.c uses policy/entry/engine.h, a floor above it"

fresh
sed -i 's|#include "layout.h"|#include "layout.h"\n#include "learner.h"|' "$tmp/policy/graph/key.h"
expect "a circle of includes" "a circle among files"

# log.c includes config.h, and config.h includes log.h: modules log and config
# use each other, while the files make no circle (log.c -> config.h -> log.h).
fresh
sed -i 's|#include "log.h"|#include "log.h"\n#include "config.h"|' "$tmp/policy/base/log.c"
expect "a circle of modules, none of files" "a circle among modules: policy/base/config policy/base/log (not on" \
    "a circle among files"


fresh
sed -i 's|CIRCLES_KNOWN="|CIRCLES_KNOWN="policy/base/log |' "$tmp/scripts/floors.sh"
expect "a module on CIRCLES_KNOWN in no circle" "policy/base/log is in no circle among modules: take it off CIRCLES_KNOWN"

fresh
yes '/* filler */' | head -401 >>"$tmp/policy/graph/key.c"
expect "a file over 400 lines" "policy/graph/key.c has"

fresh
mkdir "$tmp/policy/misc"
mv "$tmp/policy/base/clock.h" "$tmp/policy/misc/clock.h"
sed -i 's|"../base/clock.h"|"../misc/clock.h"|' "$tmp/policy/stream/state.h"
expect "a folder without a floor" "a folder without a floor"

fresh
{ printf '\nstatic int filler(void)\n{\n'; yes '    /* filler */' | head -80; printf '    return 0;\n}\n'; } >>"$tmp/policy/rules/rest.c"
expect "a function over 80 lines" "policy/rules/rest.c:[0-9]* filler has 84 lines"

fresh
{ printf '\nstatic int filler(void) {\n'; yes '    /* filler */' | head -80; printf '    return 0;\n}\n'; } >>"$tmp/policy/rules/rest.c"
expect "a function over 80 lines opened with \") {\"" "policy/rules/rest.c:[0-9]* filler has 83 lines"

fresh
{ printf '\nstatic int filler(int a,\n                  int b) {\n'; yes '    /* filler */' | head -80; printf '    return a + b;\n}\n'; } >>"$tmp/policy/rules/rest.c"
expect "a function over 80 lines, its head on two lines, opened with \") {\"" "policy/rules/rest.c:[0-9]* filler has 84 lines"

fresh
mkdir -p "$tmp/tests/integration" "$tmp/tests/fuzz"
{ printf 'Test(suite, filler)\n{\n'; yes '    /* filler */' | head -80; printf '}\n'; } >"$tmp/tests/integration/test_filler.c"
expect "a test over 80 lines" "tests/integration/test_filler.c:1 filler has 83 lines"

fresh
sed -i '0,/^{$/s//{\n    s->fp = 0;/' "$tmp/policy/rules/gain.c"
expect "a stream's field written by a file that does not own it" "policy/rules/gain.c:[0-9]* writes fp, which only"

fresh
sed -i '0,/^{$/s//{\n    ++s->chunk.drain_votes;/' "$tmp/policy/rules/gain.c"
expect "a stream's sub-struct incremented by a file that does not own it" "policy/rules/gain.c:[0-9]* writes chunk"

fresh
sed -i '0,/^{$/s//{\n    atomic_store_explicit(\&s->seg.held_since, 0, memory_order_relaxed);/' "$tmp/policy/rules/watchdog.c"
expect "a sub-struct's field stored atomically by a file that does not own it" "policy/rules/watchdog.c:[0-9]* writes held_since"

fresh
sed -i '0,/^{$/s//{\n    s->gain.last_how = 0;/' "$tmp/policy/rules/chunk.c"
expect "a stream's sub-struct member assigned by another room" "policy/rules/chunk.c:[0-9]* writes gain, which only"

fresh
sed -i '0,/^{$/s//{\n    ++s->cur->chunk.chunk_votes;/' "$tmp/policy/rules/gain.c"
expect "a node's rule field incremented through its sub-struct by another rule" "policy/rules/gain.c:[0-9]* writes chunk"

fresh
sed -i '0,/^{$/s//{\n    memset(\&s->rest_f, 0, sizeof s->rest_f);/' "$tmp/policy/rules/gain.c"
expect "a stream's field cleared by memset in a file that does not own it" "policy/rules/gain.c:[0-9]* writes rest_f, which only"

fresh
sed -i '0,/^{$/s//{\n    memcpy(\&s->cur->chunk.chunk_votes, \&n, sizeof n);/' "$tmp/policy/rules/gain.c"
expect "a node's rule field copied into by memcpy through its sub-struct by another rule" "policy/rules/gain.c:[0-9]* writes chunk"

fresh
sed -i '0,/^{$/s//{\n    s->cur->staging = NULL;/' "$tmp/policy/stream/release.c"
expect "a node's staging buffer set outside its room" "policy/stream/release.c:[0-9]* writes staging"

# A room of struct gs_stream (GS_ROOM, stream.h) is written by its owner alone,
# checked by the compiler: another file's write does not compile, directly,
# through a local pointer, or through the owner's writable name.
# refused NAME FILE PATTERN: FILE of the copy does not compile, saying PATTERN.
refused() {
    local out
    faults=$((faults + 1))
    if out=$(cd "$tmp" && ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"${CUDA_HOME:-/usr/local/cuda}/include" \
        -Iinclude -Ibuild/gen -Idriver -Iinterpose "$2" 2>&1); then
        echo "floors check: $1: $2 compiled, and should not have"
        fails=1
    elif ! grep -q -- "$3" <<<"$out"; then
        echo "floors check: $1: $2 did not compile, without saying \"$3\":"
        echo "$out" | grep error | head -3
        fails=1
    else
        echo "floors check: $1: refused by the compiler as it should be"
    fi
}

# Each row: FILE, what the compiler must say, the fault, and the sed expression
# that plants it in a fresh copy (refused).
while IFS=$'\t' read -r file says name expr; do
    case $file in '#'* | '') continue ;; esac
    fresh
    sed -i "$expr" "$tmp/$file"
    refused "$name" "$file" "$says"
done <<'PLANTS'
policy/rules/gain.c	read-only	a room's field assigned by another file	/^void gs__gain_forget(struct gs_stream \*s)$/{n;s/^{$/{\n    s->chunk.last_chunk = 0;/}
policy/rules/chunk.c	discards .const. qualifier	a room's field written through a local pointer	0,/^{$/s//{\n    { struct gs_step *st = \&s->step; st->unit = 0; }/
policy/rules/rest.c	poisoned	a room written by its writable name outside its owner	0,/^{$/s//{\n    s->budget_w.hopeless = 0;/
# The segment's rooms (cur, holding, seg_held, chunk_since, chunk_depth at the
# top of struct gs_stream; seg; seg_cost), written by segment.h and segment.c alone,
# and the loop bodies' (body), by body.c alone.
policy/rules/gain.c	read-only	the segment's mark assigned by another file	/^void gs__gain_forget(struct gs_stream \*s)$/{n;s/^{$/{\n    s->cur = NULL;/}
policy/rules/chunk.c	poisoned	the segment's mark written by its writable name outside segment.c	/^void gs__chunks_forget(struct gs_stream \*s)$/{n;s/^{$/{\n    s->holding_w = 0;/}
policy/rules/chunk.c	poisoned	the segment's cost written by its writable name outside segment.c	/^void gs__chunks_forget(struct gs_stream \*s)$/{n;s/^{$/{\n    s->seg_cost_w.seg_launches++;/}
policy/rules/step.c	discards .const. qualifier	a loop body's state written through a local pointer outside body.c	/^void gs__step_forget(struct gs_stream \*s)$/{n;s/^{$/{\n    { struct gs_body *b = \&s->body; b->held = 0; }/}
policy/stream/issue.c	poisoned	the loop bodies' room written by its writable name outside body.c	0,/^{$/s//{\n    gs__body_detect_reset(\&s->body_w);/
# A loose field is a room of one field (GS_ROOM(int, ready): streams.c's), a
# group keeps its fields' names (GS_ROOM_FLAT: patch.c's patches, npatches, ...).
policy/entry/boundary.c	read-only	a stream's one-field room assigned by another file	/^static void stream_destroyed(struct gs_stream \*s)$/{n;s/^{$/{\n    s->ready = 0;/}
policy/stream/issue.c	poisoned	a flat room written by its writable name outside its owner	/^void gs__flush(struct gs_stream \*s, int reason)$/{n;s/^{$/{\n    s->patch_w.npatches = 0;/}
PLANTS

[ $fails = 0 ] && echo "floors check: $faults faults, each found"
exit $fails
