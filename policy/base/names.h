/*
** names.h: what the engine's layers and the report name alike: why held work
** went out eagerly (bails), the classes of driver calls and how many of each
** came, and the guard rules a test may turn off.
*/
#ifndef GS_NAMES_H
#define GS_NAMES_H

#include <stddef.h>

#include "../../driver/driver.h"

/* Why held ops were issued eagerly instead of as a graph: the one list of
** bails, from which come enum gs_bail (GS_BAIL_<ID>), the report's names
** (gs__bail_name) and docs/names.md.  After them, a boundary in the middle of a
** sequence, one per class: GS_BAIL_BOUNDARY + class, "boundary-<class>".
** X(ID, name, doc) */
#define GS_BAILS(X)                                                                              \
    X(MISMATCH, "mismatch", "the next op differed from every stable sequence")                   \
    X(WATCHDOG, "watchdog", "held longer than GRAPHSHIM_MAX_DEFER_US")                            \
    X(GRAPH_FAILED, "graph-failed", "capture, instantiate or launch of the graph failed")         \
    X(OTHER_STREAM, "legacy-stream-order", "legacy-stream ordering with another stream")          \
    X(APP_CAPTURE, "app-capture", "the program began a capture of its own")                       \
    X(UNHOLDABLE, "unholdable-op", "an op the engine cannot hold (unknown attribute, memory kind)") \
    X(NO_GAIN, "no-gain", "the sequence ran slower as a graph than eagerly: eager for good")      \
    X(EXIT, "exit", "the process exits")                                                          \
    X(SYNC_BUSY, "ctx-sync-in-progress", "no capture while another thread synchronizes the context") \
    X(BODY_END, "body-end", "an op that did not follow the loop body held (body.h)")                \
    X(STEP, "step", "a step's end came where the held ops were no stable sequence (rules/step.h)") \
    X(XSTREAM, "xstream", "a call outside a group across streams' narrow case ended it (stream/xs.h)") \
    X(NO_MEMORY, "no-memory", "graphshim had no memory for a stream's state, or a default stream's context was not readable: every held op went out, the stream's ops pass")

