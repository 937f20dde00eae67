/*
** prof.h: timers around the engine's phases, for finding where a real program's
** time goes on a machine without a profiler (make profile).
**
** Only in the library built with -DGS_PROFILE (build/prof/libgraphshim.so): there
** every phase below counts its calls and their time stamp counter cycles, per
** thread, and at exit a table goes to stderr (calls, mean ns, and the median and
** 99th percentile from a log2 histogram).  In the normal build every macro is
** empty and nothing is timed.
*/
#ifndef GS_PROF_H
#define GS_PROF_H

#include <stdint.h>

enum gs_prof_phase {
    GS_PROF_LAUNCH,   /* a launch in the engine: key, op_begin, the driver, op_end */
    GS_PROF_KEY,      /* building its key (gs__key_launch; not for the op expected next) */
    GS_PROF_BEGIN,    /* gs__engine_op_begin: hold, learn or issue */
    GS_PROF_HELD,     /*   of those, ops it held */
    GS_PROF_LEARNED,  /*   ops it issued and learned */
    GS_PROF_ISSUED,   /*   ops it issued unlearned (learning rests, or a failed op) */
    GS_PROF_RESTED,   /*   launches where learning rests: their shape only, unlocked */
    GS_PROF_PASSED,   /*   ops it passed through (not holdable, the program captures) */
    GS_PROF_DRIVER,   /* the driver's launch, for an op issued now */
    GS_PROF_DRIVER_OFF, /* the driver's launch, graphshim paused (or the program captures): eager cost */
    GS_PROF_CHUNK,    /* early chunks sent out while holding (part of "held") */
    GS_PROF_KEY_ARGS, /* keys built: the op expected next, with new arguments (a patch) */
    GS_PROF_MISS_NONE, /*   no op expected next (a segment's first op, no learning) */
    GS_PROF_MISS_BODY, /*   a loop body holds the stream */
    GS_PROF_MISS_ATTR, /*   the launch has attributes or `extra` */
    GS_PROF_MISS_OTHER, /*  another op than the one expected next */
    GS_PROF_END,      /* gs__engine_op_end (not for resting launches) */
    GS_PROF_BOUNDARY, /* gs__engine_boundary before a guarded call (a synchronize's resolve) */
    GS_PROF_SYNCED,   /* gs__gain_stream_synced after a stream synchronize (the gain check) */
    GS_PROF_GRAPH,    /* held ops sent out as one graph (gs__launch_graph), in any phase above */
    GS_PROF_GRAPH_SET, /*  of that, choosing a variant and setting its nodes */
    GS_PROF_ARGS_HASH, /*    of that, hashing the held ops' arguments (the variant's) */
    GS_PROF_NODE_SET, /*     of that, the driver's set of one node */
    GS_PROF_GRAPH_CAPTURE, /* capturing and instantiating */
    GS_PROF_GRAPH_LAUNCH, /* the driver's graph launch */
    GS_PROF_EAGER,    /* held ops sent out eagerly (gs__issue_held), in any phase above */
    GS_NPROF
};

#ifdef GS_PROFILE
#include <x86intrin.h>
void gs__prof_add(int phase, uint64_t cycles);
void gs__prof_print(void);
#define GS_PROF_START(v) uint64_t v = __rdtsc()
#define GS_PROF_RESTART(v) ((v) = __rdtsc())
#define GS_PROF_STOP(phase, v) gs__prof_add(phase, __rdtsc() - (v))
/* Adds the cycles since v to phase and to phase2. */
#define GS_PROF_STOP2(phase, phase2, v)                                                                           \
    do {                                                                                                          \
        uint64_t d_ = __rdtsc() - (v);                                                                            \
        gs__prof_add(phase, d_);                                                                                  \
        gs__prof_add(phase2, d_);                                                                                 \
    } while (0)
#else
#define GS_PROF_START(v) ((void)0)
#define GS_PROF_RESTART(v) ((void)0)
#define GS_PROF_STOP(phase, v) ((void)0)
#define GS_PROF_STOP2(phase, phase2, v) ((void)0)
#define gs__prof_print() ((void)0)
#endif

#endif
