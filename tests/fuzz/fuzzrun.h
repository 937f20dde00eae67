/*
** fuzzrun.h: what the runner's parts share (fuzzrun.c runs and compares;
** fuzz_settings.c holds the knob settings and draws the injected faults).
*/
#ifndef FUZZRUN_H
#define FUZZRUN_H

#include <stddef.h>

/* Settings' flags. */
enum {
    /* the program runs differently under the setting's FUZZ_ and FAKECUDA_
    ** variables: its plain run has them too, and is the one compared */
    SET_OWN_BASE = 1,
    /* the program may end by a signal (FUZZ_END): its status is 128 + the
    ** signal in both runs, graphshim's report must still be written whole,
    ** and where it ended so, the fake driver wrote no counts to judge */
    SET_SIGNAL_END = 2,
    /* graphshim's clock is the host's: where its watchdog fires is chance,
    ** and a difference may not come again */
    SET_HOST_CLOCK = 4,
};

struct setting {
    const char *name;
    const char *env[7];
    int flags;
};

/* The settings every seed runs under, with the shim; the first
** NINJECT_SETTINGS are those an injected run draws from. */
enum { NSETTINGS = 17, NINJECT_SETTINGS = 8 };
extern const struct setting settings[NSETTINGS];

/* A call of graphshim's own that an injected run fails (fuzz_settings.c). */
struct shim_call {
    const char *entry;
    int report, open;
};
enum { NSHIM = 32, NSHARED = 3 };
extern const struct shim_call shim_calls[NSHIM], shared_calls[NSHARED];

/* The runner's options that the parts read. */
extern int g_timeout, g_inject_all;

/* FAKECUDA_PENDING for every run of seed, into buf; NULL for none. */
const char *pending_env(long seed, char *buf, size_t len);

/* The call log of a plain run of the program argv, made at the first need;
** text freed by the caller. */
struct plain_log {
    const char *const *argv;
    char *text;
};

/* Draws injected run k of seed: its setting (index into settings), its fault
** (FAKECUDA_FAIL, into spec) and the row of shim_calls / shared_calls it fails
** (shared rows after NSHIM).  threads: the program's threads; log: its call
** log, for the shared rows. */
int draw_fault(long seed, int k, int threads, struct plain_log *log, char *spec, size_t len, int *setting);

/* One injected run in ALLOC_EVERY fails graphshim's own allocations instead
** (GRAPHSHIM_TEST_FAIL_ALLOC, interpose/test_alloc.c): spec "alloc:CALLS",
** the row ALLOC_ROW.  draw_alloc_fault draws CALLS and the setting. */
enum { ALLOC_EVERY = 4, ALLOC_ROW = -1 };
int draw_alloc_fault(long seed, int k, char *spec, size_t len, int *setting);
/* And one in ALLOC_EVERY runs graphshim over a driver without 1 to 3 of the
** entry points it can do without (GRAPHSHIM_TEST_NO_ENTRY, test_fault.c),
** none that the program calls itself (its call log): spec "noentry:A,B",
** the row NOENTRY_ROW. */
enum { NOENTRY_ROW = -2 };
int draw_noentry_fault(long seed, int k, struct plain_log *log, char *spec, size_t len, int *setting);
/* And one in ALLOC_EVERY (kind OWN_KIND) fails one of graphshim's own calls
** of any entry point, counted apart from the program's calls of it
** (GRAPHSHIM_TEST_OWN_FAIL, interpose/test_own.c): spec
** "own:ENTRY:CALLS:CODE", the row OWN_ROW.  The setting comes first
** (draw_own_setting), then a run of the seed under it with graphshim writes
** its own calls per entry point (GRAPHSHIM_TEST_OWN_COUNTS: counts, "ENTRY N"
** lines), from which draw_own_fault draws; -1 where counts has none to fail
** (the run is then one of draw_fault's).  The loop programs of a quarter of
** the loop settings (not those across streams) are run once more with such a
** fault, drawn from their own run's counts (fuzzrun.c, loop_own_run). */
enum { OWN_KIND = 1, OWN_ROW = -3 };
int draw_own_setting(long seed, int k);
/* leaks: what the setting's memory allows of graphshim's not given back (a
** destroy or free that fails): any, one, or none. */
enum { OWN_LEAKS, OWN_ONE_LEAK, OWN_NO_LEAK };
int draw_own_fault(long seed, int k, const char *counts, int leaks, char *spec, size_t len);
/* The variable that carries an injected run's fault spec, and the spec past
** its prefix. */
const char *fault_var(const char *spec, const char **value);

/* The faults of the programs across streams (fuzz_xinject.c): injected run k
** of seed fails one of graphshim's own calls in a group's paths, drawn from
** the call log of its run with graphshim (log); the FAKECUDA_FAIL into spec.
** Returns the path (xs_paths), or -1 where the log has none of them. */
enum { NXS_PATHS = 10 };
extern const char *const xs_paths[NXS_PATHS];
int xs_draw_fault(long seed, int k, const char *log, char *spec, size_t len);

/* The extra programs across streams a seed runs (fuzzrun.c, --xs-extra): by
** default XS_EXTRA seeds of their domain, which begins at XS_DOMAIN. */
enum { XS_EXTRA = 6, XS_EXTRA_MAX = 64 };
#define XS_DOMAIN (1L << 32)

#endif
