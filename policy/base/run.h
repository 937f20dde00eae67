/*
** run.h: this run, the processes one command started, which may each write a
** report to the same name: a launcher, torchrun and its workers, a wrapper.
**
** The run is the oldest process in the chain from this one up through its
** ancestors that have the report knob's value in their environment.  Its name,
** "PID:START" (START in clock ticks since boot), goes with the report as the
** extended attribute GS_RUN_XATTR: a report bearing this run's name is a
** sibling's, one bearing another's an earlier run's, unless it was written
** after this process started (a sibling whose walk up ended short of this run's
** oldest process: a launcher that set the knob after it started, the first
** process of a container, one gone), which the attribute's time tells.  The
** walk is made at graphshim's first driver call, while the ancestors are there.
** Where a file bears no name (a file system without user attributes), the time
** it was written tells:
** the run began at the start of that process (this process's own start is the
** moment graphshim was loaded, after any report an earlier process wrote before
** this one was started; an ancestor's is its start rounded down to a clock tick,
** less the file clock's slack): when in doubt a file counts as this run's.
*/
#ifndef GS_RUN_H
#define GS_RUN_H

#include <sys/stat.h>
#include <time.h>

#define GS_RUN_XATTR "user.graphshim.run"

struct gs_run {
    struct timespec start; /* on the clock of file times; zero: not known */
    char id[48];           /* its name, or "" where /proc does not tell */
};

/* Notes the time this process started (graphshim's constructor calls it). */
void gs__run_note_start(void);

/* Walks up to this run's oldest process now, where a report is asked for
** (graphshim's first driver call): the ancestors may be gone at exit. */
void gs__run_note_ancestors(void);

/* This process's run. */
struct gs_run gs__run_of(void);

/* The run of a process whose report knob has value, walked up now: for one
** where graphshim never started (gs__run_of needs the knobs read). */
struct gs_run gs__run_walk(const char *value);

/* Does the run of value begin at this process: was its parent started without
** GRAPHSHIM_REPORT=value? */
int gs__run_begins_here(const char *value);

/* The same two for another knob's value (GRAPHSHIM_CHECK's: the processes that
** one gate judges). */
struct gs_run gs__run_walk_knob(int knob, const char *value);
int gs__run_begins_here_knob(int knob, const char *value);

/* The value of GS_RUN_XATTR for a report run r writes now: its name, the time,
** and the processes alive now that started within the last second, but this
** one and its ancestors (as many as fit), "NAME@SECONDS.NANOSECONDS PID:START
** PID:START..." (GS_RUN_STAMP_LEN bytes at most).  A reader named there, or
** whose ancestor is, was on its way when the report was written, so the report
** is never an earlier run's to it: of two short processes started at once, the
** one that writes before graphshim is loaded in the other keeps its report,
** while runs one after the other from one shell (their shared ancestors left
** out) still replace it. */
#define GS_RUN_STAMP_LEN 512
void gs__run_stamp(const struct gs_run *r, char *out, size_t len);

/* Did run r write the file at path, whose status is st?  By the name its
** attribute bears, or its list of processes naming this one's line, and where
** neither says so, by the time it gives (older reports' attribute has none: the
** file's time, less the coarse clock's tick). */
int gs__run_wrote(const struct gs_run *r, const char *path, const struct stat *st);

#endif
