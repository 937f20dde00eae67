/*
** lookup.c: what a program gets when it asks for a driver entry point.
**
** Three ways in, one answer:
**   - dlsym(handle, "cuXxx") returning an address inside libcuda,
**   - cuGetProcAddress / cuGetProcAddress_v2 (name, version, flags),
**   - the exported symbols themselves (programs linked with -lcuda).
** A hooks.def row gets its wrapper; any other driver entry point gets a
** trampoline slot of class UNCLASSIFIED, so nothing escapes the guard.
**
** This file is divided into: the name tables (built once, read without locks),
** the answers for dlsym and cuGetProcAddress, and the dlsym hook itself.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "interpose.h"
#include "../policy/base/log.h"
#include "../policy/base/trace.h"

const struct gs_row gs__rows[GS_NROWS] = {
#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream) \
    {#name, #abi, ver, pt, GS_##cls, (void *)&abi},
#define GS_HAND(name, abi, ver, pt, cls) {#name, #abi, ver, pt, GS_##cls, (void *)&abi},
#define GS_PASS(name, abi, ver, pt, cls) {#name, #abi, ver, pt, GS_##cls, (void *)&abi},
#include "hooks.def"
#undef GS_HOOK
#undef GS_HAND
#undef GS_PASS
};

/* --- Name tables ---------------------------------------------------------
** Two open-addressing tables of row ids: by ABI symbol and by base name.  Rows of
** one base name are chained through next_same_name.  Built under pthread_once. */
#define NAME_TABLE 1024 /* power of two, well over GS_NROWS */

static short by_abi[NAME_TABLE], by_name[NAME_TABLE];
static short next_same_name[GS_NROWS];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

static void build_tables(void)
{
    memset(by_abi, -1, sizeof by_abi);
    memset(by_name, -1, sizeof by_name);
    for (int i = 0; i < GS_NROWS; i++) {
        unsigned h = hash(gs__rows[i].abi);
        while (by_abi[h & (NAME_TABLE - 1)] >= 0)
            h++;
        by_abi[h & (NAME_TABLE - 1)] = (short)i;

        next_same_name[i] = -1;
        h = hash(gs__rows[i].name);
        for (;; h++) {
            short *e = &by_name[h & (NAME_TABLE - 1)];
            if (*e < 0) {
                *e = (short)i;
                break;
            }
            if (strcmp(gs__rows[*e].name, gs__rows[i].name) == 0) {
                int j = *e;
                while (next_same_name[j] >= 0)
                    j = next_same_name[j];
                next_same_name[j] = (short)i;
                break;
            }
        }
    }
}

static int find(const short *table, const char *s, int by_base_name)
{
    pthread_once(&tables_once, build_tables);
    for (unsigned h = hash(s);; h++) {
        int i = table[h & (NAME_TABLE - 1)];
        if (i < 0)
            return -1;
        if (strcmp(by_base_name ? gs__rows[i].name : gs__rows[i].abi, s) == 0)
            return i;
    }
}

/* The pointer a program gets for row i. Harmless queries need no wrapper unless
** they are traced. */
static void *row_pointer(int i)
{
    if (gs__rows[i].cls == GS_QUERY && !gs__trace_on && gs__real[i])
        return gs__real[i];
    return gs__rows[i].wrapper;
}

/* --- Answers ---------------------------------------------------------- */

void *gs__wrap_symbol(const char *abi, void *real)
{
    int i = find(by_abi, abi, 0);

    if (i >= 0 && gs__real[i] == real)
        return row_pointer(i);
    return gs__slot_for(abi, real, GS_UNCLASSIFIED);
}

void *gs__wrap_proc(const char *name, void *real, int version, cuuint64_t flags)
{
    int first = find(by_name, name, 1), best = -1;
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;

    /* The driver's answer names the variant: it is one of the exported symbols. */
    for (int i = first; i >= 0; i = next_same_name[i])
        if (gs__real[i] == real)
            return row_pointer(i);
    /* Otherwise choose by the table: the newest variant not newer than the
    ** version asked for, per-thread if asked and one exists. */
    for (int pass = want_pt; pass >= 0 && best < 0; pass--)
        for (int i = first; i >= 0; i = next_same_name[i])
            if (gs__rows[i].pt == pass && gs__rows[i].version <= version &&
                (best < 0 || gs__rows[i].version > gs__rows[best].version))
                best = i;
    if (best >= 0 && !gs__real[best]) {
        gs__debug("cuGetProcAddress(%s, %d, %#llx): variant %s by version", name, version,
                  (unsigned long long)flags, gs__rows[best].abi);
        gs__real[best] = real;
        return row_pointer(best);
    }
    if (first >= 0)
        gs__debug("cuGetProcAddress(%s, %d, %#llx): the driver's pointer is no known variant; "
                  "it runs unclassified", name, version, (unsigned long long)flags);
    return gs__slot_for(name, real, GS_UNCLASSIFIED);
}

/* --- The dlsym hook --------------------------------------------------- */

/* dlsym with any handle but RTLD_NEXT (trampoline.S): the real result, or for
** a driver entry point of a loaded libcuda, its wrapper. */
void *gs__dlsym(void *handle, const char *name)
{
    void *r = gs__dlsym_real(handle, name);

    /* Only driver entry points (cu + capital letter) from a loaded libcuda. */
    if (!r || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z' || gs__tls.depth)
        return r;
    if (!atomic_load_explicit(&gs__ready, memory_order_acquire)) {
        if (!gs__libcuda_loaded())
            return r;
        gs__init();
    }
    if (!gs__in_libcuda(r))
        return r;
    return gs__wrap_symbol(name, r);
}
