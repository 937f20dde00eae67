/*
** learner.h: the prefix tree of op sequences a stream has run.
**
** Every segment of a stream (the ops between two boundaries) is a path from the
** root; the node where a segment ended counts one more occurrence of that
** sequence.  A sequence seen GRAPHSHIM_WARMUP times, at least GRAPHSHIM_MIN_OPS
** long, is stable: while the next ops of a stream follow a path that can still
** end in a stable sequence, the engine holds them.  Several sequences sharing a
** prefix, or alternating on one stream, are all learned.
**
** A tree belongs to one stream and is only touched under that stream's lock.
*/
#ifndef GS_LEARNER_H
#define GS_LEARNER_H

#include <stddef.h>
#include <stdint.h>

#include "key.h"

struct gs_exec;
struct gs_kids;

/* The per-node state of rules above the learner.  Each sub-struct is written by
** its one rule alone (scripts/owners names it); the learner only zeroes it with
** the node, and reads what its gain helpers need.  Field names are unique across
** the structs scripts/owners lists, as its check matches them by name. */

/* The watchdog's (rules/watchdog.c): read on every held op (GS_WATCHDOG_CUT). */
struct gs_node_watchdog {
    uint8_t watchdog_hits;   /* times in a row the watchdog issued work held up to here (GS_WATCHDOG_CUT) */
    uint32_t watchdog_mark;  /* the stream's whole_replays at the last watchdog hit here */
};

/* Early chunks' (rules/chunk.c): read where holding begins or a chunk may end. */
struct gs_node_chunk {
    uint8_t chunk_votes;     /* times held work waited too long here; 2: launch early here */
    uint8_t chunk_failed;    /* a graph ending here failed: never launch early here */
    uint8_t chunk_idle;      /* a chunk ending here left the host less work to the segment's
                             ** end than a graph launch costs: none ends here any more */
    uint8_t chunk_end;       /* an early chunk ended here: holding may resume after it (entry/hold.c) */
    uint32_t chunk_tail;     /* ops after this node to the segment's end, the last time
                             ** an early chunk ending here was the segment's last */
};

/* The gain check's (rules/gain.c; gs__trie_restrain reads gain_paid): read at a
** segment's end, and by the report. */
/* The gain check's last word on a sequence's graph, for the report. */
enum gs_gain_verdict {
    GS_VERDICT_NONE,         /* no window or trial ended yet */
    GS_VERDICT_PAYS,         /* replays were not slower than eager runs */
    GS_VERDICT_TRIAL,        /* a window found replays slow: on paired trial */
    GS_VERDICT_NO_GAIN,      /* a trial found them slow: it runs eagerly for good */
};

#define GS_GAIN_END_STEP (GS_NCLASSES + 1) /* gs_node_gain.gain_end: the next step ended it */

struct gs_node_gain {
    uint8_t gain_trial;      /* in the gain check's paired trial: its untimed eager runs, plus one (0: none) */
    uint8_t gain_skip;       /* windows still to pass before a slow one starts a trial */
    uint8_t gain_backoff : 3; /* trials that kept its graph (at most GS_GAIN_BACKOFF_MAX) */
    uint8_t gain_verdict : 3; /* the gain check's last word on its graph (enum gs_gain_verdict) */
    uint8_t gain_fresh : 1;  /* eager_ns was measured after its last timed replay */
    uint8_t gain_warm : 1;   /* its eager time was measured again after the first replays */
    uint8_t gain_end : 5;    /* what ended its last segment: the boundary's class (enum gs_class) + 1,
                             ** GS_GAIN_END_STEP the next step (rules/step.c); 0: else */
    uint8_t gain_paid : 1;   /* the gain check's last verdict: its replays were not slower than eager */
    uint8_t gain_asked : 1;  /* replayed before any eager run was timed, it was run eagerly once to be */
    uint8_t trial_slow : 1;  /* its trial began where a window found its replays slow, twice eager on average */
    uint8_t replay_slow;     /* of replay_n timed replays, those slower than eager_ns;
                             ** in a trial, of replay_n pairs (a window or a trial: at most 8) */
    uint8_t replay_slower;   /* of a window's, those longer than eager_ns at all (rule gain-strict) */
    uint8_t replay_n;
    uint8_t bound_slow : 4;  /* never timed eagerly: of bound_n replays, those slow against eager_bound_ns */
    uint8_t bound_n : 4;
    uint64_t eager_ns;       /* its time, first op to the end its segment is timed to (rules/gain.c),
                             ** when last run eagerly */
    uint64_t eager_issue_ns; /* of that, the host's: first op to the synchronize's call */
    uint64_t pair_replay_ns; /* in a trial: a timed replay that the eager runs before (eager_ns) and after
                             ** it judge (0: none) */
    /* For the report: what the check measured, never cleared. */
    uint64_t eager_last_ns;  /* the last eager time measured (eager_ns: 0 while it is to be measured again) */
    uint64_t timed_sum_ns;   /* the time of its timed replays, first op to synchronize, in all */
    uint32_t timed_replays;  /* its replays timed so (not the first, which built its graph) */
    uint32_t eager_bound_ns; /* the shortest run whose ops were held, then issued eagerly (under 4.3 s):
                             ** no eager run takes longer (rule gain-bound; 0: none) */
};

