/*
** test_config.c: the knob table and its parsing: one grammar for every value,
** warnings that stay one line, and the expansion of %p, %r and %% in paths.
*/
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../policy/base/config.h"
#include "../../policy/base/log.h"

#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

static void clear_env(void)
{
    for (int i = 0; i < GS_NKNOBS; i++)
        unsetenv(gs__knobs[i].name);
}

Test(config, defaults_when_unset)
{
    clear_env();
    cr_assert_eq(gs__config_load(), 0);
    cr_assert_eq(gs__cfg.enable, 1);
    cr_assert_eq(gs__cfg.warmup, 2);
    cr_assert_eq(gs__cfg.min_ops, 2);
    cr_assert_eq(gs__cfg.log, GS_LOG_WARN);
    cr_assert_eq(gs__cfg.trace, 0);
    cr_assert_str_empty(gs__cfg.path[GS_KNOB_trace]);
}

Test(config, valid_values_are_used)
{
    clear_env();
    setenv("GRAPHSHIM", "0", 1);
    setenv("GRAPHSHIM_WARMUP", "5", 1);
    setenv("GRAPHSHIM_LOG", "DEBUG", 1);
    setenv("GRAPHSHIM_TRACE", "/tmp/t.txt", 1);
    cr_assert_eq(gs__config_load(), 0);
    cr_assert_eq(gs__cfg.enable, 0);
    cr_assert_eq(gs__cfg.warmup, 5);
    cr_assert_eq(gs__cfg.log, GS_LOG_DEBUG);
    cr_assert_eq(gs__cfg.trace, 1);
    cr_assert_str_eq(gs__cfg.path[GS_KNOB_trace], "/tmp/t.txt");
}

Test(config, bad_values_fall_back_to_the_default, .init = cr_redirect_stderr)
{
    clear_env();
    setenv("GRAPHSHIM_WARMUP", "abc", 1);
    setenv("GRAPHSHIM_MIN_OPS", "0", 1);       /* below the range */
    setenv("GRAPHSHIM_MAX_GRAPHS", "12x", 1);  /* trailing junk */
    setenv("GRAPHSHIM_LOG", "loud", 1);
    setenv("GRAPHSHIM", "2", 1);
    cr_assert_eq(gs__config_load(), 5);
    cr_assert_eq(gs__cfg.warmup, 2);
    cr_assert_eq(gs__cfg.min_ops, 2);
    cr_assert_eq(gs__cfg.max_graphs, 256);
    cr_assert_eq(gs__cfg.log, GS_LOG_WARN);
    cr_assert_eq(gs__cfg.enable, 1);
    fflush(stderr);
    cr_assert_stderr_neq_str("");
}

/* Blanks around a value are refused for every type of knob, so " 0" never
** turns the engine off; a sign and leading zeros are part of an integer. */
Test(config, one_grammar_for_every_value)
{
    const struct gs_knob *en = &gs__knobs[GS_KNOB_enable], *wu = &gs__knobs[GS_KNOB_warmup];
    const struct gs_knob *lg = &gs__knobs[GS_KNOB_log], *rp = &gs__knobs[GS_KNOB_report];
    const char *bad[] = {" 0", "0 ", "\t1", "1\n", "", "+", "-", "0x1", "1e3", "1.0"};
    const char *why;
    char longpath[GS_KNOB_PATH_MAX + 1];
    long v;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(gs__knob_parse(en, bad[i], &v, NULL), -1, "GRAPHSHIM=\"%s\" was taken", bad[i]);
    cr_assert_eq(gs__knob_parse(en, " 0", &v, &why), -1);
    cr_assert_not_null(why);
    cr_assert_eq(gs__knob_parse(wu, "+5", &v, NULL), 0);
    cr_assert_eq(v, 5);
    cr_assert_eq(gs__knob_parse(wu, "007", &v, NULL), 0);
    cr_assert_eq(v, 7);
    cr_assert_eq(gs__knob_parse(wu, "99999999999999999999", &v, NULL), -1);
    cr_assert_eq(gs__knob_parse(lg, " debug", &v, NULL), -1);
    cr_assert_eq(gs__knob_parse(lg, "Debug", &v, NULL), 0);
    cr_assert_eq(gs__knob_parse(rp, " r.json", &v, NULL), -1);
    cr_assert_eq(gs__knob_parse(rp, "my report.json", &v, NULL), 0);
    memset(longpath, 'x', GS_KNOB_PATH_MAX);
    longpath[GS_KNOB_PATH_MAX] = '\0';
    cr_assert_eq(gs__knob_parse(rp, longpath, &v, &why), -1, "a path too long to keep was taken");
    longpath[GS_KNOB_PATH_MAX - 1] = '\0';
    cr_assert_eq(gs__knob_parse(rp, longpath, &v, NULL), 0);
}

