/*
** layout.c: the parameter layouts of kernel functions (layout.h).
**
** Layouts come from cuKernelGetParamInfo where the handle is a CUkernel, or
** cuFuncGetParamInfo where it is a CUfunction (each rejects the other kind with
** CUDA_ERROR_INVALID_HANDLE).
** They are cached per function in a table that readers search without a lock:
** entries are immutable once published and never freed (a key points at its
** function's), and a reset or a resize publishes a new table (the old one is
** left allocated, since a reader may still be in it; both happen rarely).
*/
#include "layout.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

struct layout_table {
    unsigned cap;          /* power of two */
    unsigned used;
    struct gs_layout *_Atomic *slots;
};

static struct layout_table *_Atomic layouts;
static const struct gs_layout unknown_layout = {NULL, -1, 0, NULL, 1};
static pthread_mutex_t layouts_lock = PTHREAD_MUTEX_INITIALIZER;

static struct layout_table *table_new(unsigned cap)
{
    struct layout_table *t = calloc(1, sizeof *t);
    if (t && !(t->slots = calloc(cap, sizeof *t->slots))) {
        free(t);
        t = NULL;
    }
    if (t)
        t->cap = cap;
    return t;
}

static unsigned fhash(CUfunction f)
{
    uint64_t x = (uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 32);
}

static const struct gs_layout *layout_find(struct layout_table *t, CUfunction f)
{
    for (unsigned h = fhash(f);; h++) {
        struct gs_layout *l = atomic_load_explicit(&t->slots[h & (t->cap - 1)], memory_order_acquire);
        if (!l || l->f == f)
            return l;
    }
}

static void layout_put(struct layout_table *t, struct gs_layout *l)
{
    unsigned h = fhash(l->f);
    while (atomic_load_explicit(&t->slots[h & (t->cap - 1)], memory_order_relaxed))
        h++;
    atomic_store_explicit(&t->slots[h & (t->cap - 1)], l, memory_order_release);
    t->used++;
}

/* Which kind of handle the last function asked about was: a CUkernel (the
** runtime launches the kernels of its libraries so) or a CUfunction (a program
** of the driver API).  The driver refuses a handle of the other kind
** (CUDA_ERROR_INVALID_HANDLE, either way), but only after the cost of a first
** call on the kernel (measured on an H200: a refused cuFuncGetName on a kernel
** never asked about before, 25-34 us; the whole first query 15-20 us less when
** the kind that serves is asked first); so the kind that served last is asked
** first, and the other where it refuses. */
static atomic_int by_kernel_hint = 1;

/* Parameter i of f, asked as a CUkernel (by_kernel) or a CUfunction. */
static CUresult param_info(CUfunction f, int by_kernel, int i, size_t *o, size_t *sz)
{
    if (!by_kernel)
        return GS_REAL(cuFuncGetParamInfo)(f, (size_t)i, o, sz);
    return gs__real[GS_ID_cuKernelGetParamInfo] ? GS_REAL(cuKernelGetParamInfo)((CUkernel)f, (size_t)i, o, sz)
                                                : CUDA_ERROR_INVALID_HANDLE;
}

/* f's name, asked as a CUkernel (by_kernel) or a CUfunction, into *name: 0
** read, -1 none given.  Both entry points are there (init.c's check_driver). */
static int name_of(CUfunction f, int by_kernel, const char **name)
{
    CUresult rc;

    *name = NULL;
    rc = by_kernel ? GS_REAL(cuKernelGetName)(name, (CUkernel)f) : GS_REAL(cuFuncGetName)(name, f);
    return rc == CUDA_SUCCESS && *name ? 0 : -1;
}

/* f's name, asked as by_kernel's kind first and as the other where that gives
** none: 0 read, -1 neither kind gave one.  A refusal is not taken for a handle
** of the other kind by its code: the driver's refusal of a handle it does not
** name (CUDA_ERROR_INVALID_HANDLE) is the code the kind that fits may give
** too, so a name neither kind gives is unknown. */
static int name_any(CUfunction f, int by_kernel, const char **name)
{
    if (name_of(f, by_kernel, name) == 0 || name_of(f, !by_kernel, name) == 0)
        return 0;
    return -1; /* unknown: may be NCCL's */
}

/* NCCL's kernels make progress with host-side state that a replay cannot
** reproduce: their launches are never held.  Their names come mangled
** (_Z...ncclDevKernel_...), so "nccl" is looked for anywhere in the name; a
** kernel of another library named so is left ungraphed too (speed, never
** results), and so is one whose name the driver refused to give (it may be
** NCCL's).  by_kernel: the kind f's layout was had by, asked first. */
static int host_progress_kernel(CUfunction f, int by_kernel)
{
    const char *name;
    int r = name_any(f, by_kernel, &name);

    return r < 0 || (name && strstr(name, "nccl") != NULL);
}

/* Is a layout one that a real kernel can have?  Parameters lie in order, do not
** overlap, are at least a byte each, and end within the driver's limit. */
static int layout_plausible(int n, const uint32_t *off, const uint32_t *size, uint32_t *end)
{
    uint32_t e = 0;

    for (int i = 0; i < n; i++) {
        if (size[i] == 0 || off[i] < e || size[i] > GS_PARAM_BYTES_MAX || off[i] > GS_PARAM_BYTES_MAX - size[i])
            return 0;
        e = off[i] + size[i];
    }
    *end = e;
    return 1;
}