/* Its graph, kept by the graph cache (graph/graph_cache.c, graph_exec.c). */
struct gs_node_cache {
    struct gs_exec *exec;    /* graph of ops of the path ending here (graph_cache.h), or NULL */
    uint64_t last_used;      /* replay clock, for the graph cache */
};

/* How often it ran as a graph: its replays (rules/resolve.c, where a segment
** ends replayed) and those that set new parameters first (stream/issue.c). */
struct gs_node_runs {
    uint64_t replays;        /* graph launches of the sequence ending here */
    uint64_t patched;        /* launches of its graph that needed new parameters first */
};

/* What its replays' graph launches cost (the segment's owner's: gs__seg_cost_settle,
** stream/segment.h, where a segment that replayed the sequence ends; its early
** chunks and its last graph): read by the report only. */
struct gs_node_cost {
    uint64_t graph_launches; /* graph launches of the segments that replayed it */
    uint64_t nodes_set;      /* nodes set in place before them */
    uint64_t driver_ns;      /* host ns in the driver setting those nodes and launching those graphs */
    uint64_t build_ns;       /* host ns capturing and instantiating graphs in those segments */
};

/* The learner's fields come first: those read on every op (the tree's links,
** the key's sizes, the counts that say whether to hold) in the node's first
** 80 bytes, then the watchdog's and the chunks' marks read on a held op; the
** graph's and the gain check's state, read at a segment's end, and the cost of
** its replays, after them; the key, of variable length, last. */
struct gs_node {
    struct gs_node *parent, *child, *sibling;
    struct gs_node *next;    /* the child last found or added: the op expected after this one */
    uint32_t len;            /* key bytes */
    uint32_t cmp;            /* of those, the bytes a lookup compares (gs__trie_child) */
    uint32_t depth;          /* ops from the root */
    uint32_t nchildren;
    uint32_t matched;        /* the parent's match_clock when this child was last found or added */
    uint32_t match_clock;    /* counts the lookups that found a child of this node */
    struct gs_kids *kids;    /* the children by hash, once there are GS_TRIE_WIDE of them */
    uint32_t seen;           /* segments that ended here */
    uint32_t seen_mark;      /* seen when it was last set to be learned again */
    uint32_t stable_below;   /* stable sequences ending in this subtree, this node included */
    uint8_t stable;          /* this node ends a stable sequence */
    uint8_t ungraphable;     /* capturing or launching its graph failed once */
    uint8_t eager_once;      /* stable again at its next occurrence, which runs eagerly */
    uint8_t rebuilt;         /* its graph was built (instantiated or updated) for its last launch
                             ** (stream/issue.c, where it goes out) */
    struct gs_node_watchdog watchdog;
    struct gs_node_chunk chunk;
    struct gs_node_cache cache;
    void *staging;           /* pinned copy of a pageable source, for H2D_PAGEABLE (staging.h) */
    struct gs_node_runs runs;
    struct gs_node_gain gain;
    struct gs_node_cost cost;
    union {
        struct gs_key key;   /* len bytes, the key's variable part follows */
        max_align_t align_;
    };
};

/* The fields a held op reads (the learner's, the watchdog's and the chunks'
** marks) lie in the node's first 96 bytes; a node's fixed part is 224 bytes,
** which a change of it must mean (every node of a tree, GS_TRIE_MAX_BYTES in
** all, pays it). */
_Static_assert(offsetof(struct gs_node, chunk) + sizeof(struct gs_node_chunk) <= 96,
               "struct gs_node: fields read per held op past 96 bytes");
