/*
** run.c: running a test program with and without graphshim (see run.h).
*/
#define _GNU_SOURCE
#include "run.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The suite's scratch folder, in $TMPDIR or /tmp: made before the first test,
** in the runner, whose tests' processes inherit its name in SCRATCH_ENV; removed
** with all the runs' folders in it after the last test, whether the tests passed
** or not. */
#define SCRATCH_ENV "GS_TEST_SCRATCH"
static char scratch[PATH_MAX];

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    const char *tmp = getenv("TMPDIR");

    (void)set;
    snprintf(scratch, sizeof scratch, "%s/gs-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(scratch))
        setenv(SCRATCH_ENV, scratch, 1);
    else
        scratch[0] = '\0';
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    if (scratch[0])
        nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static char *subst(const char *s, const char *dir)
{
    char *out = malloc(strlen(s) + 16 * strlen(dir) + 1), *o = out;
    for (; *s; s++) {
        if (*s == '@') {
            strcpy(o, dir);
            o += strlen(dir);
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

/* Does env (NULL-terminated "NAME=value") set the variable of assignment e? */
static int overridden(const char *e, const char *const *env)
{
    size_t n = strcspn(e, "=");
    for (int i = 0; env && env[i]; i++)
        if (strncmp(env[i], e, n + 1) == 0)
            return 1;
    return 0;
}

void run_prog(struct run *r, int shim, const char *const *env, const char *const *argv, int timeout_s)
{
    char path[256];
    pid_t pid;
    int st;

    memset(r, 0, sizeof *r);
    if (getenv(SCRATCH_ENV))
        snprintf(r->dir, sizeof r->dir, "%s/XXXXXX", getenv(SCRATCH_ENV));
    else
        snprintf(r->dir, sizeof r->dir, "%s/gs-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(r->dir))
        abort();
    pid = fork();
    if (pid == 0) {
        char *envp[256];
        int n = 0;
        for (char **e = environ; *e && n < 200; e++)
            if (strncmp(*e, "GRAPHSHIM", 9) != 0 && strncmp(*e, "LD_PRELOAD=", 11) != 0 &&
                strncmp(*e, "LD_LIBRARY_PATH=", 16) != 0 && strncmp(*e, "FAKECUDA", 8) != 0 && !overridden(*e, env))
                envp[n++] = *e;
        envp[n++] = "LD_LIBRARY_PATH=" BUILD_DIR "/fakecuda";
        if (shim == RUN_SHIM || shim == RUN_TEST_BUILD) {
            envp[n++] = "LD_PRELOAD=" BUILD_DIR "/test/libgraphshim.so";
            /* The fake driver's virtual clock, unless env names another:
            ** what graphshim decides by time counts the same on a busy
            ** machine (docs/testing.md). */
            if (!overridden("GRAPHSHIM_TEST_CLOCK=", env))
                envp[n++] = "GRAPHSHIM_TEST_CLOCK=fake";
            if (!overridden("FAKECUDA_CLOCK=", env))
                envp[n++] = "FAKECUDA_CLOCK=virtual";
        } else if (shim == RUN_USERS_LIB) {
            envp[n++] = "LD_PRELOAD=" BUILD_DIR "/libgraphshim.so";
        }
        for (int i = 0; env && env[i] && n < 254; i++)
            if (!overridden(env[i], env + i + 1)) /* a later assignment of the name wins */
                envp[n++] = subst(env[i], r->dir);
        envp[n] = NULL;
        snprintf(path, sizeof path, "%s/stdout", r->dir);
        dup2(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
        snprintf(path, sizeof path, "%s/stderr", r->dir);
        dup2(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
        alarm((unsigned)timeout_s);
        execve(argv[0], (char *const *)argv, envp);
        _exit(127);
    }
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = run_file(r, "stdout");
    r->err = run_file(r, "stderr");
    if (!r->out)
        r->out = strdup("");
    if (!r->err)
        r->err = strdup("");
}

int run_lib(const char *const *env)
{
    for (int i = 0; env && env[i]; i++)
        if (strncmp(env[i], "GRAPHSHIM_TEST_", 15) == 0)
            return RUN_TEST_BUILD;
    return RUN_SHIM;
}

char *run_file(const struct run *r, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    return read_all(path);
}

double total_f(const char *text, const char *key)
{
    char pat[64];
    const char *t = text ? strstr(text, "\"totals\"") : NULL, *p;

    snprintf(pat, sizeof pat, "\"%s\": ", key);
    p = strstr(t ? t : text ? text : "", pat);
    return p ? strtod(p + strlen(pat), NULL) : -1;
}

long total(const char *text, const char *key)
{
    return (long)total_f(text, key);
}

int count_lines(const char *text, const char *needle)
{
    int n = 0;
    const char *line = text;

    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (memmem(line, len, needle, strlen(needle)))
            n++;
        line = end ? end + 1 : NULL;
    }
    return n;
}

char *drop_lines(const char *text, const char *const *first_words)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    const char *line = text;

    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        int drop = 0;
        for (int i = 0; first_words[i]; i++) {
            size_t w = strlen(first_words[i]);
            if (strncmp(line, first_words[i], w) == 0 && (line[w] == ' ' || line[w] == '\n'))
                drop = 1;
        }
        if (!drop) {
            memcpy(o, line, len);
            o += len;
        }
        line += len;
    }
    *o = '\0';
    return out;
}

void run_free(struct run *r)
{
    char cmd[128];
    free(r->out);
    free(r->err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    if (system(cmd) != 0) {
        /* A leftover scratch directory is harmless. */
    }
}
