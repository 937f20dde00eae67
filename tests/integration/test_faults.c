/*
** test_faults.c: graphshim when its own driver calls fail.
**
** The fake driver fails chosen calls (FAKECUDA_FAIL, tests/fakecuda/README.md).
** Here they are the calls graphshim makes for itself: its private capture
** stream, capture, node queries during capture, instantiation, setting a node's
** parameters, graph launch, and the pinned staging buffer and event of pageable
** copies.  Every guardprog scenario and every drvprog mode runs without
** graphshim, then under it once per fault of the table below.  The output and
** exit status must be those of the run without graphshim: held work went out
** eagerly, in order, and the program got no error its own calls would not have
** given (guardprog exits on any error, drvprog prints every return code).  A
** failed capture or instantiation must show in the report (graph_failures),
** and so must a failed graph launch (the bail graph-failed).  Faults whose
** failures show a fault of graphshim's not fixed yet (open) run only with
** TEST_FAULTS_ALL=1 in the environment.
**
** A fault counts the program's own calls of its entry point too.  Where the
** program makes such calls, the fault is moved past them (call N becomes
** call K + N after the program's K calls) when the program makes them all
** before its first op and on one thread, and left out otherwise.
**
** Where no call fails, the output could still be right because the scenario
** cannot see lost work.  The control shows that it can: graph launches that
** return success without running (code 0, "dropped") must change the output
** of every program that replays.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"
#define DRVPROG BUILD_DIR "/tests/drvprog"

/* What a fault that met a call must leave in the report. */
enum expect {
    SILENT,          /* nothing: graphshim has a way around the failure */
    GRAPH_FAILURES,  /* "graph_failures" > 0: a capture or instantiation failed */
    GRAPH_FAILED,    /* the bail "graph-failed" */
};