enum gs_bail {
#define GS_BAIL_ENUM(id, name, doc) GS_BAIL_##id,
    GS_BAILS(GS_BAIL_ENUM)
#undef GS_BAIL_ENUM
    GS_BAIL_BOUNDARY, /* a boundary in the middle of a sequence: + class */
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
** show the graphs they save: the one list of rules, from which come enum
** gs_rule (GS_RULE_<ID>; GS_RULE_NONE is none), the names the switch takes and
** docs/names.md.  X(ID, name, doc) */
#define GS_RULES(X)                                                                                  \
    X(SYNC, "sync", "a synchronize or query ends the segment: the host observes completion")         \
    X(EVENT, "event", "an event record or wait ends the segment")                                    \
    X(HOSTFN, "hostfn", "a host function ends the segment")                                          \
    X(ALLOC, "alloc", "an allocation or free ends the segment")                                      \
    X(SYNCOP, "syncop", "a synchronous copy or memset ends the segment")                             \
    X(PAGEABLE_D2H, "pageable-d2h", "an asynchronous copy into pageable memory ends the segment")    \
    X(LEGACY, "legacy", "the legacy stream and blocking streams order on each other")                \
    X(CAPTURE, "capture", "the program's own capture or graph launch ends the segment")              \
    X(CAPTURE_REFUSED, "capture-refused", "a begin of the program's capture that the driver refused leaves none open") \
    X(UNCLASSIFIED, "unclassified", "a driver call graphshim does not know ends the segment")        \
    X(PARAMS, "params", "a held op goes out with its own arguments")                                 \
    X(WATCHDOG, "watchdog", "held work older than GRAPHSHIM_MAX_DEFER_US goes out")                  \
    X(STAGING, "staging", "a pageable source is copied at the call")                                 \
    X(STREAM_DESTROY, "stream-destroy", "a stream destroy ends its segment")                         \
    X(MODULE, "module", "a module unload ends segments; its functions' layouts are forgotten")        \
    X(SYNC_CAPTURE, "sync-capture", "a context synchronize and the engine's captures wait for each other") \
    X(CURRENT, "current", "each context's default streams have a state of their own")                \
    X(BUDGET, "budget", "the capture budget: learning slows where graphs do not pay")                \
    X(ATTR_KEEP, "attr-keep", "an attribute set that changes nothing keeps the graphs")              \
    X(SMEM_LOWERED, "smem-lowered", "a launch over its lowered shared memory limit is never held")   \
    X(HOPELESS_REST, "hopeless-rest", "learning rests on a stream the budget found hopeless")        \
    X(SHORT_TAIL, "short-tail", "a chunk ends 4 ops before the end where the last was long")          \
    X(CHUNK_IDLE, "chunk-idle", "no chunk where the host had little left to issue")                  \
    X(HOST_BIND, "host-bind", "a graph with host copies is built anew after a free")                 \
    X(BIG_BODY, "big-body", "a loop body of keys over 4 KiB takes its segment from the tree")         \
    X(COPY_RANGE, "copy-range", "a moved copy or memset is held only inside its allocation")          \
    X(DRAIN, "drain", "shorter chunks where the GPU still ran them at synchronizes")                 \
    X(CHUNK_BUSY, "chunk-busy", "a slow host's chunk ends only where the GPU ran dry")                  \
    X(RESUME, "resume", "holding resumes after a stall where a chunk ended")                          \
    X(OOM_RETRY, "oom-retry", "a failed allocation is made again after graphshim frees its own memory") \
    X(BUSY_GPU, "busy-gpu", "a sequence whose GPU time dwarfs its issue time keeps no graph that is slower at all") \
    X(CAPTURE_PAYS, "capture-pays", "a busy GPU's sequence is graphed once its graph would have saved its capture's cost") \
    X(GAIN_FIRST, "gain-first", "a graph slow in its first 4 timed replays is tried, not after 8")      \
    X(GAIN_CALLS, "gain-calls", "a graph whose replays save no driver call keeps no replay that is slower at all") \
    X(GAIN_STEP, "gain-step", "a sequence an event record or a host function ends is timed to the stream's next op") \
    X(GAIN_NEXT, "gain-next", "a step that runs into the next is timed to the next step's first op") \
    X(GAIN_QUERY, "gain-query", "a sequence a stream query ends is timed to the query that finds the stream idle") \
    X(GAIN_QUERY_ON, "gain-query-on", "a sequence a query found busy waits to be timed past the records and host functions after the query") \
    X(GAIN_QUERY_NEXT, "gain-query-next", "a sequence a query found busy, not timed by a later query or synchronize, is timed to the stream's next op") \
    X(GAIN_UNPAIRED, "gain-unpaired", "a trial that times too few pairs drops a graph whose replays took twice its eager time on average") \
    X(GAIN_SHORT_END, "gain-short-end", "a graphed sequence shorter than GRAPHSHIM_MIN_OPS is timed whatever ended it") \
    X(GAIN_EVENT_SYNC, "gain-event-sync", "the segments an event's synchronize ends are timed to its return") \
    X(GAIN_GROUP_END, "gain-group-end", "a group across streams that a call outside its narrow case ends is timed to its origin's next op") \
    X(GAIN_ORDER_END, "gain-order-end", "a segment that the legacy stream's order issues is timed to the stream's next op") \
    X(GAIN_OWN_TIME, "gain-own-time", "a segment's time leaves out the host's time in the driver for other streams' graphs") \
    X(GAIN_BOUND, "gain-bound", "a graph never timed eagerly whose replays took twice its held runs' time or more runs eagerly for good") \
    X(GAIN_RETIME, "gain-retime", "a graph never timed eagerly asks for an eager run again at its 8th, 16th, 32nd, ... replay") \
    X(GAIN_STRICT, "gain-strict", "a window of replays longer than the eager time at all in 3 of 4, within the 10 % windows allow, starts a trial") \
    X(GAIN_PAIRS, "gain-pairs", "a step an event record or a host function ends is tried once warm; a trial's replay slower than the eager runs around it is slow, over half slow drops it") \
    X(FAILED_KEPT, "failed-kept", "a one-op sequence whose graph failed is not captured again when learned anew") \
    X(XS_JOIN, "xs-join", "a group's capture keeps the program's joins of its members to the origin")             \
    X(XS_BRIDGE, "xs-bridge", "a group's graph launch is bridged to its member streams' work before and after") \
    X(XS_RERECORD, "xs-rerecord", "a group's events are recorded again on the origin after its graph launch") \
    X(XS_DESTROY, "xs-destroy", "an event a group recorded, destroyed by the program, goes once the group's held work went out") \
    X(XS_LEGACY, "xs-legacy", "the legacy stream may be a group's origin")

enum gs_rule {
    GS_RULE_NONE,
#define GS_RULE_ENUM(id, name, doc) GS_RULE_##id,
    GS_RULES(GS_RULE_ENUM)
#undef GS_RULE_ENUM
};

/* GS_DROPPED(rule): is rule turned off?  Only the test build (-DGS_TEST) has
** the switch; in the library users run it is the constant 0, and every branch
** on it is compiled away.  So in the coverage build (-DGS_COVERAGE), which
** counts the branches of the library users run: a rule dropped there is not. */
#ifdef GS_TEST
extern uint64_t gs__dropped_rules;
#ifdef GS_COVERAGE
#define GS_DROPPED(rule) (0 && (rule))
#else
#define GS_DROPPED(rule) GS_UNLIKELY((gs__dropped_rules >> (rule)) & 1)
#endif

/* Sets gs__dropped_rules from GRAPHSHIM_TEST_DROP_RULE (a rule's name, or
** several separated by commas), and says on one line, whatever GRAPHSHIM_LOG
** says, which rules are off or that the value names none. */
void gs__drop_rule(void);
#else
#define GS_DROPPED(rule) (0 && (rule))
static inline void gs__drop_rule(void) {}
#endif

#endif
