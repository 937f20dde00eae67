/*
** guard.h: the guard layer, called by every wrapper around the real driver call.
*/
#ifndef GS_GUARD_H
#define GS_GUARD_H

#include "../../driver/driver.h"

/* Runs before the real call: resolves whatever held work the call could observe
** or enqueue behind, by the call's class (docs/names.md). */
void gs__guard_before(const struct gs_call *c);
/* Runs after the real call with its result: trace and counters. */
void gs__guard_after(const struct gs_call *c, CUresult rc);

/* The names of classes and the calls counted by class: base/names.h. */
#include "../base/names.h"

#endif