/* Asks the driver for f's parameter layout.  n = -1 (its launches pass through)
** when the driver gives none, or one that is not plausible: a layout is never
** guessed. */
static struct gs_layout *layout_query(CUfunction f)
{
    struct gs_layout *l = calloc(1, sizeof *l);
    uint32_t *off = NULL, *size = NULL, end = 0;
    int cap = 0, n = 0, by_kernel = atomic_load_explicit(&by_kernel_hint, memory_order_relaxed), other = 0;

    if (!l)
        return NULL;
    l->f = f;
    l->n = -1;
    for (;;) {
        size_t o = 0, sz = 0;
        CUresult rc = param_info(f, by_kernel, n, &o, &sz);

        if (rc == CUDA_ERROR_INVALID_HANDLE && n == 0 && !other) {
            by_kernel = !by_kernel; /* the handle is of the other kind */
            other = 1;
            continue;
        }
        if (rc == CUDA_ERROR_INVALID_VALUE)
            break; /* past the last parameter */
        if (rc != CUDA_SUCCESS || n >= GS_PARAMS_MAX || o > GS_PARAM_BYTES_MAX || sz > GS_PARAM_BYTES_MAX) {
            gs__debug("no parameter layout for function %p (parameter %d: error %d, offset %zu, size %zu): "
                      "its launches pass through", (void *)f, n, rc, o, sz);
            goto unknown;
        }
        if (n == cap) {
            uint32_t *o2, *s2;
            cap = cap ? 2 * cap : 16;
            o2 = realloc(off, (size_t)cap * sizeof *off);
            if (o2)
                off = o2;
            s2 = realloc(size, (size_t)cap * sizeof *size);
            if (s2)
                size = s2;
            if (!o2 || !s2)
                goto unknown;
        }
        off[n] = (uint32_t)o;
        size[n] = (uint32_t)sz;
        n++;
    }
    atomic_store_explicit(&by_kernel_hint, by_kernel, memory_order_relaxed);
    if (host_progress_kernel(f, by_kernel))
        goto unknown;
    if (!layout_plausible(n, off, size, &end)) {
        gs__debug("implausible parameter layout for function %p (%d parameters): its launches pass through",
                  (void *)f, n);
        goto unknown;
    }
    if (n) {
        /* Offsets, then sizes, packed. */
        uint32_t *packed = malloc(2 * (size_t)n * sizeof *packed);
        if (!packed)
            goto unknown;
        memcpy(packed, off, (size_t)n * sizeof *packed);
        memcpy(packed + n, size, (size_t)n * sizeof *packed);
        l->off = packed;
    }
    l->n = n;
    l->size = end;
unknown:
    l->by_kernel = by_kernel;
    free(off);
    free(size);
    return l;
}

const struct gs_layout *gs__layout_of(CUfunction f)
{
    struct layout_table *t = atomic_load_explicit(&layouts, memory_order_acquire);
    const struct gs_layout *l = t ? layout_find(t, f) : NULL;
    struct gs_layout *nl;

    if (GS_LIKELY(l != NULL))
        return l;
    if (!(nl = layout_query(f)))
        return &unknown_layout;
    pthread_mutex_lock(&layouts_lock);
    t = atomic_load_explicit(&layouts, memory_order_relaxed);
    if (!t && (t = table_new(1024)) != NULL)
        atomic_store_explicit(&layouts, t, memory_order_release);
    if (t && (l = layout_find(t, f)) == NULL) {
        if (2 * (t->used + 1) > t->cap) {
            struct layout_table *big = table_new(2 * t->cap);
            for (unsigned i = 0; big && i < t->cap; i++) {
                struct gs_layout *e = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
                if (e)
                    layout_put(big, e);
            }
            if (big)
                atomic_store_explicit(&layouts, big, memory_order_release);
            t = big;
        }
        if (t) {
            layout_put(t, nl);
            l = nl;
            nl = NULL;
        }
    }
    pthread_mutex_unlock(&layouts_lock);
    if (nl) {
        free((void *)nl->off);
        free(nl);
    }
    return l ? l : &unknown_layout;
}

const char *gs__kernel_name(CUfunction f)
{
    const char *name;

    return name_any(f, gs__layout_of(f)->by_kernel, &name) == 0 ? name : "";
}

const char *gs__kernel_name_seen(CUfunction f)
{
    struct layout_table *t = atomic_load_explicit(&layouts, memory_order_acquire);
    const struct gs_layout *l = t ? layout_find(t, f) : NULL;
    const char *name;

    return name_any(f, l ? l->by_kernel : 0, &name) == 0 ? name : "";
}

int gs__layout_known(CUfunction f)
{
    return gs__layout_of(f)->n >= 0;
}

void gs__layouts_reset(void)
{
    pthread_mutex_lock(&layouts_lock);
    atomic_store_explicit(&layouts, table_new(1024), memory_order_release);
    pthread_mutex_unlock(&layouts_lock);
}

