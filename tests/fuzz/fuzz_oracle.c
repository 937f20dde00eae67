/*
** fuzz_oracle.c: a report's accounts against what the fake driver ran
** (fuzz_oracle.h).  The report is graphshim's JSON, read by its keys: a
** stream's own counters come before its "sequences", a sequence's object
** begins with "ops", a loop body's with "period" (docs/report.md).
*/
#define _GNU_SOURCE
#include "fuzz_oracle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long long stat_of(const char *stats, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = stats; p && *p;) {
        if (strncmp(p, name, n) == 0 && p[n] == ' ')
            return strtoll(p + n + 1, NULL, 10);
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return -1;
}

/* The integer after "key": between p and end (end NULL: the text's end); 0
** where there is none. */
static long long jnum(const char *p, const char *end, const char *key)
{
    char pat[64];
    const char *q;
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    q = p ? strstr(p, pat) : NULL;
    return q && (!end || q < end) ? strtoll(q + strlen(pat), NULL, 10) : 0;
}

/* The next occurrence of s after p, before end (NULL: none). */
static const char *find(const char *p, const char *end, const char *s)
{
    const char *q = p ? strstr(p, s) : NULL;
    return q && (!end || q < end) ? q : NULL;
}

static int fail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return 1;
}

/* The counters summed over the streams, in the order of keys[]. */
static const char *const keys[] = {"ops", "ops_held", "ops_replayed", "replays", "chunks", "body_graphs",
                                   "launches_saved", "patched_launches", "nodes_patched"};
#define NKEYS (int)(sizeof keys / sizeof keys[0])

/* One stream's object, from s to end: its sequences and bodies against its
** own counters; adds its counters to sum. */
static int stream_check(const char *s, const char *end, long long *sum, char *why, size_t len)
{
    long long id = jnum(s, end, "id"), v[NKEYS], launches = 0, bgraphs = 0, bops = 0;
    const char *seqs = find(s, end, "\"sequences\": ["), *bodies = find(s, end, "\"bodies\": [");

    for (int k = 0; k < NKEYS; k++)
        sum[k] += v[k] = jnum(s, seqs ? seqs : end, keys[k]);
    for (const char *q = find(seqs, bodies, "{\"ops\": "); q; q = find(q + 1, bodies, "{\"ops\": "))
        launches += jnum(q, bodies, "graph_launches");
    for (const char *q = find(bodies, end, "{\"period\": "); q; q = find(q + 1, end, "{\"period\": ")) {
        bgraphs += jnum(q, end, "graphs");
        bops += jnum(q, end, "ops_replayed");
    }
    if (!(v[2] <= v[1] && v[1] <= v[0]))
        return fail(why, len, "stream %lld: ops_replayed %lld, ops_held %lld, ops %lld: not replayed <= held <= ops", id,
                    v[2], v[1], v[0]);
    if (launches > v[3] + v[4])
        return fail(why, len, "stream %lld: its sequences' graph_launches %lld exceed its replays %lld and chunks %lld", id,
                    launches, v[3], v[4]);
    if (bgraphs != v[5] || bops > v[2])
        return fail(why, len, "stream %lld: its bodies' graphs %lld and ops %lld, its body_graphs %lld and ops_replayed %lld",
                    id, bgraphs, bops, v[5], v[2]);
    return 0;
}

