/*
** lookup.c: what a program gets when it asks for a driver entry point.
**
** Three ways in, one answer:
**   - dlsym(handle, "cuXxx") returning an address inside libcuda (dlsym.c),
**   - cuGetProcAddress / cuGetProcAddress_v2 (name, version, flags),
**   - the exported symbols themselves (programs linked with -lcuda).
** A hooks.def row gets its wrapper; any other driver entry point gets a
** trampoline slot of class UNCLASSIFIED, so nothing escapes the guard.
**
** The top of interpose/: its table names the wrapper of every row, so it uses
** every shim file and no shim file uses it.  That is why the cuGetProcAddress
** shims live here: they hand out wrappers too.  This file is divided into: the
** wrappers and the name tables (built once, read without locks), the answers for
** dlsym and cuGetProcAddress, and the cuGetProcAddress shims.
*/
#include <string.h>

#include "interpose.h"
#include "../policy/base/config.h"
#include "../policy/base/log.h"
#include "../policy/base/trace.h"
#include "../policy/entry/guard.h"

/* --- Wrappers and name tables --------------------------------------------
** The pointer a program gets for each row: its typed wrapper (shims.c, attr.c,
** copy.c, launch.c, the cuGetProcAddress shims at the end of this file) or, for
** a GS_PASS row, its exported trampoline (trampoline.S). */
static void *const wrappers[GS_NROWS] = {
#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream) (void *)&abi,
#define GS_HAND(name, abi, ver, pt, cls) (void *)&abi,
#define GS_PASS(name, abi, ver, pt, cls) (void *)&abi,
#include "hooks.def"
#undef GS_HOOK
#undef GS_HAND
#undef GS_PASS
};

/* Two open-addressing tables of row ids: by ABI symbol and by base name.  Rows of
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
    if (gs__rows[i].cls == GS_QUERY && !gs__trace_on && gs__real[i] &&
        !(gs__cfg.xstream && (i == GS_ID_cuEventCreate || i == GS_ID_cuEventQuery || i == GS_ID_cuEventDestroy_v2)))
        return gs__real[i];
    return wrappers[i];
}

/* The trampoline of an entry point without a row (slots.c hands out its slot);
** real itself once every slot is taken. */
void *gs__slot_for(const char *name, void *real, int cls)
{
    int k = gs__slot_claim(name, real, cls);

    return k >= 0 ? (void *)(gs__tramp_base + 16 * k) : real;
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

/* --- The cuGetProcAddress shims ---------------------------------------
** Every CUDA runtime (static, shared, library-private) fetches the driver's entry
** points through cuGetProcAddress, including cuGetProcAddress itself: that
** self-lookup must return these shims, or every later lookup escapes.  Each shim
** asks the real driver first and hands its answer, unchanged in status, to
** gs__wrap_proc, which swaps the pointer for the matching wrapper. */

static void wrap(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    if (!pfn || !*pfn || !symbol || gs__tls.depth)
        return;
    if (*pfn == gs__real[GS_ID_cuGetProcAddress_v2])
        *pfn = (void *)&cuGetProcAddress_v2;
    else if (*pfn == gs__real[GS_ID_cuGetProcAddress])
        *pfn = (void *)&cuGetProcAddress;
    else
        *pfn = gs__wrap_proc(symbol, *pfn, version, flags);
}

static void trace(int id, CUresult rc)
{
    struct gs_call c = {id, GS_PROC, gs__rows[id].abi, GS_NONE, 0};
    gs__guard_after(&c, rc);
}

GS_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    CUresult rc;

    gs__ensure_init();
    if (!gs__real[GS_ID_cuGetProcAddress])
        return CUDA_ERROR_NOT_FOUND;
    rc = GS_APP(cuGetProcAddress)(symbol, pfn, version, flags);
    if (rc == CUDA_SUCCESS)
        wrap(symbol, pfn, version, flags);
    trace(GS_ID_cuGetProcAddress, rc);
    return rc;
}

GS_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *status)
{
    CUresult rc;

    gs__ensure_init();
    if (!gs__real[GS_ID_cuGetProcAddress_v2])
        return CUDA_ERROR_NOT_FOUND;
    rc = GS_APP(cuGetProcAddress_v2)(symbol, pfn, version, flags, status);
    if (rc == CUDA_SUCCESS)
        wrap(symbol, pfn, version, flags);
    trace(GS_ID_cuGetProcAddress_v2, rc);
    return rc;
}
