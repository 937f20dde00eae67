/*
** test_config.c: the knob table and its parsing.
*/
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../policy/config.h"

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

Test(config, docs_match_the_table)
{
    FILE *gen = popen(BUILD_DIR "/knobs_doc", "r");
    FILE *doc = fopen("docs/knobs.md", "r");
    char a[4096], b[4096];
    int line = 0;

    cr_assert_not_null(gen);
    cr_assert_not_null(doc, "docs/knobs.md is missing: run make docs");
    for (;;) {
        char *x = fgets(a, sizeof a, gen), *y = fgets(b, sizeof b, doc);
        line++;
        if (!x && !y)
            break;
        cr_assert(x && y && strcmp(a, b) == 0, "docs/knobs.md differs from the table at line %d: run make docs",
                  line);
    }
    pclose(gen);
    fclose(doc);
}
