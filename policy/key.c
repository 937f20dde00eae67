/*
** key.c: op keys, parameter layouts, and issuing an op from its key (key.h).
**
** Parameter layouts come from cuFuncGetParamInfo, or cuKernelGetParamInfo when the
** handle is a CUkernel (cuFuncGetParamInfo rejects one with
** CUDA_ERROR_INVALID_HANDLE).  They are cached per function in a table that
** readers search without a lock: entries are immutable once published and never
** freed (a key points at its function's), and a reset or a resize publishes a
** new table (the old one is left allocated, since a reader may still be in it;
** both happen rarely).
*/
#include "key.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

/* --- Parameter layouts -------------------------------------------------- */

struct layout_table {
    unsigned cap;          /* power of two */
    unsigned used;
    struct gs_layout *_Atomic *slots;
};

static struct layout_table *_Atomic layouts;
static const struct gs_layout unknown_layout = {NULL, -1, 0, NULL};
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

/* NCCL's kernels make progress with host-side state that a replay cannot
** reproduce: their launches are never held. */
static int host_progress_kernel(CUfunction f)
{
    const char *name = NULL;

    if (gs__real[GS_ID_cuFuncGetName] && GS_REAL(cuFuncGetName)(&name, f) != CUDA_SUCCESS)
        name = NULL;
    if (!name && gs__real[GS_ID_cuKernelGetName] && GS_REAL(cuKernelGetName)(&name, (CUkernel)f) != CUDA_SUCCESS)
        name = NULL;
    return name && strstr(name, "nccl") != NULL;
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
    int cap = 0, n = 0, by_kernel = 0;

    if (!l)
        return NULL;
    l->f = f;
    l->n = -1;
    if (host_progress_kernel(f))
        return l;
    for (;;) {
        size_t o = 0, sz = 0;
        CUresult rc;

        if (!by_kernel)
            rc = GS_REAL(cuFuncGetParamInfo)(f, (size_t)n, &o, &sz);
        else
            rc = gs__real[GS_ID_cuKernelGetParamInfo] ? GS_REAL(cuKernelGetParamInfo)((CUkernel)f, (size_t)n, &o, &sz)
                                                      : CUDA_ERROR_NOT_FOUND;
        if (rc == CUDA_ERROR_INVALID_HANDLE && n == 0 && !by_kernel) {
            by_kernel = 1;
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
    free(off);
    free(size);
    return l;
}

static const struct gs_layout *layout_of(CUfunction f)
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

int gs__layout_known(CUfunction f)
{
    return layout_of(f)->n >= 0;
}

void gs__layouts_reset(void)
{
    pthread_mutex_lock(&layouts_lock);
    atomic_store_explicit(&layouts, table_new(1024), memory_order_release);
    pthread_mutex_unlock(&layouts_lock);
}

/* --- Keys ------------------------------------------------------------- */

/* The bytes of an attribute's value that carry meaning; -1: not supported. */
static int attr_value_size(CUlaunchAttributeID id)
{
    CUlaunchAttributeValue v;

    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_IGNORE:
        return 0;
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        return sizeof v.cooperative;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        return sizeof v.clusterDim;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        return sizeof v.clusterSchedulingPolicyPreference;
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        return sizeof v.programmaticStreamSerializationAllowed;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        return sizeof v.priority;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        return sizeof v.memSyncDomainMap;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        return sizeof v.memSyncDomain;
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        return sizeof v.sharedMemCarveout;
    default:
        return -1;
    }
}

int gs__attr_supported(CUlaunchAttributeID id)
{
    return attr_value_size(id) >= 0;
}

int gs__key_launch(void *buf, const struct gs_launch *a)
{
    struct gs_key *k = buf;
    const struct gs_layout *l = layout_of(a->f);
    const CUlaunchConfig *cfg = a->cfg;
    void **params = a->params, **extra = a->extra;
    unsigned nattrs = cfg ? cfg->numAttrs : 0;
    unsigned char *p;
    uint32_t nbytes;

    if (l->n < 0 || nattrs > 8 || (nattrs && !cfg->attrs))
        return -1;
    memset(k, 0, sizeof *k);
    k->kind = GS_OP_LAUNCH;
    k->f = a->f;
    k->layout = l;
    memcpy(k->grid, a->grid, sizeof k->grid);
    memcpy(k->block, a->block, sizeof k->block);
    k->shmem = a->shmem;
    k->nattrs = nattrs;
    for (unsigned i = 0; i < nattrs; i++) {
        /* Only the bytes of the value that mean something: the rest of the union
        ** is whatever the caller's stack held, and would make equal launches differ. */
        CUlaunchAttribute *a = &gs__key_attrs(k)[i];
        int vs = attr_value_size(cfg->attrs[i].id);
        if (vs < 0)
            return -1;
        memset(a, 0, sizeof *a);
        a->id = cfg->attrs[i].id;
        memcpy(&a->value, &cfg->attrs[i].value, (size_t)vs);
    }
    p = gs__key_params(k);
    if (params) {
        if (extra)
            return -1;
        nbytes = l->size;
        memset(p, 0, nbytes);
        for (int i = 0; i < l->n; i++) {
            /* Most parameters are pointers or 4-byte scalars: copied inline. */
            uint32_t sz = l->off[l->n + i];
            if (sz == 8)
                memcpy(p + l->off[i], params[i], 8);
            else if (sz == 4)
                memcpy(p + l->off[i], params[i], 4);
            else
                memcpy(p + l->off[i], params[i], sz);
        }
    } else if (extra) {
        void *ptr = NULL;
        size_t size = 0;
        int have_size = 0;
        for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                ptr = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
                size = *(size_t *)extra[i + 1], have_size = 1;
            else
                return -1;
        }
        /* The buffer must hold the whole layout: a held launch is issued again
        ** through its kernelParams, read from these bytes. */
        if (!ptr || !have_size || size < l->size || size > GS_PARAM_BYTES_MAX)
            return -1;
        nbytes = (uint32_t)size;
        memcpy(p, ptr, nbytes);
    } else {
        if (l->n != 0)
            return -1; /* the driver rejects it: let it say so */
        nbytes = 0;
    }
    k->nparams = nbytes;
    return (int)((size_t)(p - (unsigned char *)buf) + nbytes);
}