/* An on/off knob takes 1, on, true, yes and 0, off, false, no, in any case. */
Test(config, on_off_words)
{
    const struct gs_knob *en = &gs__knobs[GS_KNOB_enable];
    const char *on[] = {"1", "on", "ON", "true", "True", "yes", "YES"}, *off[] = {"0", "off", "Off", "false", "NO"};
    const char *bad[] = {"2", "onn", "y", "n", "enable", "-0", "+1"};
    long v;

    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
        cr_assert(gs__knob_parse(en, on[i], &v, NULL) == 0 && v == 1, "GRAPHSHIM=%s", on[i]);
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        cr_assert(gs__knob_parse(en, off[i], &v, NULL) == 0 && v == 0, "GRAPHSHIM=%s", off[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(gs__knob_parse(en, bad[i], &v, NULL), -1, "GRAPHSHIM=%s was taken", bad[i]);
}

/* A value with a blank around it, or set to the empty string, is warned and
** the knob keeps its default. */
Test(config, blank_or_empty_value_keeps_the_default, .init = cr_redirect_stderr)
{
    clear_env();
    setenv("GRAPHSHIM", " 0", 1);
    setenv("GRAPHSHIM_REPORT", "r.json ", 1);
    setenv("GRAPHSHIM_WARMUP", "", 1);
    cr_assert_eq(gs__config_load(), 3);
    cr_assert_eq(gs__cfg.enable, 1);
    cr_assert_eq(gs__cfg.warmup, 2);
    cr_assert_eq(gs__cfg.report, 0);
    cr_assert_str_empty(gs__cfg.path[GS_KNOB_report]);
}

/* A value in a message is one line, whatever it holds, and a long one is cut
** with "..." at a bound. */
Test(config, quoted_values_stay_on_one_line)
{
    char q[GS_QUOTE_LEN], big[4000];

    cr_assert_str_eq(gs__quote("a\nb\"c\\d\te\x1b", q), "a\\nb\\\"c\\\\d\\te\\x1b");
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    gs__quote(big, q);
    cr_assert_eq(strlen(q), GS_QUOTE_MAX + 3);
    cr_assert_str_eq(q + GS_QUOTE_MAX, "...");
    memset(big, '\n', sizeof big - 1);
    gs__quote(big, q);
    cr_assert_leq(strlen(q), GS_QUOTE_MAX + 3);
    cr_assert_null(strchr(q, '\n'));
}

Test(config, paths_expand_pid_rank_and_percent)
{
    char out[64], want[64];

    unsetenv("OMPI_COMM_WORLD_RANK"), unsetenv("SLURM_PROCID"), unsetenv("PMI_RANK");
    setenv("RANK", "7", 1);
    snprintf(want, sizeof want, "t.%ld.7.%%.%%q", (long)getpid());
    cr_assert_eq(gs__path_expand("t.%p.%r.%%.%q", out, sizeof out), 0);
    cr_assert_str_eq(out, want);
    unsetenv("RANK");
    cr_assert_eq(gs__path_expand("%r", out, sizeof out), 0);
    cr_assert_str_eq(out, "x");
    cr_assert_eq(gs__path_expand("0123456789", out, 10), -1, "a path that does not fit was cut");
    cr_assert_eq(gs__path_expand("012345678", out, 10), 0);
    cr_assert(gs__path_is_stderr("-") && gs__path_is_stderr("stderr") && !gs__path_is_stderr("/dev/stderr"));
}

/* The committed file path equals what command prints. */
static void doc_matches(const char *command, const char *path)
{
    FILE *gen = popen(command, "r");
    FILE *doc = fopen(path, "r");
    char a[4096], b[4096];
    int line = 0;

    cr_assert_not_null(gen);
    cr_assert_not_null(doc, "%s is missing: run make docs", path);
    for (;;) {
        char *x = fgets(a, sizeof a, gen), *y = fgets(b, sizeof b, doc);
        line++;
        if (!x && !y)
            break;
        cr_assert(x && y && strcmp(a, b) == 0, "%s differs from its table at line %d: run make docs", path, line);
    }
    pclose(gen);
    fclose(doc);
}

Test(config, docs_match_the_table)
{
    doc_matches(BUILD_DIR "/knobs_doc", "docs/knobs.md");
}

Test(config, names_doc_matches_the_lists)
{
    doc_matches(BUILD_DIR "/knobs_doc names", "docs/names.md");
}
