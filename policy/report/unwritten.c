/*
** unwritten.c: a word at exit where a report was asked for and none was written
** because no process of the run made a CUDA driver call: graphshim starts at the
** first one, so without it there is nothing to report, and the user would
** otherwise find no file and no reason.
**
** It runs at the library's unloading, in a process where graphshim never
** started (a started one writes its report at exit, report.c).  Only the first
** process of the run speaks, once every process it waited for is done: one
** whose parent does not carry the report knob.  It looks for any report of the
** run under the knob's name, %p and %r standing for any text.
*/
#define _GNU_SOURCE
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../driver/driver.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/run.h"

/* Writes into out (len bytes) a glob pattern of the report knob's value: the
** pattern's own characters escaped, %p and %r as *, %% as %.  Returns 0, or -1
** if it does not fit. */
static int report_pattern(const char *value, char *out, size_t len)
{
    size_t n = 0;

    for (const char *v = value; *v; v++) {
        char put[3] = {*v, 0, 0};
        if (v[0] == '%' && (v[1] == 'p' || v[1] == 'r'))
            put[0] = '*', v++;
        else if (v[0] == '%' && v[1] == '%')
            v++;
        else if (strchr("*?[\\", *v))
            put[0] = '\\', put[1] = *v;
        if (n + strlen(put) >= len)
            return -1;
        memcpy(out + n, put, strlen(put));
        n += strlen(put);
    }
    out[n] = '\0';
    return 0;
}

/* Did a process of run r write a report the pattern names? */
static int run_wrote_one(const struct gs_run *r, const char *pattern)
{
    glob_t g;
    int found = 0;

    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc && !found; i++) {
        struct stat st;
        found = lstat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode) && gs__run_wrote(r, g.gl_pathv[i], &st);
    }
    globfree(&g);
    return found;
}

__attribute__((destructor)) static void unwritten_at_exit(void)
{
    const char *value = getenv(gs__knobs[GS_KNOB_report].name), *lv = getenv(gs__knobs[GS_KNOB_log].name);
    char pattern[2 * GS_KNOB_TEXT_MAX], q[GS_QUOTE_LEN];
    long level = GS_LOG_WARN, set;
    struct gs_run r;

    if (atomic_load_explicit(&gs__ready, memory_order_acquire) || !value || !*value)
        return;
    if (lv && *lv)
        gs__knob_parse(&gs__knobs[GS_KNOB_log], lv, &level, NULL);
    if (level < GS_LOG_WARN || gs__knob_parse(&gs__knobs[GS_KNOB_report], value, &set, NULL) != 0 ||
        gs__path_is_stderr(value) || !gs__run_begins_here(value) || report_pattern(value, pattern, sizeof pattern) != 0)
        return;
    r = gs__run_walk(value);
    if (run_wrote_one(&r, pattern))
        return;
    gs__warn("%s=%s: no report was written, as no process of this run made a CUDA driver call (graphshim "
             "starts at the first one)",
             gs__knobs[GS_KNOB_report].name, gs__quote(value, q));
}