static const struct fault {
    const char *entry, *calls, *code;
    enum expect expect;
    int open; /* shows a fault of graphshim's not fixed yet: run with TEST_FAULTS_ALL=1 */
} faults[] = {
    /* The private capture stream, made at the first capture of a thread. */
    {"cuStreamCreate", "1", "CUDA_ERROR_OUT_OF_MEMORY", GRAPH_FAILURES, 0},
    {"cuStreamCreate", "1+", "CUDA_ERROR_NOT_SUPPORTED", GRAPH_FAILURES, 0},
    {"cuStreamBeginCapture_v2", "1", "CUDA_ERROR_NOT_SUPPORTED", GRAPH_FAILURES, 0},
    {"cuStreamBeginCapture_v2", "2+", "CUDA_ERROR_OUT_OF_MEMORY", GRAPH_FAILURES, 0},
    {"cuStreamEndCapture", "1", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", GRAPH_FAILURES, 0},
    {"cuStreamEndCapture", "2+", "CUDA_ERROR_OUT_OF_MEMORY", GRAPH_FAILURES, 0},
    /* The capture's node of each op, kept to set its parameters later.  Where
    ** it cannot be told, the executable keeps no nodes, but it records the
    ** parameters it was captured with (a later replay with others builds it
    ** anew; before 6f6a3d3 it ran with those it was captured with). */
    {"cuStreamGetCaptureInfo_v2", "1+", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", SILENT, 0},
    {"cuGraphNodeGetType", "2+", "CUDA_ERROR_NOT_SUPPORTED", SILENT, 0},
    {"cuGraphInstantiateWithFlags", "1", "CUDA_ERROR_OUT_OF_MEMORY", GRAPH_FAILURES, 0},
    {"cuGraphInstantiateWithFlags", "2+", "CUDA_ERROR_NOT_SUPPORTED", GRAPH_FAILURES, 0},
    /* New parameters set in place; where that fails, the graph is built anew. */
    {"cuGraphKernelNodeGetParams_v2", "1", "CUDA_ERROR_NOT_SUPPORTED", SILENT, 0},
    {"cuGraphExecKernelNodeSetParams_v2", "1", "CUDA_ERROR_OUT_OF_MEMORY", SILENT, 0},
    {"cuGraphExecKernelNodeSetParams_v2", "2+", "CUDA_ERROR_NOT_SUPPORTED", SILENT, 0},
    /* A replay's, an early chunk's or a loop body's graph. */
    {"cuGraphLaunch", "1", "CUDA_ERROR_OUT_OF_MEMORY", GRAPH_FAILED, 0},
    {"cuGraphLaunch", "2+", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", GRAPH_FAILED, 0},
    {"cuGraphLaunch", "3", "CUDA_ERROR_NOT_SUPPORTED", GRAPH_FAILED, 0},
    /* Pageable copies: the staging buffer (where it cannot be had, the copy and
    ** the sequence it begins go out eagerly, an unholdable-op bail), and the
    ** event that guards it (without it, or where it cannot be recorded,
    ** graphshim synchronizes instead). */
    {"cuMemAllocHost_v2", "1+", "CUDA_ERROR_OUT_OF_MEMORY", SILENT, 0},
    {"cuEventCreate", "1+", "CUDA_ERROR_OUT_OF_MEMORY", SILENT, 0},
    {"cuEventRecord", "1+", "CUDA_ERROR_NOT_SUPPORTED", SILENT, 0},
};
#define NFAULTS (int)(sizeof faults / sizeof faults[0])

/* A program: guardprog SCENARIO 8, or drvprog PATH VARIANT 8 (arg2 set), under
** the knobs of setting (blank-separated assignments, or empty). */
struct prog {
    char arg1[20], arg2[8];
    char setting[80];
};

static int threaded(const struct prog *p)
{
    /* Threads, or a second process (whose calls count apart). */
    return !strcmp(p->arg1, "threads") || !strcmp(p->arg1, "race-ctx-sync") || !strcmp(p->arg1, "two-proc");
}

/* Every guardprog scenario under the default knobs, the drvprog modes, and
** scenarios that reach chunks, loop bodies, patches and staging under knobs
** that make graphs early and in pieces. */
#define CHUNKS "GRAPHSHIM_CHUNK_OPS=2 GRAPHSHIM_WARMUP=1 GRAPHSHIM_MIN_OPS=1"
#define BODIES "GRAPHSHIM_BODY_OPS=2 GRAPHSHIM_WARMUP=1"
static struct prog progs[] = {
    {"sync", "", ""}, {"ctx-sync", "", ""}, {"stall", "", ""}, {"event", "", ""}, {"hostfn", "", ""},
    {"alloc", "", ""}, {"syncop", "", ""}, {"pageable-d2h", "", ""}, {"legacy", "", ""}, {"legacy-holds", "", ""},
    {"capture", "", ""},
    {"unclassified", "", ""}, {"params", "", ""}, {"params5", "", ""}, {"watchdog", "", ""},
    {"idle-poll", "", ""}, {"two-proc", "", ""}, {"two-ctx", "", ""}, {"two-ctx-pt", "", ""},
    {"quiet-then-loop", "", ""}, {"body-poll", "", ""}, {"body-poll-mid", "", ""}, {"body-poll-mid-nosync", "", ""},
    {"body-module", "", ""}, {"staging", "", ""},
    {"threads", "", ""}, {"single", "", ""}, {"slow", "", ""}, {"cold", "", ""}, {"drift", "", ""},
    {"drift-prefix", "", ""}, {"rare", "", ""}, {"long", "", ""}, {"twenty", "", ""}, {"slowlong", "", ""},
    {"setup-then-loop", "", ""}, {"unholdable", "", ""}, {"nccl", "", ""}, {"stream-destroy", "", ""},
    {"api", "", ""}, {"many-params", "", ""}, {"big-struct", "", ""}, {"module", "", ""}, {"attrs", "", ""},
    {"func-attr", "", ""}, {"new-then-same", "", ""}, {"race-ctx-sync", "", ""}, {"teardown", "", ""},
    {"queries", "", ""}, {"loop1", "", ""}, {"body5", "", ""}, {"scalars", "", ""}, {"rotate", "", ""},
    {"train4", "", ""}, {"rare20", "", ""}, {"rare-then-loop", "", ""},
    {"direct", "legacy", ""}, {"direct", "ptsz", ""}, {"dlsym", "legacy", ""}, {"dlsym", "ptsz", ""},
    {"proc", "legacy", ""}, {"proc", "ptsz", ""},
    {"sync", "", CHUNKS}, {"staging", "", CHUNKS}, {"event", "", CHUNKS}, {"legacy", "", CHUNKS},
    {"params", "", CHUNKS}, {"long", "", CHUNKS}, {"threads", "", CHUNKS}, {"module", "", CHUNKS},
    {"loop1", "", CHUNKS}, {"body5", "", CHUNKS}, {"scalars", "", CHUNKS}, {"rotate", "", CHUNKS},
    {"sync", "", BODIES}, {"staging", "", BODIES}, {"loop1", "", BODIES}, {"body5", "", BODIES},
    {"scalars", "", BODIES}, {"rotate", "", BODIES}, {"twenty", "", BODIES}, {"rare", "", BODIES},
};

/* Runs p (under graphshim: shim) with its setting plus the assignments extra. */
static void run_with(struct run *r, const struct prog *p, int shim, const char *const *extra)
{
    const char *argv[] = {p->arg2[0] ? DRVPROG : GUARDPROG, p->arg1, p->arg2[0] ? p->arg2 : "8",
                          p->arg2[0] ? "8" : NULL, NULL};
    static char setting[sizeof p->setting];
    const char *env[16];
    int n = 0;

    if (shim) {
        strcpy(setting, p->setting);
        for (char *t = strtok(setting, " "); t && n < 8; t = strtok(NULL, " "))
            env[n++] = t;
        /* The host's clock: these runs are about failed calls, and some of
        ** the programs poll memory with no CUDA call, in real time. */
        env[n++] = "GRAPHSHIM_TEST_CLOCK=host";
        env[n++] = "FAKECUDA_CLOCK=host";
    }
    for (int i = 0; extra && extra[i] && n < 15; i++)
        env[n++] = extra[i];
    env[n] = NULL;
    run_prog(r, shim, env, argv, 30);
}

static const char *name(const struct prog *p)
{
    static char buf[160];
    snprintf(buf, sizeof buf, "%s %s%s%s", p->arg2[0] ? "drvprog" : "guardprog", p->arg1, p->arg2[0] ? " " : "",
             p->arg2);
    if (p->setting[0])
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " [%s]", p->setting);
    return buf;
}

/* Counts the calls of entry in a call log; *last gets the line number of the
** last (1-based, 0 if none), *first_op that of the first op (a launch, or an
** asynchronous copy or memset; 0 if none). */
static int calls_of(const char *log, const char *entry, int *last, int *first_op)
{
    size_t len = strlen(entry);
    int n = 0, line = 0;

    *last = *first_op = 0;
    for (const char *l = log; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        size_t name = strcspn(l, " \n");
        line++;
        if (name == len && strncmp(l, entry, len) == 0)
            n++, *last = line;
        if (!*first_op &&
            (strncmp(l, "cuLaunch", 8) == 0 || (strncmp(l, "cuMem", 5) == 0 && memmem(l, name, "Async", 5))))
            *first_op = line;
    }
    return n;
}

/* FAKECUDA_FAIL for fault f in program p, whose plain run made the call log
** log; into out.  0, or -1 where the program's own calls of the entry point
** cannot be told from graphshim's. */
static int fault_spec(const struct fault *f, const struct prog *p, const char *log, char *out, size_t len)
{
    int last, first, own = calls_of(log, f->entry, &last, &first);

    if (own && (threaded(p) || !first || last > first))
        return -1;
    snprintf(out, len, "FAKECUDA_FAIL=%s:%d%s:%s", f->entry, own + atoi(f->calls), strchr(f->calls, '+') ? "+" : "",
             f->code);
    return 0;
}

ParameterizedTestParameters(faults, graphshims_failed_calls_change_nothing_the_program_sees)
{
    return cr_make_param_array(struct prog, progs, sizeof progs / sizeof progs[0]);
}

ParameterizedTest(struct prog *p, faults, graphshims_failed_calls_change_nothing_the_program_sees, .timeout = 300)
{
    struct run base;
    char *log;
    int met = 0;

    run_with(&base, p, 0, (const char *[]){"FAKECUDA_LOG=@/fake.log", NULL});
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", name(p), base.err);
    log = run_file(&base, "fake.log");
    cr_assert_not_null(log);
    for (int i = 0; i < NFAULTS; i++) {
        const struct fault *f = &faults[i];
        char spec[128], *report;
        struct run r;

        if ((f->open && !getenv("TEST_FAULTS_ALL")) || fault_spec(f, p, log, spec, sizeof spec) != 0)
            continue;
        run_with(&r, p, 1, (const char *[]){spec, "GRAPHSHIM_REPORT=@/report.json", NULL});
        cr_assert_eq(r.status, base.status, "%s, %s: exit status %d, %d without graphshim: %s", name(p), spec,
                     r.status, base.status, r.err);
        cr_assert_str_eq(r.out, base.out, "%s, %s: the output differs from the run without graphshim", name(p),
                         spec);
        if (strstr(r.err, "fakecuda: injected")) {
            met++;
            report = run_file(&r, "report.json");
            cr_assert_not_null(report, "%s, %s: no report", name(p), spec);
            if (f->expect == GRAPH_FAILURES)
                cr_assert_gt(total(report, "graph_failures"), 0,
                             "%s, %s: a graph failed, the report does not say so: %s", name(p), spec, report);
            if (f->expect == GRAPH_FAILED)
                cr_assert_gt(total(report, "graph-failed"), 0,
                             "%s, %s: a graph launch failed, the report does not say so: %s", name(p), spec,
                             report);
            free(report);
        }
        run_free(&r);
    }
    free(log);
    run_free(&base);
    /* Scenarios that graph nothing meet no fault; the others must meet some. */
    if (strcmp(p->arg1, "single") && strcmp(p->arg1, "train4") && strcmp(p->arg1, "rare20") &&
        strcmp(p->arg1, "rare-then-loop"))
        cr_assert_gt(met, 2, "%s: only %d faults met a call of graphshim's", name(p), met);
}

/* Runs p under graphshim with the test build's setting spec into *r: its exit
** status and output must be base's, the run without graphshim. */
static void run_as_base(struct run *r, const struct prog *p, const struct run *base, const char *spec)
{
    run_with(r, p, 1, (const char *[]){spec, NULL});
    cr_assert_eq(r->status, base->status, "%s, %s: exit status %d, %d without graphshim: %s", name(p), spec,
                 r->status, base->status, r->err);
    cr_assert_str_eq(r->out, base->out, "%s, %s: the output differs from the run without graphshim", name(p), spec);
}

/* graphshim without memory of its own (GRAPHSHIM_TEST_FAIL_ALLOC: the test
** build fails its own mallocs, interpose/test_alloc.c): every allocation from
** the first, the 5th alone, and from the 20th (a program that graphs
** nothing may make fewer).  Where it has none, it must pass work through: the
** output and exit status of the run without it. */
static const char *const alloc_faults[] = {"1+", "5", "20+"};

ParameterizedTestParameters(faults, graphshims_failed_allocations_change_nothing_the_program_sees)
{
    return cr_make_param_array(struct prog, progs, sizeof progs / sizeof progs[0]);
}

ParameterizedTest(struct prog *p, faults, graphshims_failed_allocations_change_nothing_the_program_sees,
                  .timeout = 120)
{
    struct run base;

    run_with(&base, p, 0, NULL);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", name(p), base.err);
    for (size_t i = 0; i < sizeof alloc_faults / sizeof alloc_faults[0]; i++) {
        char spec[64];
        struct run r;

        snprintf(spec, sizeof spec, "GRAPHSHIM_TEST_FAIL_ALLOC=%s", alloc_faults[i]);
        run_as_base(&r, p, &base, spec);
        cr_assert(i == 2 || strstr(r.err, "graphshim: injected allocation failure"), "%s, %s: no allocation failed",
                  name(p), spec);
        run_free(&r);
    }
    run_free(&base);
}

/* graphshim's own calls of entry points the program calls too, which
** FAKECUDA_FAIL cannot fail for graphshim alone (GRAPHSHIM_TEST_OWN_FAIL, the
** test build's: interpose/test_own.c counts graphshim's calls apart), each
** tried where the program's run with graphshim made one
** (GRAPHSHIM_TEST_OWN_COUNTS): what tells it a stream's flags and context and
** the current context, its events and synchronizes, a busy stream's query,
** a host pointer's kind, memory at a release, and a capture's end.  The
** output and exit status must be those of the run without graphshim.  Before
** a blocking stream whose flags or context could not be read was taken for
** a non-blocking one, and its ops ran before what the legacy stream held
** (guardprog legacy-holds). */
static const char *const own_faults[] = {
    "cuStreamGetFlags:1+:400",  "cuStreamGetCtx:1:2",           "cuCtxGetCurrent:1+:2",
    "cuEventRecord:1+:801",     "cuEventQuery:1+:400",          "cuEventSynchronize:1+:2",
    "cuStreamQuery:1+:2",       "cuStreamSynchronize:1+:801",   "cuStreamWaitEvent:1+:801",
    "cuPointerGetAttribute:1+:400", "cuMemGetInfo_v2:1+:2",     "cuStreamEndCapture:1:901",
};

ParameterizedTestParameters(faults, graphshims_own_failed_calls_change_nothing_the_program_sees)
{
    return cr_make_param_array(struct prog, progs, sizeof progs / sizeof progs[0]);
}

ParameterizedTest(struct prog *p, faults, graphshims_own_failed_calls_change_nothing_the_program_sees, .timeout = 120)
{
    struct run base, counted;
    char *counts;
    int met = 0;

    run_with(&base, p, 0, NULL);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", name(p), base.err);
    run_with(&counted, p, 1, (const char *[]){"GRAPHSHIM_TEST_OWN_COUNTS=@/own.counts", NULL});
    counts = run_file(&counted, "own.counts");
    for (size_t i = 0; counts && i < sizeof own_faults / sizeof own_faults[0]; i++) {
        char spec[96], line[48];
        struct run r;

        /* a line "ENTRY N" of the counts: graphshim made the call */
        snprintf(line, sizeof line, "\n%.*s ", (int)strcspn(own_faults[i], ":"), own_faults[i]);
        if (strncmp(counts, line + 1, strlen(line + 1)) != 0 && !strstr(counts, line))
            continue;
        snprintf(spec, sizeof spec, "GRAPHSHIM_TEST_OWN_FAIL=%s", own_faults[i]);
        run_as_base(&r, p, &base, spec);
        met += strstr(r.err, "graphshim: injected own-call failure") != NULL;
        run_free(&r);
    }
    cr_assert(counts && met > 0, "%s: no own call of graphshim's failed (counts: %s)", name(p),
              counts ? counts : "none written");
    free(counts);
    run_free(&counted);
    run_free(&base);
}

/* Runs guardprog scenario under graphshim once for each k from 1 to kmax with
** GRAPHSHIM_TEST_FAIL_ALLOC=k and suffix ("": the kth allocation alone, "+":
** from the kth on); each run must print and exit as the run without graphshim.
** Returns how many runs met a failed allocation. */
static int each_allocation_failing(const char *scenario, int kmax, const char *suffix)
{
    struct prog p = {"", "", ""};
    struct run base;
    int met = 0;

    snprintf(p.arg1, sizeof p.arg1, "%s", scenario);
    run_with(&base, &p, 0, NULL);
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", scenario, base.err);
    for (int k = 1; k <= kmax; k++) {
        char spec[64];
        struct run r;

        snprintf(spec, sizeof spec, "GRAPHSHIM_TEST_FAIL_ALLOC=%d%s", k, suffix);
        run_as_base(&r, &p, &base, spec);
        met += strstr(r.err, "graphshim: injected allocation failure") != NULL;
        run_free(&r);
    }
    run_free(&base);
    return met;
}

/* Each of graphshim's first 300 allocations failing alone, in a program whose
** legacy stream is met first while a blocking stream holds work: where the
** legacy stream's state is the one that fails, the held work must go out
** before its op (bail no-memory), or the copy reads what is not computed. */
Test(faults, a_stream_without_memory_for_its_state_keeps_the_legacy_order, .timeout = 120)
{
    int met = each_allocation_failing("legacy-late", 300, "");

    cr_assert_gt(met, 20, "only %d of the 300 allocations were made", met);
}

/* Every allocation of graphshim's failing from the kth on (k up to 40), in a
** program whose held launches of a 72-parameter kernel go out eagerly now and
** then: issuing one needs room for 72 parameter pointers, more than its stack
** holds; without memory the key's bytes go as the launch's argument buffer.
** Before, the launch was not issued at all, and the program, told success at
** its call, read what was never computed (fuzz seed 207). */
Test(faults, a_held_launch_of_many_parameters_goes_out_without_memory, .timeout = 120)
{
    int met = each_allocation_failing("wide-params", 40, "+");

    cr_assert_gt(met, 15, "only %d runs failed an allocation", met);
}

/* A driver without some entry points (GRAPHSHIM_TEST_NO_ENTRY, the test
** build's): one graphshim cannot do without (cuFuncGetName: a kernel's name
** tells NCCL's) makes it pass every call through; the others take their way
** around.  Each set is left out where the program calls one of its entries. */
static const char *const missing[] = {
    "cuFuncGetName",
    "cuStreamGetCaptureInfo_v2,cuGraphExecKernelNodeSetParams_v2",
    "cuPointerGetAttributes,cuStreamGetCtx,cuKernelGetParamInfo,cuGraphExecMemsetNodeSetParams",
};

ParameterizedTestParameters(faults, a_driver_without_entry_points_changes_nothing_the_program_sees)
{
    return cr_make_param_array(struct prog, progs, sizeof progs / sizeof progs[0]);
}

ParameterizedTest(struct prog *p, faults, a_driver_without_entry_points_changes_nothing_the_program_sees,
                  .timeout = 120)
{
    struct run base;
    char *log;

    run_with(&base, p, 0, (const char *[]){"FAKECUDA_LOG=@/fake.log", NULL});
    cr_assert_eq(base.status, 0, "%s without graphshim: %s", name(p), base.err);
    log = run_file(&base, "fake.log");
    cr_assert_not_null(log);
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        char spec[160], list[128], *save = NULL;
        int used = 0, last, first;
        struct run r;

        snprintf(list, sizeof list, "%s", missing[i]);
        for (char *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save))
            used += calls_of(log, e, &last, &first);
        if (used)
            continue;
        snprintf(spec, sizeof spec, "GRAPHSHIM_TEST_NO_ENTRY=%s", missing[i]);
        run_with(&r, p, 1, (const char *[]){spec, "GRAPHSHIM_REPORT=@/report.json", NULL});
        cr_assert_eq(r.status, base.status, "%s, %s: exit status %d, %d without graphshim: %s", name(p), spec,
                     r.status, base.status, r.err);
        cr_assert_str_eq(r.out, base.out, "%s, %s: the output differs from the run without graphshim", name(p),
                         spec);
        if (i == 0) {
            char *report = run_file(&r, "report.json");
            cr_assert(report && strstr(report, "\"engine\": false"),
                      "%s, %s: the engine ran over a driver it cannot read kernel names of: %s", name(p), spec,
                      report ? report : "(no report)");
            free(report);
        }
        run_free(&r);
    }
    free(log);
    run_free(&base);
}

