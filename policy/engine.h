/*
** engine.h: the engine's entry points, called by the interposer.
*/
#ifndef GS_ENGINE_H
#define GS_ENGINE_H

#include "../driver/driver.h"

struct gs_stream;

/* Guard rules a test may turn off (GRAPHSHIM_TEST_DROP_RULE), to show the wrong
** result each one prevents, and the capture budget (resolve.c) or the pass-through of
** attribute sets that change nothing (interpose/attr.c), to show the graphs they
** save.  GS_RULE_NONE in normal use. */
enum gs_rule {
    GS_RULE_NONE, GS_RULE_SYNC, GS_RULE_EVENT, GS_RULE_HOSTFN, GS_RULE_ALLOC, GS_RULE_SYNCOP,
    GS_RULE_PAGEABLE_D2H, GS_RULE_LEGACY, GS_RULE_CAPTURE, GS_RULE_UNCLASSIFIED, GS_RULE_PARAMS,
    GS_RULE_WATCHDOG, GS_RULE_STAGING, GS_RULE_STREAM_DESTROY, GS_RULE_MODULE, GS_RULE_SYNC_CAPTURE,
    GS_RULE_CURRENT, GS_RULE_BUDGET, GS_RULE_ATTR_KEEP, GS_RULE_HOPELESS_REST,
    GS_RULE_SHORT_TAIL, GS_RULE_CHUNK_IDLE, GS_RULE_HOST_BIND, GS_RULE_BIG_BODY
};
extern int gs__dropped_rule;
#define GS_DROPPED(rule) GS_UNLIKELY(gs__dropped_rule == (rule))

/* Once, from gs__init(), after the real driver table is resolved. */
void gs__engine_init(void);
/* At exit: issues held work, writes the report. */
void gs__engine_exit(void);
/* Around fork(): phase 0 before, 1 in the parent after, 2 in the child after. */
void gs__engine_fork(int phase);

/* What to do with an op (gs__engine_op_begin). */
enum { GS_OP_PASS, GS_OP_ISSUE, GS_OP_HELD };

/* An op (launch, copy, memset) on the normalized stream, with its key (key.h;
** len < 0: the op cannot be held).  stage_src: the pageable source of an
** H2D_PAGEABLE copy, snapshotted if the op is held.
**   GS_OP_HELD: the engine holds it; the call returns CUDA_SUCCESS.
**   GS_OP_ISSUE: the caller issues it through the real driver, then calls
**                gs__engine_op_end(*s, result); the stream stays locked until then.
**   GS_OP_PASS: the caller issues it; nothing else to do. */
int gs__engine_op_begin(struct gs_stream **s, CUstream stream, void *key, int len, const void *stage_src);
void gs__engine_op_end(struct gs_stream *s, CUresult rc);

/* Kernel launch a (key.h) by row id of the shim.  stream is normalized,
** app_stream is what the program passed.  Returns what the program must see. */
struct gs_launch;
CUresult gs__engine_launch(int id, const struct gs_launch *a, CUstream stream, CUstream app_stream);

/* Nonzero while the program captures a stream of its own: then nothing is held,
** and graphshim makes no driver call of its own (not even to build a key). */
int gs__engine_capturing(void);

/* The public API's gs_pause() (after init) and gs_resume(). */
void gs__engine_pause(void);
void gs__engine_resume(void);

/* A call that is not an op: resolves the held work it could observe. */
void gs__engine_boundary(const struct gs_call *c);
/* After a stream synchronize returned successfully (for the gain check). */
void gs__engine_synced(CUstream stream);
/* After a context synchronize returned successfully: every stream's segment that
** ended at it (the gain check). */
void gs__engine_ctx_synced(void);

/* Internal to the engine, shared with the report and the graph cache. */
void gs__engine_capture_call(struct gs_stream *s, int id);
void gs__engine_stream_destroyed(struct gs_stream *s);
void gs__engine_reset(int cls);
void gs__engine_each_stream(void (*fn)(struct gs_stream *, void *), void *arg);

#endif
