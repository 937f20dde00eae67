/*
** guard.h: the guard layer, called by every wrapper around the real driver call.
*/
#ifndef GS_GUARD_H
#define GS_GUARD_H

#include "../driver/driver.h"

/* Runs before the real call: resolves whatever held work the call could observe
** or enqueue behind (DESIGN.md section 4), by the call's class. */
void gs__guard_before(const struct gs_call *c);
/* Runs after the real call with its result: trace and counters. */
void gs__guard_after(const struct gs_call *c, CUresult rc);

/* Name of a class, for the trace and the report. */
const char *gs__class_name(int cls);

/* Calls counted by class since start (not ops: they are counted per stream). */
extern atomic_long gs__calls_by_class[GS_NCLASSES];

#endif