int oracle_accounts(const char *report, const char *base, const char *shim, char *why, size_t len)
{
    const char *tot = report ? strstr(report, "\"totals\"") : NULL;
    const char *streams = tot ? strstr(tot, "\"streams\": [") : NULL;
    long long t[NKEYS], sum[NKEYS] = {0};

    if (!tot || !streams || stat_of(base, "eager_ops") < 0 || stat_of(shim, "eager_ops") < 0)
        return fail(why, len, "no report or no driver counts (FAKECUDA_STATS)");
    for (int k = 0; k < NKEYS; k++)
        t[k] = jnum(tot, streams, keys[k]);
    long long ran = stat_of(shim, "graph_ops") - stat_of(base, "graph_ops");
    long long glaunch = stat_of(shim, "graph_launches") - stat_of(base, "graph_launches");
    long long made = stat_of(shim, "execs_made") - stat_of(base, "execs_made");
    long long eager = stat_of(shim, "eager_ops"), plain = stat_of(base, "eager_ops");

    if (eager + ran != plain)
        return fail(why, len, "the driver ran %lld ops eagerly and %lld in graphshim's graphs, %lld without graphshim",
                    eager, ran, plain);
    if (t[2] != ran)
        return fail(why, len, "ops_replayed %lld, but the driver ran %lld ops in graphshim's graph launches", t[2], ran);
    if (t[2] - t[6] != glaunch)
        return fail(why, len, "ops_replayed %lld less launches_saved %lld is not the driver's %lld graph launches", t[2],
                    t[6], glaunch);
    if (glaunch > t[3] + t[4] + t[5])
        return fail(why, len, "%lld graph launches, more than replays %lld, chunks %lld and body_graphs %lld", glaunch,
                    t[3], t[4], t[5]);
    if (jnum(tot, streams, "graphs_captured") != made)
        return fail(why, len, "graphs_captured %lld, but the driver made %lld executables for graphshim",
                    jnum(tot, streams, "graphs_captured"), made);
    /* a held op that the driver refused when graphshim issued it had been
    ** answered with success at its call: the program was told a lie */
    if (jnum(tot, streams, "issue_errors") > 0)
        return fail(why, len, "%lld held ops failed when graphshim issued them, each answered with success at its call",
                    jnum(tot, streams, "issue_errors"));
    /* a held kernel's name (a collective's test, a bail site's) is asked as the
    ** kind of handle its layout was had by: the driver refuses none */
    long long names = stat_of(shim, "refused_names") - stat_of(base, "refused_names");
    if (names > 0)
        return fail(why, len, "the driver refused %lld of graphshim's kernel name queries as a handle of the other "
                              "kind: a held kernel's name is asked as the kind its layout was had by", names);
    const char *end = strstr(streams, "\n  ]");
    for (const char *s = find(streams, end, "{\"id\": "); s;) {
        const char *next = find(s + 1, end, "{\"id\": ");
        if (stream_check(s, next ? next : end, sum, why, len))
            return 1;
        s = next;
    }
    for (int k = 0; k < NKEYS; k++)
        if (sum[k] != t[k])
            return fail(why, len, "the streams' %s add up to %lld, the totals say %lld", keys[k], sum[k], t[k]);
    return 0;
}