/* The control: graph launches that return success without running change the
** output of every program whose graphs launch, so its comparison sees lost work.
** Three scenarios are blind to it, and said so here: their graphs compute what
** the program never reads (rare: copies into a buffer it never shows) or what
** it has already (quiet-then-loop: values past the float range; setup-then-loop
** and single: the same values each iteration). */
static const char *const blind[] = {"rare", "quiet-then-loop", "setup-then-loop", "single", NULL};

ParameterizedTestParameters(faults, lost_graph_work_shows_in_every_programs_output)
{
    return cr_make_param_array(struct prog, progs, sizeof progs / sizeof progs[0]);
}

ParameterizedTest(struct prog *p, faults, lost_graph_work_shows_in_every_programs_output, .timeout = 60)
{
    struct run base, r;

    if (!strcmp(p->arg1, "capture"))
        return; /* its own graph launches would be dropped too */
    for (int i = 0; blind[i]; i++)
        if (!strcmp(p->arg1, blind[i]))
            return;
    run_with(&base, p, 0, NULL);
    run_with(&r, p, 1, (const char *[]){"FAKECUDA_FAIL=cuGraphLaunch:1+:0", NULL});
    if (!strstr(r.err, "fakecuda: dropped"))
        return; /* no graph launched: nothing to lose */
    cr_assert(r.status != base.status || strcmp(r.out, base.out) != 0,
              "%s: graph launches that did nothing left the output as it was: the comparison cannot see lost "
              "work here", name(p));
    run_free(&base), run_free(&r);
}
