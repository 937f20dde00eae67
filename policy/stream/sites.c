/*
** sites.c: where the program's calls cut its graphs (see sites.h).
**
** Divided into: the samples (a bail's stack, kept whole and counted where the
** same stack comes again), naming a sample's call site at exit (the first
** frame outside graphshim and the CUDA libraries), and the sites summed for
** the report.
*/
#define _GNU_SOURCE
#include "sites.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/key.h"
#include "../graph/learner.h"
#include "stream.h"

atomic_uint gs__site_seen[GS_NBAIL];

/* --- Samples ------------------------------------------------------------------ */

#define FRAMES 24  /* return addresses kept of a stack */
#define STACKS 512 /* distinct stacks kept (a further one goes unnamed; the bails still count it) */

struct stack {
    uint64_t hash;
    int reason, n;
    void *pc[FRAMES];
    char kernel[2][128];
    uint64_t count, samples;
};

static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stack *stacks; /* STACKS of them, made at the first sample */
static int nstacks;

/* backtrace() loads libgcc_s at its first call: done at load, not under a
** stream's lock at the first bail. */
__attribute__((constructor)) static void sites_warm(void)
{
    void *pc[2];
    backtrace(pc, 2);
}

static uint64_t hash_of(void *const *pc, int n, int reason)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)reason;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)pc[i]) * 1099511628211ull;
    return h;
}

/* The kernel's name as the driver gives it into out (len bytes); "" where it
** gives none. */
static void kernel_name(CUfunction f, char *out, size_t len)
{
    snprintf(out, len, "%s", gs__kernel_name(f));
}

/* Names the last two kernels s holds in its tree, into st. */
static void held_kernels(const struct gs_stream *s, struct stack *st)
{
    const struct gs_node *n = s->holding == GS_HOLD_TRIE ? s->cur : NULL;

    for (int k = 0; k < 2 && n && n->depth > 0; n = n->parent)
        if (n->key.kind == GS_OP_LAUNCH)
            kernel_name(n->key.f, st->kernel[k++], sizeof st->kernel[0]);
}

void gs__site_sample(struct gs_stream *s, int reason, unsigned weight)
{
    void *pc[FRAMES + 1];
    int n = backtrace(pc, FRAMES + 1) - 1; /* pc[0] is this function */
    uint64_t h = hash_of(pc + 1, n, reason);
    struct stack *st = NULL;

    pthread_mutex_lock(&sites_lock);
    if (!stacks)
        stacks = calloc(STACKS, sizeof *stacks);
    for (int i = 0; stacks && i < nstacks && !st; i++)
        if (stacks[i].hash == h && stacks[i].reason == reason && stacks[i].n == n &&
            memcmp(stacks[i].pc, pc + 1, (size_t)n * sizeof *pc) == 0)
            st = &stacks[i];
    if (!st && stacks && nstacks < STACKS) {
        st = &stacks[nstacks++];
        st->hash = h, st->reason = reason, st->n = n;
        memcpy(st->pc, pc + 1, (size_t)n * sizeof *pc);
        held_kernels(s, st);
    }
    if (st) {
        st->count += weight;
        st->samples++;
    }
    pthread_mutex_unlock(&sites_lock);
}

/* --- Naming a site ------------------------------------------------------------- */

/* Is the frame's file or function graphshim's or a CUDA library's: the
** driver (libcuda), the runtime (libcudart, or a static one in the program:
** cuda* and __cuda* functions), or a driver entry point (cu + a capital)? */
static int inside_cuda(const Dl_info *d)
{
    const char *file = d->dli_fname ? strrchr(d->dli_fname, '/') : NULL, *sym = d->dli_sname;

    file = file ? file + 1 : d->dli_fname ? d->dli_fname : "";
    if (strncmp(file, "libgraphshim", 12) == 0 || strncmp(file, "libcuda", 7) == 0)
        return 1;
    return sym && (strncmp(sym, "cuda", 4) == 0 || strncmp(sym, "__cuda", 6) == 0 ||
                   (sym[0] == 'c' && sym[1] == 'u' && sym[2] >= 'A' && sym[2] <= 'Z'));
}

/* name demangled into out where the process has libstdc++'s demangler (a C++
** program, PyTorch): looked up, never linked; by dlvsym, as graphshim's own
** dlsym answers the program's lookups; in the global scope, or in a libstdc++
** already loaded without it (Python loads PyTorch's libraries locally). */
static void demangled(const char *name, char *out, size_t len)
{
    typedef char *(*demangler)(const char *, char *, size_t *, int *);
    demangler demangle = (demangler)dlvsym(RTLD_DEFAULT, "__cxa_demangle", "CXXABI_1.3");
    void *h;
    char *d = NULL;

    if (!demangle && (h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD))) {
        demangle = (demangler)dlvsym(h, "__cxa_demangle", "CXXABI_1.3");
        dlclose(h);
    }
    int status = -1;

    if (demangle && name[0] == '_' && name[1] == 'Z')
        d = demangle(name, NULL, NULL, &status);
    snprintf(out, len, "%s", d && status == 0 ? d : name);
    free(d);
}

/* Names st's site into site: its function and file. */
static void name_site(const struct stack *st, struct gs_site *site)
{
    Dl_info d;

    snprintf(site->site, sizeof site->site, "?");
    snprintf(site->object, sizeof site->object, "?");
    for (int i = 0; i < st->n; i++) {
        /* A return address is past its call: one byte back is inside it. */
        if (!dladdr((char *)st->pc[i] - 1, &d) || inside_cuda(&d))
            continue;
        const char *file = d.dli_fname ? strrchr(d.dli_fname, '/') : NULL;
        snprintf(site->object, sizeof site->object, "%s", file ? file + 1 : d.dli_fname ? d.dli_fname : "?");
        if (d.dli_sname)
            demangled(d.dli_sname, site->site, sizeof site->site);
        else
            snprintf(site->site, sizeof site->site, "%s+0x%lx", site->object,
                     (unsigned long)((char *)st->pc[i] - (char *)d.dli_fbase));
        return;
    }
}

/* --- The sites, summed ---------------------------------------------------------- */

static int by_reason_count(const void *a, const void *b)
{
    const struct gs_site *x = a, *y = b;

    if (x->reason != y->reason)
        return x->reason - y->reason;
    return (x->count < y->count) - (x->count > y->count);
}

int gs__sites_collect(struct gs_site **out)
{
    struct gs_site *sites;
    int n = 0;

    *out = NULL;
    pthread_mutex_lock(&sites_lock);
    sites = nstacks ? calloc((size_t)nstacks, sizeof *sites) : NULL;
    for (int i = 0; sites && i < nstacks; i++) {
        struct gs_site one = {.reason = stacks[i].reason, .count = stacks[i].count, .samples = stacks[i].samples};
        int k;
        name_site(&stacks[i], &one);
        for (int j = 0; j < 2; j++)
            demangled(stacks[i].kernel[j], one.kernel[j], sizeof one.kernel[j]);
        /* Stacks that differ above or below the site are one site. */
        for (k = 0; k < n; k++)
            if (sites[k].reason == one.reason && strcmp(sites[k].site, one.site) == 0 &&
                strcmp(sites[k].object, one.object) == 0)
                break;
        if (k < n) {
            sites[k].count += one.count;
            sites[k].samples += one.samples;
        } else {
            sites[n++] = one;
        }
    }
    pthread_mutex_unlock(&sites_lock);
    if (n > 1)
        qsort(sites, (size_t)n, sizeof *sites, by_reason_count);
    *out = sites;
    return n;
}
