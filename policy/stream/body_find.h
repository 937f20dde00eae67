/*
** body_find.h: a stream's loop bodies, as its state holds them (struct
** gs_body, in struct gs_stream), and the detector that finds them in the ops
** of a segment (body_find.c).  What the engine does with them: body.h.
*/
#ifndef GS_BODY_FIND_H
#define GS_BODY_FIND_H

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
    uint64_t clock;                      /* for last_used; bodies found (made active) so far */

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
