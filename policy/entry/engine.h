/*
** engine.h: the engine's entry points, called by the interposer.
*/
#ifndef GS_ENGINE_H
#define GS_ENGINE_H

#include "../../driver/driver.h"
#include "../../driver/ops.h"
#include "../base/names.h" /* GS_DROPPED */

struct gs_stream;


/* Once, from gs__init(), after the real driver table is resolved. */
void gs__engine_init(void);
/* At exit: issues held work, writes the report; once, whichever end comes first
** (an exit handler, a signal, Python's finalization: ending.c). */
void gs__engine_exit(void);
/* Once, from gs__init after gs__engine_init: the report and the gate at the
** ends that run no exit handler (SIGINT, SIGTERM, SIGHUP at their default;
** Python's Ctrl-C, through py_at_exit: the process's Py_AtExit, or NULL). */
void gs__ending_init(int (*py_at_exit)(void (*)(void)));
/* Around fork(): phase 0 before, 1 in the parent after, 2 in the child after. */
void gs__engine_fork(int phase);

/* What to do with an op (gs__engine_op_begin). */
enum { GS_OP_PASS, GS_OP_ISSUE, GS_OP_HELD };

/* Inside the engine's doors (copy.c; hold.c has its own for launches), never
** called from another layer: an op (a copy or memset) on the normalized stream,
** with its key (key.h; len < 0: the op cannot be held).  stage_src: the
** pageable source of an H2D_PAGEABLE copy, snapshotted if the op is held.
**   GS_OP_HELD: the engine holds it; the call returns CUDA_SUCCESS.
**   GS_OP_ISSUE: the door issues it through the real driver, then calls
**                gs__engine_op_end(*s, result); the stream stays locked until then.
**   GS_OP_PASS: the door issues it; nothing else to do. */
int gs__engine_op_begin(struct gs_stream **s, CUstream stream, void *key, int len, const void *stage_src);
void gs__engine_op_end(struct gs_stream *s, CUresult rc);

/* The doors of ops, each a whole step of the engine: the op held, or issued
** through the real driver with its stream locked until the result is recorded
** (the lock never crosses into another layer).  Kernel launch a (ops.h) by row
** id of the shim: stream is normalized, app_stream is what the program passed.
** A copy or memset op (ops.h): c names its row, class and normalized stream.
** Each returns what the program must see. */
CUresult gs__engine_launch(int id, const struct gs_launch *a, CUstream stream, CUstream app_stream);
CUresult gs__engine_copy(const struct gs_call *c, const struct gs_copy *op);

/* Nonzero while the program captures a stream of its own: then nothing is held,
** and graphshim makes no driver call of its own (not even to build a key). */
int gs__engine_capturing(void);

/* The public API's gs_pause() (after init) and gs_resume(). */
void gs__engine_pause(void);
void gs__engine_resume(void);

/* Groups across streams (xevent.c, GRAPHSHIM_XSTREAM=1).  An event record or
** wait of the program, c its call: 1 where it was taken as an op of a group (held,
** or issued: *rc the program's answer), 0 where the caller makes it as without
** groups; a record made so is told back (recorded).  An event created (its
** flags), queried or destroyed (gone: 1 where its destroy waits for its
** group's end, and the driver is not to be called now). */
int gs__engine_record(const struct gs_call *c, CUevent e, unsigned flags, CUresult *rc);
int gs__engine_wait(const struct gs_call *c, CUevent e, unsigned flags, CUresult *rc);
void gs__engine_recorded(CUstream st, CUevent e);
void gs__engine_event_created(CUevent e, unsigned flags);
int gs__engine_event_used(CUevent e, int gone);

/* A kernel's name, for the trace ("?" where the driver gives none), asked of
** the kind of handle its layout was had by (a CUkernel passed as a CUfunction
** is named by cuKernelGetName, without a refused cuFuncGetName first); the
** layout is asked for where the engine is on, never where it is off. */
const char *gs__engine_kernel_name(CUfunction f);

/* A call that is not an op: resolves the held work it could observe. */
void gs__engine_boundary(const struct gs_call *c);

/* A begin of the program's capture that the driver refused (c its call):
** where its stream captures nothing, graphshim holds again (rule
** capture-refused); counted open at the call, it would hold nothing for the
** rest of the process. */
void gs__engine_capture_refused(const struct gs_call *c);
#endif