_Static_assert(offsetof(struct gs_node, key) == 224, "struct gs_node: its fixed part changed size");

struct gs_trie {
    struct gs_node root;     /* depth 0, no key */
    size_t bytes;            /* memory of all nodes */
    uint64_t evicted;        /* subtrees dropped to make room */
    /* Called on every node before it is freed (its graph and staging go too). */
    void (*drop)(struct gs_node *, void *);
    void *drop_arg;
};

/* Most memory one stream's tree may take, and most children of one node.  A node
** that is full drops its least recently matched child that leads to no stable
** sequence, so work that never repeats costs bounded memory and search. */
#define GS_TRIE_MAX_BYTES (32u << 20)
#define GS_TRIE_MAX_CHILDREN 32

/* A node with this many children or more finds them through a table of their
** keys' hashes (struct gs_kids), not by following the list: in a real program the
** driver's launch evicts the tree from the caches between two ops, and a walk down
** a list of 32 children is 32 cache misses in a row (bench/shim_cost's cold rows). */
#define GS_TRIE_WIDE 4

struct gs_kids {
    uint32_t hash[GS_TRIE_MAX_CHILDREN]; /* gs__key_shape_hash of each child */
    struct gs_node *node[GS_TRIE_MAX_CHILDREN];
};

struct gs_node *gs__trie_child_wide(struct gs_node *n, const void *key, uint32_t len, uint32_t cmp);

/* The child of n whose key equals key/len in its first cmp bytes (all but an
** op's arguments, and then a launch's grid too, but with a host copy's host
** side: the engine patches the arguments; gs__key_shape_eq), or NULL.  A node with few
** children is searched by plain compares, newest child first; a wide one by hash. */
static inline struct gs_node *gs__trie_child(struct gs_node *n, const void *key, uint32_t len, uint32_t cmp)
{
    if (n->kids)
        return gs__trie_child_wide(n, key, len, cmp);
    for (struct gs_node *c = n->child; c; c = c->sibling)
        if (c->len == len && c->cmp == cmp && gs__key_shape_eq(&c->key, key, len, cmp)) {
            c->matched = ++n->match_clock;
            n->next = c;
            return c;
        }
    return NULL;
}

/* Adds a child of n for key (cmp: as for gs__trie_child), dropping an old child
** if n is full.  Returns it, or NULL when the tree is full. */
struct gs_node *gs__trie_add(struct gs_trie *t, struct gs_node *n, const void *key, uint32_t len, uint32_t cmp);

/* A segment ended at n with every op issued successfully: counts it, and makes
** it stable when it qualifies.  Returns 1 if it just became stable. */
int gs__trie_ended(struct gs_node *n, long warmup, long min_ops);

/* Does the report list the sequence ending at n?  Stable, replayed or failed. */
static inline int gs__trie_reported(const struct gs_node *n)
{
    return n->stable || n->runs.replays || n->ungraphable;
}

/* Stops treating the sequence ending at n as stable (its graph failed). */
void gs__trie_unstable(struct gs_node *n);
/* Stops treating it as stable until it has been seen `warmup` more times (seen
** still counts every occurrence, for the report). */
void gs__trie_relearn(struct gs_node *n);

/* n runs eagerly once, and is stable again at the end of that occurrence,
** whatever the warmup then (its graph is kept): the gain check's paired trial. */
void gs__trie_eager_once(struct gs_node *n);

/* Stops treating as stable, until they are seen `warmup` times, the sequences
** below root that are stable but have no graph yet; those whose graph was built
** for its last launch and not found paying by the gain check, until they are
** seen `warmup` more times. */
void gs__trie_restrain(struct gs_node *root, long warmup);

/* The nodes of the path from the root to n at depths from+1 .. n->depth, into
** path[from .. n->depth-1]: only the ops still held are walked (a node's parent
** is a cache miss in a program whose own work ran since). */
void gs__trie_path(struct gs_node *n, uint32_t from, struct gs_node **path);

/* Calls fn on every node of the subtree at root, root included. */
void gs__trie_walk(struct gs_node *root, void (*fn)(struct gs_node *, void *), void *arg);

/* Frees every node below the root (t->drop is called on each first). */
void gs__trie_clear(struct gs_trie *t);

#endif
