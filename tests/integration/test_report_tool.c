/*
** test_report_tool.c: `graphshim report` (scripts/report.c) over reports that
** guardprog runs under graphshim write, and over files that are no report.
**
** One report: the totals line, the streams and sequences ranked by launches
** saved (a sequence with what its graph launches cost), each bail reason with
** its hint; --json gives the report unchanged.  Two
** reports: every total summed.  A truncated report, a JSON file that is no
** report and a missing file: exit status 2 and a message naming the file (and
** for bad JSON the line and column); no file: usage, exit status 2.  Where the
** program's calls cut its graphs: guardprog's sites scenario, whose functions
** gp_site_item and gp_site_alloc the report names under their bail reasons.  And
** GRAPHSHIM_REPORT's %p and %r: a report per process, named by its pid or its
** rank in a job; and a job's process tree under the launcher: every worker
** preloaded, each its own report, summed by graphshim report.
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define GUARDPROG BUILD_DIR "/tests/guardprog"
#define LAUNCHER BUILD_DIR "/graphshim"

/* Runs guardprog SCENARIO ITERS under graphshim with env, writing report.json in r's directory. */
static char *report_of(struct run *r, const char *scenario, const char *iters, const char *knob)
{
    const char *argv[] = {GUARDPROG, scenario, iters, NULL};
    char *report;

    run_prog(r, 1, (const char *[]){"GRAPHSHIM_REPORT=@/report.json", "GRAPHSHIM_GAIN_CHECK=0", knob, NULL}, argv,
             20);
    cr_assert_eq(r->status, 0, "%s", r->err);
    report = run_file(r, "report.json");
    cr_assert_not_null(report);
    return report;
}

static void tool(struct run *out, const char *const *args)
{
    const char *argv[8] = {LAUNCHER, "report"};
    for (int i = 0; args[i] && i < 5; i++)
        argv[i + 2] = args[i];
    run_prog(out, 0, NULL, argv, 20);
}

Test(report_tool, ranks_one_report)
{
    struct run a, t;
    char path[128], *report = report_of(&a, "slow", "20", "GRAPHSHIM_CHUNK_OPS=2"), line[192], *row;

    cr_assert_gt(total(report, "replays"), 0, "%s", report);
    cr_assert_gt(total(strstr(report, "\"bails\""), "mismatch"), 0, "no bail to rank: %s", report);
    snprintf(path, sizeof path, "%s/report.json", a.dir);
    tool(&t, (const char *[]){path, NULL});
    cr_assert_eq(t.status, 0, "%s", t.err);
    snprintf(line, sizeof line, "  ops %ld, replayed as graphs %ld:", total(report, "ops"), total(report, "ops_replayed"));
    cr_assert(strstr(t.out, line), "no '%s' in:\n%s", line, t.out);
    snprintf(line, sizeof line, "saved %ld launches", total(report, "launches_saved"));
    cr_assert(strstr(t.out, line), "no '%s' in:\n%s", line, t.out);
    cr_assert(strstr(t.out, "streams by launches saved (1)"), "%s", t.out);
    cr_assert(strstr(t.out, "sequences by launches saved (2)"), "%s", t.out);
    /* The sequence that saved most comes first: 14 replays of 6 ops, 70 launches;
    ** then what its graph launches cost, and no times (the gain check is off). */
    cr_assert(strstr(t.out, "     1              70       14       16      6  yes"), "%s\n%s", t.out, report);
    row = strstr(report, "{\"ops\": 6, ");
    cr_assert_not_null(row, "%s", report);
    snprintf(line, sizeof line, "     1              70       14       16      6  yes      %14ld %9ld %13.1f "
             "         -          -            -  ", total(row, "graph_launches"), total(row, "nodes_set"),
             total_f(row, "graph_host_us"));
    cr_assert(strstr(t.out, line), "no '%s' in:\n%s", line, t.out);
    snprintf(line, sizeof line, "%8ld  mismatch ", total(strstr(report, "\"bails\""), "mismatch"));
    cr_assert(strstr(t.out, line), "no '%s' in:\n%s", line, t.out);
    cr_assert(strstr(t.out, "parameters alone are patched"), "no hint:\n%s", t.out);
    run_free(&t);

    tool(&t, (const char *[]){"--json", path, NULL});
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_assert_str_eq(t.out, report, "--json of one report must be the report");
    free(report);
    run_free(&t), run_free(&a);
}