/* The loop programs' settings (fuzz_oracle.h), with each one's claim. */
const struct loop_setting loop_settings[] = {
    {"loop-lose", LOOP_LOSE,
     {"FAKECUDA_GRAPH_LAUNCH_US=20000", "FAKECUDA_LAUNCH_US=1", "GRAPHSHIM_CHUNK_OPS=0", "FUZZ_PERIOD_SHORT=1", NULL}},
    {"loop-busy", LOOP_BUSY,
     {"FAKECUDA_KERNEL_US=200", "FAKECUDA_LAUNCH_US=1", "FUZZ_LOOP_HOST_NS=10000", "GRAPHSHIM_CHUNK_OPS=0",
      "GRAPHSHIM_MAX_DEFER_US=100000000", NULL}},
    {"loop-win", LOOP_WIN, {"FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"loop-even", LOOP_EVEN, {"FAKECUDA_LAUNCH_US=100", "GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_MIN_OPS=8", NULL}},
    {"loop-pause", LOOP_PAUSE, {"FUZZ_LOOP_MODE=pause", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"loop-stall", LOOP_STALL,
     {"FUZZ_LOOP_MODE=stall", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", "GRAPHSHIM_MAX_DEFER_US=50", NULL}},
    {"loop-rest", LOOP_REST,
     {"FUZZ_LOOP_MODE=new", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", "GRAPHSHIM_REST_AFTER=2", NULL}},
    /* The chunks' votes in steady state: without the trial of rule gain-pairs,
    ** whose eager runs after an event-ended step's first window reset them. */
    {"loop-chunks", LOOP_CHUNKS,
     {"FUZZ_LOOP_MODE=chunks", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", "GRAPHSHIM_CHUNK_OPS=2",
      "GRAPHSHIM_CHUNK_MAX=4", "GRAPHSHIM_TEST_DROP_RULE=gain-pairs", NULL}},
    {"loop-slow", LOOP_SLOW,
     {"FUZZ_LOOP_MODE=slow", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", "GRAPHSHIM_CHUNK_OPS=2",
      "GRAPHSHIM_CHUNK_MAX=4", NULL}},
    {"loop-legacy", LOOP_LEGACY, {"FUZZ_LOOP_MODE=legacy", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"loop-unlisted", LOOP_UNLISTED,
     {"FUZZ_LOOP_MODE=unlisted", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"loop-collective", LOOP_COLLECTIVE,
     {"FUZZ_LOOP_MODE=collective", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"loop-nameless", LOOP_NAMELESS, /* every kernel's name refused: no claim but the output */
     {"FUZZ_LOOP_MODE=collective", "FAKECUDA_FAIL=cuFuncGetName:1+:801,cuKernelGetName:1+:801", NULL}},
    /* a launch over its lowered shared memory limit: no claim but the output
    ** (the launch fails at its call, as without graphshim) */
    {"loop-limit", LOOP_LIMIT, {"FUZZ_LOOP_MODE=limit", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    /* A host that slows down 6 % an iteration, a graph a tenth faster than the
    ** launches it replaces (loop_graph_launch_us): windows judged against an
    ** older eager time find it slow, the trials' pairs keep it. */
    {"loop-drift", LOOP_DRIFT,
     {"FUZZ_LOOP_MODE=drift", "FAKECUDA_LAUNCH_US=10", "GRAPHSHIM_CHUNK_OPS=0", "GRAPHSHIM_MAX_DEFER_US=100000000", NULL}},
    {"loop-destroy", LOOP_DESTROY, {"FUZZ_LOOP_MODE=destroy", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"loop-oom", LOOP_OOM,
     {"FUZZ_LOOP_MODE=oom", "FAKECUDA_MEM_MB=3", "FAKECUDA_EXEC_KB=512", "FAKECUDA_PENDING=2", "FAKECUDA_LAUNCH_US=50",
      "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"loop-drain", LOOP_DRAIN,
     {"FUZZ_LOOP_MODE=drain", "FAKECUDA_KERNEL_US=1", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1",
      "GRAPHSHIM_CHUNK_OPS=2", "GRAPHSHIM_CHUNK_MAX=8", NULL}},
    {"steps-win", LOOP_STEPS, {"FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", "GRAPHSHIM_CHUNK_OPS=0", NULL}},
    /* Steps back to back of 1 to 600 ops, ended by nothing, a record, a host
    ** function, a JAX step's end, a query or an event's synchronize
    ** (fuzz_period.c): the output and the accounts judge, no claim of time. */
    {"periods", LOOP_PERIODS, {"FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", NULL}},
    {"periods-busy", LOOP_PERIODS, {"FAKECUDA_KERNEL_US=20", "FAKECUDA_LAUNCH_US=3", "FAKECUDA_GRAPH_LAUNCH_US=2", NULL}},
    /* The same steps where every graph loses (a graph launch 20 ms, a launch
    ** 1 us): whatever ends a step, its graph is dropped (periods_lose). */
    {"periods-lose", LOOP_PERIODS_LOSE,
     {"FAKECUDA_GRAPH_LAUNCH_US=20000", "FAKECUDA_LAUNCH_US=1", "GRAPHSHIM_CHUNK_OPS=0", "FUZZ_PERIOD_SHORT=1", NULL}},
    /* fuzz_xs.c: groups across streams, in the fake's order of the driver's rules */
    {"xs", LOOP_XS, {"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", NULL}},
    {"xs-seeded", LOOP_XS, {"GRAPHSHIM_XSTREAM=1", "FAKECUDA_ORDER=deps", "FAKECUDA_ORDER_SEED=7", "FAKECUDA_PENDING=2", NULL}},
    {"steps-poll", LOOP_STEPS_POLL,
     {"FUZZ_STEPS_POLL=1", "FAKECUDA_LAUNCH_US=50", "FAKECUDA_GRAPH_LAUNCH_US=1", "GRAPHSHIM_CHUNK_OPS=0",
      "GRAPHSHIM_MAX_DEFER_US=50", NULL}},
};
const int nloop_settings = (int)(sizeof loop_settings / sizeof loop_settings[0]);

/* The number after "word " in the loop program's first line. */
static long loop_shape(const char *out, const char *word)
{
    char pat[32];
    snprintf(pat, sizeof pat, " %s ", word);
    const char *p = out ? strstr(out, pat) : NULL;
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

long loop_graph_launch_us(int kind, const char *out)
{
    long n = loop_shape(out, "ops");
    if (n <= 0)
        return 0;
    if (kind == LOOP_DRIFT) /* 9 us a kernel launch of 10 us replaced (a memset or a copy costs a call) */
        return 9 * n;
    return kind == LOOP_EVEN ? (n * 100 * 108 + 99) / 100 : 0;
}

/* How many replays the gain check allows the loop's graph in loop-even, where
** each is slower, but by less than 10 %.  A sequence shorter than
** GRAPHSHIM_MIN_OPS (8 there) that a synchronize ends is graphed on trial,
** judged strictly (slow where it took longer at all) from its first replay:
** LOOP_MAX_REPLAYS.  One whose replays save no driver call (rule gain-calls:
** its graph launches and node sets are 90 % of its ops or more; a launch's node
** is set where its arguments change, the memset's always) is judged strictly
** once its node sets add up so, from about its tenth replay (its first, which
** captured it, set none): its first window of 8 may pass, and then it is timed
** eagerly again, a window of 8 finds it slow and a trial of 8 drops it: 1 + 8 +
** 8 + 8 = LOOP_MAX_REPLAYS_LATE.  Any other is judged within 10 %, which its
** windows pass, but each replay took longer than its eager time: a window
** longer in 3 of 4 starts a trial, which drops it (rule gain-strict), within
** as many. */
static long loop_even_replays(const char *out, long depth)
{
    int sync_ended = strstr(out, " boundary sync ") || strstr(out, " boundary ctx-sync ");
    return depth < 8 && sync_ended ? LOOP_MAX_REPLAYS : LOOP_MAX_REPLAYS_LATE;
}

/* The checks of every loop setting: a long sequence that a synchronize ends is
** captured only after an eager run of it was timed (its fourth occurrence or
** later: the third's end is counted before its synchronize returns); at most
** one of graphshim's parameter queries refused for a handle of the other kind;
** and where
** no segment bailed, its sequences' graph launches are the driver's, less the
** loop bodies'. */
static int loop_common(const char *out, const char *report, const char *base, const char *shim, long depth,
                       char *why, size_t len)
{
    long long before = stat_of(shim, "eager_before_exec");
    long long glaunch = stat_of(shim, "graph_launches") - stat_of(base, "graph_launches");
    const char *tot = report ? strstr(report, "\"totals\"") : NULL;
    const char *bails = tot ? strstr(tot, "\"bails\": {") : NULL;
    long long seq = 0;

    /* (where the synchronize ends the sequence: not where the loop's ops go to
    ** the legacy stream or an unlisted entry point ends them) */
    int sync_ended = (strstr(out, " boundary sync ") || strstr(out, " boundary ctx-sync ")) &&
                     !strstr(out, " mode legacy ") && !strstr(out, " mode unlisted ") &&
                     !strstr(out, " mode collective ");
    if (sync_ended && depth >= 50 && before >= 0 && before < 3 * depth)
        return fail(why, len, "its %ld-op sequence was captured after %lld eager ops: before an eager run of it was timed",
                    depth, before);
    /* its kernels are all of one kind (CUfunctions of a module, or CUkernels of
    ** a library): graphshim asks a kernel's layout as the kind that served last
    ** first, so at most its first kernel's query is refused */
    long long refused = stat_of(shim, "refused_param_info") - stat_of(base, "refused_param_info");
    if (refused > 1)
        return fail(why, len, "graphshim's parameter queries were refused %lld times for a handle of the other kind: its "
                              "kernels are all %s, and only the first kernel's may be asked as the wrong kind", refused,
                    strstr(out, " kernels library") ? "CUkernels" : "CUfunctions");
    if (!bails)
        return 0;
    bails += strlen("\"bails\": {");
    if (*bails != '}' && strncmp(bails, "\"no-gain\": ", 11) != 0)
        return 0;
    for (const char *q = strstr(report, "\"graph_launches\": "); q; q = strstr(q + 1, "\"graph_launches\": "))
        seq += strtoll(q + strlen("\"graph_launches\": "), NULL, 10);
    if (seq != glaunch - jnum(tot, NULL, "body_graphs"))
        return fail(why, len, "no segment bailed, but its sequences' graph_launches add up to %lld, the driver's graph "
                              "launches less body_graphs to %lld", seq, glaunch - jnum(tot, NULL, "body_graphs"));
    return 0;
}

/* loop-busy's capture-pays claim: a sequence of 50 ops or more that a
** synchronize ends is captured only after an eager run was timed (above), and
** on a busy GPU (kernels of 200 us, issued in 11.1 us an op: busy 8 times as
** long as the host issues, gs__gain_gpu_bound) only once 1/400 of its eager
** time, over its occurrences, covers its capture's cost (rule capture-pays),
** its first capture priced at GS_CAPTURE_NS_PER_OP (2 us) an op before the
** stream measured its own (policy/rules/capture.c).  An eager run took at most
** its kernels' GPU time and its ops' host work and calls (12 us an op) and
** 50 us more, so the driver ran at least need occurrences eagerly. */
static int loop_busy_capture(const char *out, const char *shim, long n, long ops, char *why, size_t len)
{
    long long before = stat_of(shim, "eager_before_exec");
    long long eager_max = (long long)n * 200000 + (long long)ops * 12000 + 50000;
    long long need = (2000LL * ops * 400 + eager_max - 1) / eager_max;

    if (!(strstr(out, " boundary sync ") || strstr(out, " boundary ctx-sync ")) || ops < 50 || before < 0)
        return 0;
    if (before < need * ops)
        return fail(why, len, "its %ld-op sequence keeps the GPU busy, and was captured after %lld eager ops: its capture "
                              "(%ld us) is paid for by 1/400 of %lld eager runs of at most %lld ns each, not fewer",
                    ops, before, ops * 2, need, eager_max);
    return 0;
}

/* The claims of the settings for one rule each (fuzz_oracle.h; FUZZ_LOOP_MODE in
** fuzz_loop.c), from the report's replays (graph launches at the loop's
** boundary), chunks and bails; ops: the ops of an iteration. */
static int loop_rules(const struct loop_setting *ls, const char *out, const char *report, long ops, long iters,
                      char *why, size_t len)
{
    /* loop-collective: the sequences before and after the collective (after its
    ** middle launch), the second where 2 ops or more (GRAPHSHIM_MIN_OPS) follow it */
    long n = loop_shape(out, "ops"), segs = 1 + (n - 1 - n / 2 + (strstr(out, " copy ") != NULL) >= 2);
    const char *tot = report ? strstr(report, "\"totals\"") : NULL;
    const char *bails = tot ? strstr(tot, "\"bails\": {") : NULL;
    long long replays = jnum(tot, NULL, "replays"), chunks = jnum(tot, NULL, "chunks");
    long long watchdog = bails ? jnum(bails, strchr(bails, '}'), "watchdog") : 0;
    long long per = 1 + (ops - 1) / 4; /* loop-slow: a chunk at depth 2, and one every 4 ops */

    if (!tot)
        return fail(why, len, "no report");
    switch (ls->kind) {
    case LOOP_PAUSE:
        if (replays < iters - 4)
            return fail(why, len, "%lld replays in %ld iterations: a step that an event record or a host function ends "
                                  "and a pause follows is never timed (the pause's time is not the step's), so its "
                                  "graph stays: every iteration but its first 4 replayed", replays, iters);
        return 0;
    case LOOP_STALL:
        if (watchdog > 2 * 2)
            return fail(why, len, "%lld watchdog bails: the host stalls at two places of the loop, each a cut after 2 "
                                  "hits with no whole replay between (4 at most)", watchdog);
        return 0;
    case LOOP_REST:
        if (replays < iters - 16)
            return fail(why, len, "%lld replays in %ld iterations: the loop's sequence comes back after every new "
                                  "segment, so new ones never come 2 in a row (GRAPHSHIM_REST_AFTER) and learning "
                                  "never rests: every iteration but its first 16 replayed", replays, iters);
        return 0;
    case LOOP_CHUNKS:
        if (chunks < 3 * replays - 3 || chunks > 3 * replays + 2)
            return fail(why, len, "%lld chunks in %lld replays: chunks by count end at depths 2, 4 and 8 of each (the "
                                  "16th op is an idle place once a fast iteration found it so, and chunks there only, "
                                  "not in the next segment), and none by the slow host's length, whose votes a fast "
                                  "iteration resets: 3 a replay (and 2 more at most)", chunks, replays);
        return 0;
    case LOOP_COLLECTIVE:
        if (replays < segs * (iters - 4 - LOOP_TRIAL))
            return fail(why, len, "%lld replays in %ld iterations: the collective (never held) ends the segment before "
                                  "it, and the work on each side of it is replayed, %ld graphs an iteration but in its "
                                  "first 4 and a trial's eager runs", replays, iters, segs);
        return 0;
    case LOOP_DRIFT:
        if (bails && find(bails, strchr(bails, '}'), "\"no-gain\""))
            return fail(why, len, "a no-gain bail: the host slows down 6 %% an iteration and each replay is faster "
                                  "than the launches it replaces, so a trial's replay is faster than the mean of the "
                                  "eager runs around it, and the trial keeps the graph (rule gain-pairs)");
        return 0;
    case LOOP_LEGACY:
    case LOOP_UNLISTED:
    case LOOP_NAMELESS:
    case LOOP_OOM:
    case LOOP_LIMIT:
        return 0;
    case LOOP_DRAIN:
        if (chunks > 4 * replays + 10)
            return fail(why, len, "%lld chunks in %lld replays: the GPU is still busy at every other synchronize only, "
                                  "so the votes for shorter chunks (rule drain: two in a row) never add up and the "
                                  "chunks keep their length: 4 a replay (and 10 more at most)", chunks, replays);
        return 0;
    case LOOP_DESTROY:
        if (bails && find(bails, strchr(bails, '}'), "\"boundary-stream\""))
            return fail(why, len, "a bail at the stream's destroy: the destroy ends the segment, and the loop's sequence "
                                  "held there is replayed as its graph");
        return 0; /* the output: a blocking stream's copy, an unlisted entry point's write came after the held ops; nothing captured that may be a collective; an allocation
                     ** that fits once graphshim gave back its executables' memory */
    default: /* LOOP_SLOW */
        if (chunks < (replays - 3) * per)
            return fail(why, len, "%lld chunks in %lld replays of %ld ops: a slow host (2 us an op) whose GPU keeps up "
                                  "gets a chunk every GRAPHSHIM_CHUNK_MAX (4) ops and one at depth 2, %lld a replay, "
                                  "once its places have 2 votes (3 replays)", chunks, replays, ops, per);
        return 0;
    }
}

int oracle_loop_time(const struct loop_setting *ls, const char *out, const char *report, const char *base,
                     const char *shim, char *why, size_t len)
{
    long long plain = stat_of(base, "clock_ns"), t = stat_of(shim, "clock_ns");
    long long graphs = stat_of(shim, "execs_made") - stat_of(base, "execs_made");
    long long glaunch = stat_of(shim, "graph_launches") - stat_of(base, "graph_launches");
    long long own = report ? jnum(strstr(report, "\"totals\""), NULL, "own_calls") : 0;
    long n = loop_shape(out, "ops"), iters = loop_shape(out, "iterations");
    /* the ops of one iteration: its launches, and a memset and a copy where it has them */
    long ops = n + (strstr(out, " memset ") != NULL) + (strstr(out, " copy ") != NULL);

    if (plain < 0 || t < 0 || n < 0 || iters < 0)
        return fail(why, len, "no clock or no loop shape");
    /* the virtual clock starts at 1 s and a loop spends less than 100 s of it:
    ** a clock beyond is the host's, which no claim is about */
    if (plain > 100000000000ll || t > 100000000000ll)
        return fail(why, len, "a clock is not the fake's virtual clock (%lld and %lld ns)", plain, t);
    if (loop_common(out, report, base, shim, ops, why, len))
        return 1;
    if (ls->kind == LOOP_BUSY && loop_busy_capture(out, shim, n, ops, why, len))
        return 1;
    if (ls->kind >= LOOP_PAUSE)
        return loop_rules(ls, out, report, ops, iters, why, len);
    if (ls->kind == LOOP_LOSE && graphs > 0 && glaunch < LOOP_MAX_REPLAYS)
        return fail(why, len, "%lld graph launches of its %lld graphs: each is dropped only after its build, a first "
                              "window of 4 timed replays and a trial of 8 (%d)", glaunch, graphs, LOOP_MAX_REPLAYS);
    if (ls->kind == LOOP_LOSE) {
        /* every graph launch costs 20 ms, the ops it replaces 1.1 us each */
        long long bound = (long long)LOOP_MAX_REPLAYS * graphs * 20000000 + 10000000;
        if (t - plain > bound)
            return fail(why, len, "%lld ns with graphshim, %lld without: more than %d replays of each of its %lld graphs "
                                  "(20 ms each) allow (%lld ns)", t, plain, LOOP_MAX_REPLAYS, graphs, bound);
    } else if (ls->kind == LOOP_BUSY) {
        /* a replay starts the GPU late by the host work of its ops (10 us and a launch each) */
        long long bound = (long long)LOOP_MAX_REPLAYS * graphs * ops * 11100 + own * 100 + 100000;
        if (t - plain > bound)
            return fail(why, len, "%lld ns with graphshim, %lld without, on a busy GPU: more than %d replays of each of "
                                  "its %lld graphs, each late by its %ld ops' host work, allow (%lld ns)",
                        t, plain, LOOP_MAX_REPLAYS, graphs, ops, bound);
    } else if (ls->kind == LOOP_EVEN) {
        /* a graph launch costs 8 % more than the launches it replaces */
        long allowed = loop_even_replays(out, ops);
        long long bound = (long long)allowed * graphs * n * 10000 + own * 100 + 20000;
        if (t - plain > bound)
            return fail(why, len, "%lld ns with graphshim, %lld without: a graph 8 %% slower than the %ld launches it "
                                  "replaces, judged strictly, is dropped after %ld replays of each of its %lld graphs "
                                  "(%lld ns)", t, plain, n, allowed, graphs, bound);
    } else {
        /* half the iterations or more replayed, each saving 50 us a launch less 25 */
        long long gain = (long long)(iters / 2) * n * 25000;
        if (t > plain - gain)
            return fail(why, len, "%lld ns with graphshim, %lld without: %ld iterations of %ld launches at 50 us each "
                                  "replayed as graphs at 1 us should save %lld ns or more", t, plain, iters, n, gain);
    }
    return 0;
}

const char *loop_program(int kind)
{
    return kind == LOOP_XS                                    ? "xs"
           : kind == LOOP_PERIODS || kind == LOOP_PERIODS_LOSE ? "periods"
           : kind >= LOOP_STEPS                                ? "steps"
                                                               : "loop";
}

/* periods-lose: every graph launch costs 20 ms, the ops it replaces 1.1 us
** each.  Whatever ends a step (the next step, a record, a host function, a
** query, an event's synchronize), its replays are timed and judged: each graph
** is dropped within LOOP_MAX_REPLAYS_LATE replays (a first window, the eager
** time again or a trial's pairs, a trial), and the program is slower by no more
** than those replays' cost. */
static int periods_lose(const char *out, const char *base, const char *shim, char *why, size_t len)
{
    long long plain = stat_of(base, "clock_ns"), t = stat_of(shim, "clock_ns");
    long long graphs = stat_of(shim, "execs_made") - stat_of(base, "execs_made");
    long long bound = (long long)LOOP_MAX_REPLAYS_LATE * graphs * 20000000 + 10000000;
    const char *end = strstr(out, " end ");

    if (plain < 0 || t < 0 || !end)
        return fail(why, len, "no clock or no step shape");
    if (t - plain > bound)
        return fail(why, len, "%lld ns with graphshim, %lld without, steps ended by %.*s: more than %d replays of each "
                              "of its %lld graphs (20 ms each) allow (%lld ns)", t, plain,
                    (int)strcspn(end + 5, " "), end + 5, LOOP_MAX_REPLAYS_LATE, graphs, bound);
    return 0;
}

int oracle_steps(const struct loop_setting *ls, const char *out, const char *err, const char *report,
                 const char *base, const char *shim, char *why, size_t len)
{
    /* No fault injected, memory to spare: the driver refuses no capture of
    ** graphshim's (a group's capture forks its members and joins them all) */
    long long failed = jnum(report ? strstr(report, "\"totals\"") : NULL, NULL, "graph_failures");
    if (ls->kind == LOOP_XS && failed)
        return fail(why, len, "%lld of graphshim's captures failed with no fault injected: a capture of a group's "
                              "streams is joined and holds only what the driver takes", failed);
    if (ls->kind == LOOP_PERIODS_LOSE)
        return periods_lose(out, base, shim, why, len);
    if (ls->kind == LOOP_PERIODS || ls->kind == LOOP_XS)
        return 0; /* the output and the accounts alone */
    long p = loop_shape(out, "step"), unit = loop_shape(out, "unit"), r = loop_shape(out, "repeats");
    long iters = loop_shape(out, "iterations");
    const char *at = err ? strstr(err, "graph launches when the loop ended ") : NULL;
    long long in_loop = at ? strtoll(at + strlen("graph launches when the loop ended "), NULL, 10) : -1;
    long long after = stat_of(shim, "graph_launches") - stat_of(base, "graph_launches") - in_loop;

    if (p < 0 || unit <= 0 || r < 0 || iters < 0 || in_loop < 0)
        return fail(why, len, "no step shape or no graph launches at the loop's end");
    if (ls->kind == LOOP_STEPS_POLL) {
        const char *tot = report ? strstr(report, "\"totals\"") : NULL;
        const char *bails = tot ? strstr(tot, "\"bails\": {") : NULL;
        long long watchdog = bails ? jnum(bails, strchr(bails, '}'), "watchdog") : 0;
        if (!tot || watchdog > 8)
            return fail(why, len, "%lld watchdog bails: a stream whose loop bodies stopped for the watchdog (the host "
                                  "polls its loop) holds no steps, and a place where the host polls is a cut after 2 "
                                  "hits (8 at most)", watchdog);
        return 0;
    }
    if (strstr(out, " kind step ") && in_loop < (iters - 4) * (r * p / unit))
        return fail(why, len, "%lld graph launches in %ld iterations of %ld steps of %ld ops: the units (%ld ops) of "
                              "every iteration but the first 4 replay as graphs, %ld or more", in_loop, iters, r, p,
                    unit, (iters - 4) * (r * p / unit));
    /* from the loop's half on, a graph for the head (what comes before the
    ** iteration's whole units, a part of a step included) and one a unit */
    long whole = r * p / unit, head = loop_shape(out, "head") + loop_shape(out, "part") + r * p % unit > 0;
    const char *mid = err ? strstr(err, "graph launches at the loop's half ") : NULL;
    long long at_half = mid ? strtoll(mid + strlen("graph launches at the loop's half "), NULL, 10) : -1;
    if (strstr(out, " kind step ") && at_half >= 0 && in_loop - at_half > (whole + head) * (iters - iters / 2))
        return fail(why, len, "%lld graph launches in the last %ld iterations of %ld steps of %ld ops after a head: "
                              "the head ends where the iteration's whole units (%ld ops) begin, so each iteration "
                              "replays %ld units and %ld head, %ld graphs", in_loop - at_half, iters - iters / 2, r, p,
                    unit, whole, head, (whole + head) * (iters - iters / 2));
    if (strstr(out, " kind layers ") && in_loop > iters)
        return fail(why, len, "%lld graph launches in %ld iterations of %ld layers of one shape on their own weights: no "
                              "step, at most a graph an iteration", in_loop, iters, r);
    if (after > 30)
        return fail(why, len, "%lld graph launches in the 30 iterations after the steps' loop: the steps end there, "
                              "at most a graph an iteration", after);
    return 0;
}
