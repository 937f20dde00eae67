/*
** rows.c: the rows of hooks.def as data (gs__rows): each entry point's base name,
** exported symbol, version, variant and class.
**
** The bottom of interpose/: it names no wrapper, so every file may read it (init
** resolves the real pointers by these names, the shims name their calls by them).
** The wrapper each row hands to a program is lookup.c's, which sits at the top.
*/
#include "interpose.h"

const struct gs_row gs__rows[GS_NROWS] = {
#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream) {#name, #abi, ver, pt, GS_##cls},
#define GS_HAND(name, abi, ver, pt, cls) {#name, #abi, ver, pt, GS_##cls},
#define GS_PASS(name, abi, ver, pt, cls) {#name, #abi, ver, pt, GS_##cls},
#include "hooks.def"
#undef GS_HOOK
#undef GS_HAND
#undef GS_PASS
};