Test(report_tool, sums_several_reports)
{
    struct run a, b, t;
    char *ra = report_of(&a, "slow", "20", "GRAPHSHIM_CHUNK_OPS=2");
    char *rb = report_of(&b, "stall", "40", "GRAPHSHIM_MAX_DEFER_US=1000");
    char pa[128], pb[128];
    const char *keys[] = {"ops", "ops_held", "ops_replayed", "replays", "chunks", "launches_saved", "graphs_captured"};

    snprintf(pa, sizeof pa, "%s/report.json", a.dir);
    snprintf(pb, sizeof pb, "%s/report.json", b.dir);
    tool(&t, (const char *[]){"--json", pa, pb, NULL});
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_assert(strstr(t.out, "\"reports\": 2"), "%s", t.out);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert_eq(total(t.out, keys[i]), total(ra, keys[i]) + total(rb, keys[i]), "%s:\n%s", keys[i], t.out);
    cr_assert_eq(total(strstr(t.out, "\"bails\""), "mismatch"), total(strstr(ra, "\"bails\""), "mismatch"), "%s", t.out);
    cr_assert_gt(total(strstr(t.out, "\"bails\""), "watchdog"), 0, "%s", t.out);
    cr_assert_eq(total(strstr(t.out, "\"calls\""), "sync"),
                 total(strstr(ra, "\"calls\""), "sync") + total(strstr(rb, "\"calls\""), "sync"), "%s", t.out);
    run_free(&t);

    tool(&t, (const char *[]){pa, pb, NULL});
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_assert(strstr(t.out, "graphshim report: 2 reports"), "%s", t.out);
    cr_assert(strstr(t.out, "streams by launches saved (2)"), "%s", t.out);
    cr_assert(strstr(t.out, " watchdog ") && strstr(t.out, " mismatch "), "%s", t.out);
    free(ra), free(rb);
    run_free(&t), run_free(&a), run_free(&b);
}

/* Two contexts' legacy streams: one row each, named by its context. */
Test(report_tool, names_each_streams_context)
{
    struct run a, t;
    char path[128], *report = report_of(&a, "two-ctx", "8", NULL);

    snprintf(path, sizeof path, "%s/report.json", a.dir);
    tool(&t, (const char *[]){path, NULL});
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_assert(strstr(t.out, "streams by launches saved (2)"), "%s", t.out);
    cr_assert(strstr(t.out, "  legacy       0 0x1 "), "%s", t.out);
    cr_assert(strstr(t.out, "  legacy       1 0x1 "), "%s", t.out);
    free(report);
    run_free(&t), run_free(&a);
}

