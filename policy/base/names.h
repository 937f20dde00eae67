/*
** names.h: what the engine's layers and the report name alike: why held work
** went out eagerly (bails), the classes of driver calls and how many of each
** came, and the guard rules a test may turn off.
*/
#ifndef GS_NAMES_H
#define GS_NAMES_H

#include <stddef.h>

#include "../../driver/driver.h"

/* Why held ops were issued eagerly instead of as a graph. */
enum gs_bail {
    GS_BAIL_MISMATCH,      /* the next op differed from every stable sequence */
    GS_BAIL_WATCHDOG,      /* held longer than GRAPHSHIM_MAX_DEFER_US */
    GS_BAIL_GRAPH_FAILED,  /* capture, instantiate or launch of the graph failed */
    GS_BAIL_OTHER_STREAM,  /* legacy-stream ordering with another stream */
    GS_BAIL_APP_CAPTURE,   /* the program began a capture of its own */
    GS_BAIL_UNHOLDABLE,    /* an op the engine cannot hold (unknown attribute, memory kind) */
    GS_BAIL_NO_GAIN,       /* the sequence ran slower as a graph than eagerly: eager for good */
    GS_BAIL_EXIT,          /* the process exits */
    GS_BAIL_SYNC_BUSY,     /* no capture while another thread synchronizes the context */
    GS_BAIL_BODY_END,      /* an op that did not follow the loop body held (body.h) */
    GS_BAIL_BOUNDARY,      /* a boundary in the middle of a sequence: + class */
    GS_NBAIL = GS_BAIL_BOUNDARY + GS_NCLASSES
};

/* The report's name of a bail reason: a static string, or the boundary's in buf. */
const char *gs__bail_name(int b, char *buf, size_t len);

/* Name of a class of driver call (driver.h), for the trace and the report. */
const char *gs__class_name(int cls);

/* Calls counted by class since start (not ops: they are counted per stream); the
** guard counts them, the report prints them. */
extern atomic_long gs__calls_by_class[GS_NCLASSES];

/* Guard rules the test build may turn off (GRAPHSHIM_TEST_DROP_RULE), to show
** the wrong result each one prevents, and the capture budget (rules/resolve.c) or
** the pass-through of attribute sets that change nothing (interpose/attr.c), to
** show the graphs they save. */
enum gs_rule {
    GS_RULE_NONE, GS_RULE_SYNC, GS_RULE_EVENT, GS_RULE_HOSTFN, GS_RULE_ALLOC, GS_RULE_SYNCOP,
    GS_RULE_PAGEABLE_D2H, GS_RULE_LEGACY, GS_RULE_CAPTURE, GS_RULE_UNCLASSIFIED, GS_RULE_PARAMS,
    GS_RULE_WATCHDOG, GS_RULE_STAGING, GS_RULE_STREAM_DESTROY, GS_RULE_MODULE, GS_RULE_SYNC_CAPTURE,
    GS_RULE_CURRENT, GS_RULE_BUDGET, GS_RULE_ATTR_KEEP, GS_RULE_HOPELESS_REST,
    GS_RULE_SHORT_TAIL, GS_RULE_CHUNK_IDLE, GS_RULE_HOST_BIND, GS_RULE_BIG_BODY, GS_RULE_COPY_RANGE,
    GS_RULE_DRAIN, GS_RULE_RESUME
};
#define GS_RULE_NAMES                                                                  \
    "sync, event, hostfn, alloc, syncop, pageable-d2h, legacy, capture, unclassified, " \
    "params, watchdog, staging, stream-destroy, module, sync-capture, current, budget, attr-keep, hopeless-rest, short-tail, chunk-idle, host-bind, big-body, copy-range, drain, resume"

/* GS_DROPPED(rule): is rule turned off?  Only the test build (-DGS_TEST) has
** the switch; in the library users run it is the constant 0, and every branch
** on it is compiled away. */
#ifdef GS_TEST
extern int gs__dropped_rule;
#define GS_DROPPED(rule) GS_UNLIKELY(gs__dropped_rule == (rule))

/* Sets gs__dropped_rule from GRAPHSHIM_TEST_DROP_RULE, and says on one line,
** whatever GRAPHSHIM_LOG says, which rule is off or that the value names none. */
void gs__drop_rule(void);
#else
#define GS_DROPPED(rule) (0 && (rule))
static inline void gs__drop_rule(void) {}
#endif

#endif
