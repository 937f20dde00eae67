/*
** dlopen_tool.c: a preloaded library that interposes dlopen the way tools do
** (compute-sanitizer's injection, for one): on its first call its dlopen looks up
** the next dlsym with dlsym(RTLD_NEXT, "dlsym"), then the next dlopen through it.
** Its lock is not re-entrant: a dlopen that reaches it again from inside that
** lookup would wait forever in the tool; here it exits with 86 instead.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static __thread int looking_up;
static void *(*next_dlopen)(const char *, int);

__attribute__((visibility("default"))) void *dlopen(const char *file, int mode)
{
    if (looking_up) {
        fputs("dlopen_tool: dlopen entered again from inside its own lookup\n", stderr);
        _exit(86);
    }
    if (!next_dlopen) {
        void *(*next_dlsym)(void *, const char *);
        looking_up = 1;
        next_dlsym = (void *(*)(void *, const char *))dlsym(RTLD_NEXT, "dlsym");
        next_dlopen = next_dlsym ? (void *(*)(const char *, int))next_dlsym(RTLD_NEXT, "dlopen") : NULL;
        looking_up = 0;
        if (!next_dlopen) {
            fputs("dlopen_tool: no next dlopen\n", stderr);
            _exit(87);
        }
    }
    return next_dlopen(file, mode);
}
