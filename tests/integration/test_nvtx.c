/*
** test_nvtx.c: graphshim's NVTX ranges, seen by a tool.
**
** guardprog scenarios run under graphshim with tests/nvtxprobe as the NVTX tool
** (NVTX_INJECTION64_PATH).  The ranges of the domain "graphshim" must agree with
** the report: one replay range per replay, one chunk range per chunk, one
** capture range per graph captured or failed, one body range per graph of loop
** bodies, the ops of replay, chunk and body ranges
** adding up to ops_replayed, and one range per bail, named by its reason.  With
** GRAPHSHIM_NVTX=0 graphshim makes no NVTX call; a tool that calls the driver
** from its callbacks must not deadlock the engine.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"
#define PROBE "NVTX_INJECTION64_PATH=" BUILD_DIR "/tests/nvtxprobe.so"

/* The count (and in *sum the payloads) of the probe's line "EVENT graphshim MSG N SUM"; 0 if none. */
static long probe(const char *out, const char *event, const char *msg, long *sum)
{
    char pat[96];
    const char *p;
    char *end;
    long n;

    if (sum)
        *sum = 0;
    snprintf(pat, sizeof pat, "\n%s graphshim %s ", event, msg);
    p = out ? strstr(out, pat) : NULL;
    if (!p)
        return 0;
    n = strtol(p + strlen(pat), &end, 10);
    if (sum)
        *sum = strtol(end, NULL, 10);
    return n;
}

struct scenario {
    char name[16], iters[8], env[2][40];
};

static struct scenario scenarios[] = {
    {"sync", "8", {"GRAPHSHIM_CHUNK_OPS=0", ""}},                        /* replays, one capture */
    {"slow", "20", {"GRAPHSHIM_CHUNK_OPS=2", ""}},                       /* chunks, mismatch bails */
    {"stall", "40", {"GRAPHSHIM_MAX_DEFER_US=1000", ""}},                /* bails on the watchdog's thread */
    {"unholdable", "12", {"", ""}},                                      /* unholdable-op bails */
    {"sync", "40", {"FAKECUDA_GRAPH_LAUNCH_US=3000", "GRAPHSHIM_GAIN_CHECK=1"}}, /* a no-gain mark */
    {"loop1", "4", {"", ""}},                                            /* loop bodies (no bail) */
    {"params5", "40", {"", ""}},                                         /* graphs updated (no bail) */
    {"rotate", "40", {"", ""}},                                          /* variants captured in a replay */
};

ParameterizedTestParameters(nvtx, ranges_match_the_report)
{
    return cr_make_param_array(struct scenario, scenarios, sizeof scenarios / sizeof scenarios[0]);
}

