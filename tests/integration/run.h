/*
** run.h: running a test program with and without graphshim, for the criterion
** integration tests.
*/
#ifndef GS_TEST_RUN_H
#define GS_TEST_RUN_H

#include <stddef.h>

/* Directory of the build (compiled in as BUILD_DIR). */
#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

struct run {
    int status;      /* exit status, or 128+signal */
    char *out;       /* stdout, NUL-terminated */
    char *err;       /* stderr */
    char dir[64];    /* scratch directory of this run: logs, trace, report */
};

/* What run_prog preloads: nothing; graphshim as the tests check it, which is
** the test build (make test-lib: its invariants asserted, base/assert.h, and
** the switches that exist only to prove graphshim, such as
** GRAPHSHIM_TEST_DROP_RULE and GRAPHSHIM_TEST_FAULT), named RUN_TEST_BUILD too
** where a test sets such a switch; or the library users run, where a test is
** about that library itself (it has no such switch). */
enum { RUN_BARE, RUN_SHIM, RUN_TEST_BUILD, RUN_USERS_LIB };

/* Runs argv with the fake driver on the library path, plus the environment
** assignments in env (NULL-terminated "NAME=value"; "@" in a value is replaced
** by the run's scratch directory; they replace the variables of the test's own
** environment of the same name, and a later one of a name replaces an earlier).
** shim: what is preloaded (RUN_BARE, RUN_SHIM or RUN_TEST_BUILD; an LD_PRELOAD
** in env does not replace it).  The run is killed after timeout_s seconds. */
void run_prog(struct run *r, int shim, const char *const *env, const char *const *argv, int timeout_s);

/* RUN_TEST_BUILD where env (as run_prog's) sets a switch of the test build (a
** GRAPHSHIM_TEST_ variable), else RUN_SHIM. */
int run_lib(const char *const *env);

/* Contents of a file in the run's directory (NULL if missing), NUL-terminated. */
char *run_file(const struct run *r, const char *name);

/* The number after "key": in a JSON report: in its totals when text has a
** "totals" object, else the first in text (a part of a report, such as its
** "bails" object); -1 if there is none.  E.g. total(report, "replays"). */
long total(const char *text, const char *key);
/* The same, not rounded: total_f(report, "hit_rate"). */
double total_f(const char *text, const char *key);

/* Lines of text that contain needle. */
int count_lines(const char *text, const char *needle);

/* Removes the lines whose first word is one of the NULL-terminated words;
** returns a new string. */
char *drop_lines(const char *text, const char *const *first_words);

void run_free(struct run *r);

#endif