int gs__key_copy(void *buf, int kind, uint64_t dst, uint64_t src, uint64_t size)
{
    struct gs_key *k = buf;
    memset(k, 0, sizeof *k);
    k->kind = (uint32_t)kind;
    k->dst = dst;
    k->src = src;
    k->size = size;
    return (int)sizeof *k;
}

int gs__key_set(void *buf, uint64_t dst, uint32_t value, uint32_t elem, uint64_t n)
{
    struct gs_key *k = buf;
    memset(k, 0, sizeof *k);
    k->kind = GS_OP_SET;
    k->dst = dst;
    k->src = value;
    k->size = n;
    k->elem = elem;
    return (int)sizeof *k;
}

CUresult gs__key_param_ptrs(const struct gs_key *k, void *stack[64], void ***out)
{
    /* kernelParams, one pointer per parameter into the key's packed bytes: the
    ** form the CUDA runtime itself launches with. */
    const struct gs_layout *l = layout_of(k->f);
    void **params = stack;

    *out = NULL;
    if (l->n < 0 || l->size > k->nparams)
        return CUDA_ERROR_INVALID_HANDLE; /* the layout that made the key is gone: never guess */
    if (l->n > 64 && !(params = malloc((size_t)l->n * sizeof *params)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < l->n; i++)
        params[i] = gs__key_params(k) + l->off[i];
    *out = l->n ? params : NULL;
    if (!l->n && params != stack)
        free(params);
    return CUDA_SUCCESS;
}

void gs__key_param_ptrs_free(void **params, void *stack[64])
{
    if (params && params != stack)
        free(params);
}

CUresult gs__key_issue(const struct gs_key *k, CUstream s, const void *src_override)
{
    switch (k->kind) {
    case GS_OP_LAUNCH: {
        void *stack[64], **params;
        CUresult rc = gs__key_param_ptrs(k, stack, &params);
        if (rc != CUDA_SUCCESS)
            return rc;
        if (k->nattrs) {
            CUlaunchConfig cfg = {k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
                                  k->shmem, s, gs__key_attrs(k), k->nattrs};
            rc = GS_REAL(cuLaunchKernelEx)(&cfg, k->f, params, NULL);
        } else {
            rc = GS_REAL(cuLaunchKernel)(k->f, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
                                         k->block[2], k->shmem, s, params, NULL);
        }
        gs__key_param_ptrs_free(params, stack);
        return rc;
    }
    case GS_OP_H2D:
    case GS_OP_H2D_PAGEABLE:
        return GS_REAL(cuMemcpyHtoDAsync_v2)(k->dst, src_override ? src_override : (const void *)(uintptr_t)k->src,
                                            k->size, s);
    case GS_OP_D2H:
        return GS_REAL(cuMemcpyDtoHAsync_v2)((void *)(uintptr_t)k->dst, k->src, k->size, s);
    case GS_OP_D2D:
        return GS_REAL(cuMemcpyDtoDAsync_v2)(k->dst, k->src, k->size, s);
    case GS_OP_SET:
        if (k->elem == 1)
            return GS_REAL(cuMemsetD8Async)(k->dst, (unsigned char)k->src, k->size, s);
        if (k->elem == 2)
            return GS_REAL(cuMemsetD16Async)(k->dst, (unsigned short)k->src, k->size, s);
        return GS_REAL(cuMemsetD32Async)(k->dst, (unsigned)k->src, k->size, s);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

uint64_t gs__bytes_hash(const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    uint64_t h = 0x243F6A8885A308D3ull ^ n;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, p + i, n - i);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return h;
}
