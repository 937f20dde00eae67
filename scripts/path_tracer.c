/*
** path_tracer.c: records every function entry and exit of a library built with
** -finstrument-functions (scripts/path.sh), and writes them at exit to the file
** PATH_TRACE names: one line an event, "> ADDR" or "< ADDR", each address an
** offset into the object that holds it (only libgraphshim.so's are kept), of
** the program's main thread (the library's own threads, its watchdog, are
** left out).
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_EVENTS (1u << 23)

struct ev {
    void *fn;
    int enter;
};

static struct ev *evs;
static size_t nev;

__attribute__((no_instrument_function)) static void add(void *fn, int enter)
{
    if (syscall(SYS_gettid) != getpid())
        return;
    if (!evs)
        evs = malloc(MAX_EVENTS * sizeof *evs);
    if (evs && nev < MAX_EVENTS)
        evs[nev++] = (struct ev){fn, enter};
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    add(fn, 1);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    add(fn, 0);
}

__attribute__((no_instrument_function, destructor(101))) static void dump(void)
{
    const char *path = getenv("PATH_TRACE");
    FILE *f = path ? fopen(path, "w") : NULL;

    if (!f)
        return;
    for (size_t i = 0; i < nev; i++) {
        Dl_info di;
        if (!dladdr(evs[i].fn, &di) || !di.dli_fname || !strstr(di.dli_fname, "libgraphshim"))
            continue;
        fprintf(f, "%c %lx\n", evs[i].enter ? '>' : '<', (unsigned long)((char *)evs[i].fn - (char *)di.dli_fbase));
    }
    fclose(f);
}
