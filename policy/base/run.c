/*
** run.c: this run, the processes one command started (see run.h): its name and
** start, read from /proc, and whether a report is its own.
*/
#define _GNU_SOURCE
#include "run.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "config.h"

/* Process pid's start, in clock ticks since boot, and its parent.  Returns 0, or
** -1 if /proc does not say. */
static int proc_start(pid_t pid, unsigned long long *start, pid_t *ppid)
{
    char path[64], buf[1024];
    const char *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* The command name may hold blanks and parentheses: the fields follow the
    ** last ')'. */
    if (!(p = strrchr(buf, ')')))
        return -1;
    return sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", ppid,
                  start) == 2 ? 0 : -1;
}

/* Does process pid have the variable assignment want ("NAME=value") in the
** environment it was started with? */
static int proc_has_env(pid_t pid, const char *want)
{
    char path[64], *buf = NULL;
    size_t len = 0, cap = 0, wlen = strlen(want) + 1;
    int fd, found = 0;

    snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    for (;;) {
        ssize_t n;
        if (len + 4096 > cap) {
            char *b = cap < (8u << 20) ? realloc(buf, cap = cap ? 2 * cap : 65536) : NULL;
            if (!b)
                break;
            buf = b;
        }
        n = read(fd, buf + len, cap - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    for (size_t i = 0; i < len; i += strnlen(buf + i, len - i) + 1)
        if (len - i >= wlen && memcmp(buf + i, want, wlen) == 0) /* the NUL too */
            found = 1;
    free(buf);
    return found;
}

/* When this process started, as near as it can tell: graphshim's constructor
** calls gs__run_note_start.  Zero if it did not. */
static struct timespec self_start;

static int not_before(struct timespec a, struct timespec b)
{
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

/* Process start in clock ticks since boot, on the clock of file times, rounded
** down to the tick. */
static struct timespec ticks_to_real(unsigned long long ticks)
{
    struct timespec real, boot, t;
    long hz = sysconf(_SC_CLK_TCK);
    double at;

    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    at = (double)real.tv_sec + real.tv_nsec * 1e-9 - ((double)boot.tv_sec + boot.tv_nsec * 1e-9) +
         (double)ticks / (double)(hz > 0 ? hz : 100);
    t.tv_sec = (time_t)at;
    t.tv_nsec = (long)((at - (double)t.tv_sec) * 1e9);
    return t;
}

/* A file's time comes from the kernel's coarse clock, up to one of its ticks
** behind the time it was written.  A start known only to a clock tick (an
** ancestor's, or /proc's) is moved back by that much, so that a file another
** process of the run wrote moments after the start counts as this run's. */
static struct timespec coarse_slack(struct timespec t)
{
    struct timespec res;

    if (clock_getres(CLOCK_REALTIME_COARSE, &res) != 0 || res.tv_sec > 0)
        res = (struct timespec){0, 10 * 1000 * 1000};
    t.tv_nsec -= res.tv_nsec;
    if (t.tv_nsec < 0) {
        t.tv_nsec += 1000000000L;
        t.tv_sec--;
    }
    return t;
}

/* The run of knob's value (the report knob's, but for GRAPHSHIM_CHECK's gate):
** walks /proc up from this process.  A walk cut short (an ancestor gone
** between two reads) leaves the name unknown. */
static struct gs_run walk_knob(int knob, const char *value)
{
    char want[GS_KNOB_TEXT_MAX + 32];
    unsigned long long start = 0;
    struct gs_run r = {self_start, ""};
    pid_t pid = getpid(), ppid;
    int have = proc_start(pid, &start, &ppid) == 0, ticked = 0;

    if (have)
        snprintf(r.id, sizeof r.id, "%ld:%llu", (long)pid, start);
    if (!r.start.tv_sec) {
        /* Without a start of its own, /proc's; without that either, any file
        ** counts as this run's, and none is replaced. */
        if (!have)
            return r;
        r.start = ticks_to_real(start);
        ticked = 1;
    }
    snprintf(want, sizeof want, "%s=%s", gs__knobs[knob].name, value);
    for (int depth = 0; have && depth < 64 && ppid > 1 && proc_has_env(ppid, want); depth++) {
        struct timespec a;
        pid = ppid;
        if (proc_start(pid, &start, &ppid) != 0) {
            r.id[0] = '\0';
            break;
        }
        snprintf(r.id, sizeof r.id, "%ld:%llu", (long)pid, start);
        a = ticks_to_real(start);
        if (not_before(r.start, a)) {
            r.start = a;
            ticked = 1;
        }
    }
    if (ticked)
        r.start = coarse_slack(r.start);
    return r;
}

static struct gs_run walk(const char *value)
{
    return walk_knob(GS_KNOB_report, value);
}

/* The run as it was at graphshim's first driver call, while the ancestors were
** there (a parent may exit before its worker writes), for the knob's value then. */
static struct gs_run first_run;
static char first_value[GS_KNOB_TEXT_MAX];

void gs__run_note_start(void)
{
    clock_gettime(CLOCK_REALTIME, &self_start);
}

void gs__run_note_ancestors(void)
{
    const char *v = gs__cfg.path[GS_KNOB_report];

    if (gs__cfg.report && !gs__path_is_stderr(v)) {
        first_run = walk(v);
        memcpy(first_value, v, strlen(v) + 1);
    }
}

struct gs_run gs__run_walk(const char *value)
{
    return walk(value);
}

struct gs_run gs__run_walk_knob(int knob, const char *value)
{
    return walk_knob(knob, value);
}

int gs__run_begins_here_knob(int knob, const char *value)
{
    char want[GS_KNOB_TEXT_MAX + 32];

    snprintf(want, sizeof want, "%s=%s", gs__knobs[knob].name, value);
    return !proc_has_env(getppid(), want);
}

int gs__run_begins_here(const char *value)
{
    return gs__run_begins_here_knob(GS_KNOB_report, value);
}

struct gs_run gs__run_of(void)
{
    const char *value = gs__cfg.path[GS_KNOB_report];

    return first_value[0] && strcmp(first_value, value) == 0 ? first_run : walk(value);
}

/* The line of this process: its own "PID:START" and each ancestor's, up to
** GS_LINE of them, in line[]; returns how many (0 if /proc does not say). */
#define GS_LINE 64
static int own_line(char line[][48])
{
    unsigned long long start;
    pid_t pid = getpid(), ppid;
    int n = 0;

    while (n < GS_LINE && pid > 1 && proc_start(pid, &start, &ppid) == 0) {
        snprintf(line[n++], 48, "%ld:%llu", (long)pid, start);
        pid = ppid;
    }
    return n;
}

/* Appends to out (len bytes, holding n) " PID:START" for each process alive now
** that started within the last second and is neither this process nor one of
** its ancestors, as many as fit whole. */
static void add_recent(char *out, size_t len, size_t n)
{
    long hz = sysconf(_SC_CLK_TCK);
    unsigned long long now, start;
    char line[GS_LINE][48], word[48];
    int nline = own_line(line);
    struct timespec boot;
    DIR *proc;
    struct dirent *e;

    if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0 || !(proc = opendir("/proc")))
        return;
    now = (unsigned long long)boot.tv_sec * (unsigned long long)hz +
          (unsigned long long)boot.tv_nsec * (unsigned long long)hz / 1000000000ULL;
    while ((e = readdir(proc)) != NULL) {
        pid_t pid = (pid_t)atol(e->d_name), pp;
        int m, mine = 0;
        if (pid <= 0 || proc_start(pid, &start, &pp) != 0 || start + (unsigned long long)hz < now)
            continue;
        snprintf(word, sizeof word, "%ld:%llu", (long)pid, start);
        for (int i = 0; i < nline && !mine; i++)
            mine = strcmp(line[i], word) == 0;
        if (mine)
            continue;
        m = snprintf(out + n, len - n, " %s", word);
        if (m < 0 || (size_t)m >= len - n) {
            out[n] = '\0';
            break;
        }
        n += (size_t)m;
    }
    closedir(proc);
}

void gs__run_stamp(const struct gs_run *r, char *out, size_t len)
{
    struct timespec now;
    int n;

    clock_gettime(CLOCK_REALTIME, &now);
    n = snprintf(out, len, "%s@%lld.%09ld", r->id, (long long)now.tv_sec, now.tv_nsec);
    if (n > 0 && (size_t)n < len)
        add_recent(out, len, (size_t)n);
}

/* Does the stamp's list of processes (after its time) name this process or
** one of its ancestors?  The writer leaves out its own line, so an ancestor the
** two share (a shell that ran one after the other) is never named. */
static int names_line(const char *list)
{
    char line[GS_LINE][48], word[48];
    int nline = own_line(line), used;

    while (sscanf(list, " %47s%n", word, &used) == 1) {
        for (int i = 0; i < nline; i++)
            if (strcmp(word, line[i]) == 0)
                return 1;
        list += used;
    }
    return 0;
}

/* Another run's name: an earlier run's report, unless written after this
** process started (less the file clock's slack): a sibling's (run.h). */
int gs__run_wrote(const struct gs_run *r, const char *path, const struct stat *st)
{
    char name[GS_RUN_STAMP_LEN], *at;
    ssize_t n = r->id[0] ? lgetxattr(path, GS_RUN_XATTR, name, sizeof name - 1) : -1;
    struct timespec written = st->st_mtim, since = coarse_slack(self_start);
    long long sec;
    long nsec;

    if (n >= 0) {
        name[n] = '\0';
        /* The stamp's own time, to the nanosecond: a run that ended moments before
        ** this one started is an earlier one (by the file's time, within a tick of
        ** the coarse clock, it counted as this run's). */
        if ((at = strchr(name, '@')) != NULL) {
            *at = '\0';
            if (sscanf(at + 1, "%lld.%ld", &sec, &nsec) == 2) {
                written = (struct timespec){(time_t)sec, nsec};
                since = self_start;
            }
            /* Written while this process, or the line it comes from, was
            ** there, though before graphshim was loaded in it: the two were
            ** started at once. */
            if (strchr(at + 1, ' ') && names_line(strchr(at + 1, ' ')))
                return 1;
        }
        return strcmp(name, r->id) == 0 || (self_start.tv_sec && not_before(written, since));
    }
    return not_before(st->st_mtim, r->start);
}