Test(report_tool, rejects_what_is_no_report)
{
    struct run a, t;
    char *report = report_of(&a, "sync", "8", "GRAPHSHIM_LOG=warn");
    char trunc[128], other[128], missing[128];
    FILE *f;

    snprintf(trunc, sizeof trunc, "%s/trunc.json", a.dir);
    f = fopen(trunc, "w");
    /* cut inside the list of streams, outside any string */
    cr_assert(strstr(report, "\"streams\": ["), "%s", report);
    fwrite(report, 1, (size_t)(strstr(report, "\"streams\": [") - report) + strlen("\"streams\": ["), f);
    fclose(f);
    snprintf(other, sizeof other, "%s/other.json", a.dir);
    f = fopen(other, "w");
    fputs("{\"totals\": {\"ops\": 1}, \"streams\": []}\n", f);
    fclose(f);
    snprintf(missing, sizeof missing, "%s/missing.json", a.dir);

    tool(&t, (const char *[]){trunc, NULL});
    cr_assert_eq(t.status, 2, "%d %s", t.status, t.out);
    cr_assert(strstr(t.err, "trunc.json:") && strstr(t.err, "not valid JSON: the file ends early"), "%s", t.err);
    cr_assert_str_empty(t.out);
    run_free(&t);
    tool(&t, (const char *[]){"--json", other, NULL});
    cr_assert_eq(t.status, 2);
    cr_assert(strstr(t.err, "other.json: totals.ops_held is missing"), "%s", t.err);
    cr_assert_str_empty(t.out, "--json passed a bad report through: %s", t.out);
    run_free(&t);
    tool(&t, (const char *[]){missing, NULL});
    cr_assert_eq(t.status, 2);
    cr_assert(strstr(t.err, "cannot read") && strstr(t.err, "missing.json"), "%s", t.err);
    run_free(&t);
    tool(&t, (const char *[]){NULL});
    cr_assert_eq(t.status, 2);
    cr_assert(strstr(t.err, "usage: graphshim report"), "%s", t.err);
    free(report);
    run_free(&t), run_free(&a);
}

/* The report names the call sites that cut graphs, and the kernels before the
** cut; the report tool prints them under their reasons; the knob turns it off. */
Test(report_tool, names_where_graphs_are_cut)
{
    struct run a, b, t;
    char *report = report_of(&a, "sites", "60", "GRAPHSHIM_LOG=warn"), *sites, *off, path[256];

    cr_assert(sites = strstr(report, "\"bail_sites\": {"), "%s", report);
    cr_assert(strstr(sites, "\"boundary-sync\": [{\"site\": \"gp_site_item\", \"object\": \"guardprog\", \"count\": "),
              "%s", report);
    cr_assert(strstr(sites, "\"boundary-alloc\": [{\"site\": \"gp_site_alloc\", \"object\": \"guardprog\""), "%s",
              report);
    cr_assert(strstr(sites, "\"kernels\": [\"cut_kernel\", \"axpb\"]}"), "the kernels before the cut: %s", report);
    cr_assert_eq(total(strstr(sites, "\"boundary-sync\""), "count"), total(strstr(report, "\"bails\""), "boundary-sync"),
                 "each of the first bails is sampled: %s", report);
    snprintf(path, sizeof path, "%s/report.json", a.dir);
    tool(&t, (const char *[]){path, NULL});
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_assert(strstr(t.out, "boundary-sync") && strstr(t.out, "            at gp_site_item (guardprog): "), "%s", t.out);
    cr_assert(strstr(t.out, "            at gp_site_alloc (guardprog): "), "%s", t.out);
    off = report_of(&b, "sites", "60", "GRAPHSHIM_BAIL_SITES=0");
    cr_assert(strstr(off, "\"bail_sites\": {},"), "GRAPHSHIM_BAIL_SITES=0: %s", off);
    free(report), free(off);
    run_free(&t), run_free(&a), run_free(&b);
}

/* GRAPHSHIM_REPORT with %p: each process writes its own, named by its pid. */
Test(report_tool, a_report_per_process)
{
    const char *argv[] = {GUARDPROG, "sync", "8", NULL};
    struct run r;
    char name[64], *report;
    int pid = -1;
    DIR *d;
    struct dirent *e;

    run_prog(&r, 1, (const char *[]){"GRAPHSHIM_REPORT=@/r.%p.json", NULL}, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(run_file(&r, "r.%p.json"), "%%p was not replaced");
    d = opendir(r.dir);
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL)
        if (sscanf(e->d_name, "r.%d.json", &pid) == 1)
            break;
    closedir(d);
    cr_assert_gt(pid, 0, "no report r.<pid>.json in %s", r.dir);
    snprintf(name, sizeof name, "r.%d.json", pid);
    report = run_file(&r, name);
    cr_assert_gt(total(report, "replays"), 0, "%s", report);
    free(report);
    run_free(&r);
}