ParameterizedTest(struct scenario *sc, nvtx, ranges_match_the_report, .timeout = 60)
{
    const char *argv[] = {GUARDPROG, sc->name, sc->iters, NULL};
    const char *env[] = {PROBE, "NVTXPROBE_OUT=@/nvtx.txt", "GRAPHSHIM_REPORT=@/report.json", sc->env[0], sc->env[1],
                         NULL};
    struct run base, r;
    char *report, *out, *bails;
    long rsum, csum, bsum, n;

    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 1, env, argv, 30);
    cr_assert_eq(r.status, 0, "%s: %s", sc->name, r.err);
    cr_assert_str_eq(r.out, base.out, "%s: the output changed under the tool", sc->name);
    report = run_file(&r, "report.json");
    out = run_file(&r, "nvtx.txt");
    cr_assert_not_null(out, "%s: the NVTX tool wrote nothing: it was never loaded", sc->name);
    cr_assert(strstr(out, "\ndomain graphshim\n"), "%s: no graphshim domain:\n%s", sc->name, out);
    cr_assert_gt(total(report, "replays"), 0, "%s: nothing replayed, so the test proves nothing: %s", sc->name,
                 report);

    cr_assert_eq(probe(out, "push", "replay", &rsum), total(report, "replays"), "%s:\n%s\n%s", sc->name, out, report);
    cr_assert_eq(probe(out, "push", "chunk", &csum), total(report, "chunks"), "%s:\n%s\n%s", sc->name, out, report);
    cr_assert_eq(probe(out, "push", "body", &bsum), total(report, "body_graphs"), "%s:\n%s\n%s", sc->name, out,
                 report);
    cr_assert_eq(rsum + csum + bsum, total(report, "ops_replayed"),
                 "%s: ops in replay, chunk and body ranges:\n%s\n%s", sc->name, out, report);
    cr_assert_eq(probe(out, "push", "capture", NULL), total(report, "graphs_captured") + total(report, "graph_failures"),
                 "%s:\n%s\n%s", sc->name, out, report);

    /* Every bail of the report is a range (a mark for no-gain) named by its reason. */
    bails = strstr(strstr(report, "\"totals\""), "\"bails\": {");
    cr_assert_not_null(bails);
    bails += strlen("\"bails\": {");
    n = 0;
    while (*bails == '"') {
        char reason[40];
        long count, got;
        const char *q = strchr(bails + 1, '"');
        snprintf(reason, sizeof reason, "%.*s", (int)(q - bails - 1), bails + 1);
        count = strtol(q + 2, &bails, 10);
        got = strcmp(reason, "no-gain") == 0 ? probe(out, "mark", reason, NULL) : probe(out, "push", reason, NULL);
        cr_assert_eq(got, count, "%s: bail %s:\n%s\n%s", sc->name, reason, out, report);
        n++;
        if (*bails == ',')
            bails += 2;
    }
    if ((strcmp(sc->name, "sync") != 0 || sc->env[1][0]) && strcmp(sc->name, "loop1") != 0 &&
        strcmp(sc->name, "params5") != 0 && strcmp(sc->name, "rotate") != 0)
        cr_assert_gt(n, 0, "%s: no bail, so bail ranges are not tested: %s", sc->name, report);

    /* Every push popped, on its own thread. */
    cr_assert(strstr(out, "\nopen 0\n") && strstr(out, "\nunmatched 0\n"), "%s:\n%s", sc->name, out);
    for (const char *p = strstr(out, "\npush graphshim "); p; p = strstr(p + 1, "\npush graphshim ")) {
        char msg[40];
        sscanf(p + strlen("\npush graphshim "), "%39s", msg);
        cr_assert_eq(probe(out, "pop", msg, NULL), probe(out, "push", msg, NULL), "%s: %s:\n%s", sc->name, msg, out);
    }
    free(report), free(out);
    run_free(&base), run_free(&r);
}

Test(nvtx, knob_off_makes_no_nvtx_call)
{
    const char *argv[] = {GUARDPROG, "slow", "20", NULL};
    struct run r;
    char *out;

    run_prog(&r, 1, (const char *[]){PROBE, "NVTXPROBE_OUT=@/nvtx.txt", "GRAPHSHIM_CHUNK_OPS=2", "GRAPHSHIM_NVTX=0",
                                     NULL},
             argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    out = run_file(&r, "nvtx.txt");
    cr_assert(!out || !strstr(out, "graphshim"), "GRAPHSHIM_NVTX=0, yet:\n%s", out);
    free(out);
    run_free(&r);
    run_prog(&r, 1, (const char *[]){PROBE, "NVTXPROBE_OUT=@/nvtx.txt", "GRAPHSHIM=0", NULL}, argv, 20);
    out = run_file(&r, "nvtx.txt");
    cr_assert(!out || !strstr(out, "graphshim"), "GRAPHSHIM=0, yet:\n%s", out);
    free(out);
    run_free(&r);
}

/* The tool's callbacks run where the engine holds a stream's lock; a callback
** that synchronizes the context must reach the driver, not the engine. */
Test(nvtx, a_tool_that_calls_the_driver_from_its_callbacks, .timeout = 60)
{
    const char *argv[] = {GUARDPROG, "slow", "20", NULL};
    struct run base, r;
    char *out;

    run_prog(&base, 0, NULL, argv, 20);
    run_prog(&r, 1,
             (const char *[]){PROBE, "NVTXPROBE_OUT=@/nvtx.txt", "NVTXPROBE_DRIVER_CALL=1", "GRAPHSHIM_CHUNK_OPS=2",
                              NULL},
             argv, 10);
    cr_assert_eq(r.status, 0, "status %d (142: hung): %s", r.status, r.err);
    cr_assert_str_eq(r.out, base.out);
    out = run_file(&r, "nvtx.txt");
    cr_assert_gt(probe(out, "push", "chunk", NULL), 0, "%s", out);
    cr_assert_gt(probe(out, "push", "mismatch", NULL), 0, "%s", out);
    free(out);
    run_free(&base), run_free(&r);
}
