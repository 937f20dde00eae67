/*
** body.h: loop bodies inside one segment.
**
** Timing loops, solvers and scans launch the same few ops hundreds of times
** before one synchronize; the segment as a whole may never repeat.  A body is a
** run of P ops (1 <= P <= GS_BODY_MAX_PERIOD) that follows itself back to back
** inside a segment.  Once it has run GRAPHSHIM_WARMUP + 1 times in a row, each
** op that matches the body's next op is held, and every K bodies held go out as
** one graph of K bodies (K a power of two, K * P about GRAPHSHIM_BODY_OPS).  At a
** boundary the whole bodies held go out as graphs of 2^j bodies, the rest of a
** body eagerly; an op that does not match issues what is held, in order, and the
** body is set aside, kept with its graphs for when the loop comes back.
**
** A segment that repeats as a whole is the prefix tree's (learner.h): while it
** holds, bodies are not looked for.  Everything here is guarded by the stream's
** lock.
*/
#ifndef GS_BODY_H
#define GS_BODY_H

#include <stdint.h>

#include "../base/names.h"
#include "../graph/key.h"

struct gs_exec;

#define GS_BODY_MAX_PERIOD 32
#define GS_BODY_RING 64          /* ops of the open segment the detector keeps (> 2 periods) */
#define GS_BODY_KEY_MAX GS_KEY_MAX /* any op may be part of a body, up to 32,764 parameter bytes */
#define GS_BODY_HASH_BYTES 512   /* bytes of a key's head and of its tail the detector hashes */
#define GS_BODY_TREE_KEY_MAX 4096 /* a body with a longer key keeps its segment from the prefix tree */
#define GS_BODY_SEEN 128         /* entries of the last-seen table (a power of two) */
#define GS_BODY_GROUPS 8         /* graphs of 1, 2, 4, ... 128 bodies */
#define GS_BODY_ROWS 8           /* bodies the report lists per stream */
#define GS_BODY_KNOWN 4          /* bodies kept per stream, with their graphs */
#define GS_BODY_QUIET 1024       /* ops searched without finding a body before the search rests */
#define GS_BODY_REST_MAX 65536   /* longest rest, in ops (rests double from GS_BODY_QUIET) */

/* A body that went out as graphs, for the report. */
struct gs_body_row {
    uint32_t period, per_graph;
    uint64_t graphs, ops_replayed;
};

/* A body the stream has run: its ops' keys, packed at keys + off[i], klen[i]
** bytes each, and its graphs. */
struct gs_body_known {
    uint32_t p;                          /* ops; 0: a free entry */
    uint32_t k;                          /* bodies per graph */
    uint32_t off[GS_BODY_MAX_PERIOD + 1], klen[GS_BODY_MAX_PERIOD];
    unsigned char *keys;
    struct gs_exec *exec[GS_BODY_GROUPS]; /* exec[j]: 2^j bodies, or NULL (graph_cache.h) */
    uint8_t failed;                      /* one of its graphs failed: it runs eagerly */
    uint64_t last_used;
    uint64_t graphs, ops_replayed;       /* graph launches, ops in them */
};

/* Where an op (by the hash of its key) was last seen in the open segment. */
struct gs_body_seen {
    uint64_t hash;
    uint32_t at, epoch;
};

struct gs_body {
    /* What every op reads, first (one cache line): the body found that is
    ** active, if any (the next op must equal its op pos; held ops, whole bodies
    ** then pos ops, wait), and the search's counters. */
    struct gs_body_known *active;
    uint32_t pos, held;

    /* Detection over the open segment: the last GS_BODY_RING ops' keys, and the
    ** last place of each (a table indexed by hash: a candidate period costs one
    ** look-up, not a search). */
    uint32_t n;                          /* ops the detector saw in the segment */
    uint32_t period, run;                /* candidate period; ops in a row equal to the op a period back */
    uint32_t epoch;                      /* segments searched: entries of seen[] from older ones are stale */
    uint32_t quiet, rest, rest_len;      /* ops searched since a body was found; ops the search still
                                          * rests; the length of the last rest */
    uint64_t hash[GS_BODY_RING];
    uint32_t len[GS_BODY_RING], cap[GS_BODY_RING];
    unsigned char *slot[GS_BODY_RING];
    struct gs_body_seen seen[GS_BODY_SEEN];

    /* Bodies found, kept with their graphs: a loop that comes back is found
    ** again, and its graphs reused (one of them may be active, above). */
    struct gs_body_known known[GS_BODY_KNOWN];
    uint64_t clock;                      /* for last_used */

    /* The watchdog's hits on bodies (body.c wd_clean): all of them, those in a
    ** row, whether the loop running now had one, the loops bodies ran to a call
    ** of the program's; set: no body is held on the stream any more. */
    uint32_t wd_hits, wd_row, wd_loops;
    uint8_t wd_loop, wd_off;

    /* For the report: bodies forgotten that went out as graphs (the first
    ** GS_BODY_ROWS kinds of them as rows), and all their graph launches. */
    uint64_t retired_graphs;
    struct gs_body_row rows[GS_BODY_ROWS];
    uint32_t nrows;
};

/* For the report (the stream locked): fn on each body that went out as graphs,
** forgotten or kept; graph launches of all of them. */
struct gs_stream;
void gs__body_rows(const struct gs_stream *s, void (*fn)(void *, const struct gs_body_row *), void *arg);
uint64_t gs__body_graphs(const struct gs_stream *s);

/* The engine's calls (each with s locked; body.c). */
/* An op the prefix tree does not hold: 1 if the body holds it, 0 if the caller
** issues it (it is remembered for finding bodies). */
int gs__body_op(struct gs_stream *s, const void *key, uint32_t len);
/* A launch the search for bodies would pass over without its key (no body
** active, the search rests): counts it as gs__body_op() would, 1; else 0. */
int gs__body_pass(struct gs_stream *s);
/* The op just issued failed: it is no part of a body. */
void gs__body_failed(struct gs_stream *s);
/* Issues the held body ops (whole bodies as graphs) and stops holding; for the
** watchdog (watchdog set) or at a bail of the program's own call. */
void gs__body_flush(struct gs_stream *s, int watchdog);
/* At a boundary: issues what is held; the next segment is searched anew, and
** may go on with the body it had. */
void gs__body_segment_end(struct gs_stream *s);
/* The watchdog issued a body's ops held too long: the body is set aside until it
** is found again; where the hits say the host waits for bodies (two in a row,
** or many for the loops run: body.c wd_clean), the stream holds none for good. */
void gs__body_watchdog(struct gs_stream *s);
/* Issues what is held and drops the body's graphs; with learned, forgets the
** body too (its functions may be gone). */
void gs__body_forget(struct gs_stream *s, int learned);


/* The detector (body_find.c): remembers the op's key (len bytes) and follows the
** period the ops show; 1 when the last `period` ops are a body that has run
** GRAPHSHIM_WARMUP + 1 times in a row.  gs__body_detect_reset forgets what it
** saw: the next op starts a new search. */
int gs__body_detect(struct gs_body *b, const void *key, uint32_t len);
void gs__body_detect_reset(struct gs_body *b);
/* The bytes of a key of len bytes that make two ops the same: all of them, but in
** a test without the parameter rule. */
static inline uint32_t gs__body_cmp_len(uint32_t len)
{
    return GS_DROPPED(GS_RULE_PARAMS) ? (uint32_t)sizeof(struct gs_key) : len;
}

#endif