/* GRAPHSHIM_REPORT with %r: the rank, from the first of RANK,
** OMPI_COMM_WORLD_RANK, SLURM_PROCID and PMI_RANK that holds a number; x if
** none does. */
Test(report_tool, a_report_per_rank)
{
    static const struct {
        const char *env[6], *name;
    } cases[] = {
        {{"RANK=3", "OMPI_COMM_WORLD_RANK=5"}, "r.3.json"},
        {{"RANK=", "OMPI_COMM_WORLD_RANK=5", "SLURM_PROCID=6"}, "r.5.json"},
        {{"RANK=", "OMPI_COMM_WORLD_RANK=", "SLURM_PROCID=6", "PMI_RANK=7"}, "r.6.json"},
        {{"RANK=", "OMPI_COMM_WORLD_RANK=", "SLURM_PROCID=", "PMI_RANK=7"}, "r.7.json"},
        {{"RANK=../1", "OMPI_COMM_WORLD_RANK=", "SLURM_PROCID=", "PMI_RANK="}, "r.x.json"},
    };
    const char *argv[] = {GUARDPROG, "sync", "8", NULL};

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *env[8] = {"GRAPHSHIM_REPORT=@/r.%r.json"};
        struct run r;
        char *report;
        for (int j = 0; cases[i].env[j]; j++)
            env[j + 1] = cases[i].env[j];
        run_prog(&r, 1, env, argv, 20);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert_null(run_file(&r, "r.%r.json"), "%%r was not replaced");
        report = run_file(&r, cases[i].name);
        cr_assert_not_null(report, "case %zu: no report %s", i, cases[i].name);
        cr_assert_gt(total(report, "replays"), 0, "%s", report);
        free(report);
        run_free(&r);
    }
}

/* A launcher's process tree under `graphshim run`: the parent (no CUDA call)
** execs two workers, each with its RANK, as torchrun does.  Each worker must run
** under graphshim (the launcher's LD_PRELOAD and GRAPHSHIM_REPORT reach it) and
** write its own report; graphshim report sums them. */
Test(report_tool, the_launcher_preloads_every_worker_of_a_job)
{
    const char *argv[] = {LAUNCHER, "run", "--", GUARDPROG, "spawn", "sync", "8", NULL};
    struct run r, t;
    char path[2][512], *report[2];
    int n = 0;
    DIR *d;
    struct dirent *e;

    run_prog(&r, 0, (const char *[]){"GRAPHSHIM_REPORT=@/gs-%r-%p.json", NULL}, argv, 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count_lines(r.out, " out "), 2 * 8, "%s", r.out);
    d = opendir(r.dir);
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL) {
        int rank, pid;
        if (sscanf(e->d_name, "gs-%d-%d.json", &rank, &pid) != 2)
            continue;
        cr_assert(rank == 0 || rank == 1, "%s", e->d_name);
        cr_assert_lt(n, 2, "more than two reports: %s", e->d_name);
        snprintf(path[n++], sizeof path[0], "%s/%s", r.dir, e->d_name);
    }
    closedir(d);
    cr_assert_eq(n, 2, "%d reports, one per worker expected: %s", n, r.err);
    cr_assert_str_neq(strrchr(path[0], '/'), strrchr(path[1], '/'));
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(path[i], "r");
        char buf[8192];
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[len] = 0;
        report[i] = strdup(buf);
        cr_assert_eq(total(report[i], "replays"), 8 - 2, "%s", report[i]);
    }
    tool(&t, (const char *[]){"--json", path[0], path[1], NULL});
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_assert(strstr(t.out, "\"reports\": 2"), "%s", t.out);
    cr_assert_eq(total(t.out, "replays"), 2 * (8 - 2), "%s", t.out);
    cr_assert_eq(total(t.out, "ops"), total(report[0], "ops") + total(report[1], "ops"), "%s", t.out);
    free(report[0]), free(report[1]);
    run_free(&t), run_free(&r);
}
