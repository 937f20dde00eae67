/*
** key.c: op keys, and issuing an op from its key (key.h).  A launch's key packs
** its parameters by its function's layout (layout.c).
*/
#include "key.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "layout.h"

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

/* A grid every CUDA device takes: the driver fails a launch of any other
** (CUDA_ERROR_INVALID_VALUE).  A launch matches its node whatever its grid
** (key.h), so one with a grid the driver would refuse must not be held as that
** node's, returning success: it has no key, and goes out at once. */
static int grid_valid(const unsigned grid[3])
{
    return grid[0] >= 1 && grid[0] <= 2147483647u && grid[1] >= 1 && grid[1] <= 65535 && grid[2] >= 1 &&
           grid[2] <= 65535;
}

int gs__key_launch(void *buf, const struct gs_launch *a)
{
    struct gs_key *k = buf;
    const struct gs_layout *l = gs__layout_of(a->f);
    const CUlaunchConfig *cfg = a->cfg;
    void **params = a->params, **extra = a->extra;
    unsigned nattrs = cfg ? cfg->numAttrs : 0;
    unsigned char *p;
    uint32_t nbytes;

    if (l->n < 0 || nattrs > 8 || (nattrs && !cfg->attrs) || !grid_valid(a->grid))
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
    k->kind = (uint16_t)kind;
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

int gs__key_event(void *buf, int kind, CUevent e, CUstream st, unsigned flags, uint32_t slot)
{
    struct gs_key *k = buf;
    memset(k, 0, sizeof *k);
    k->kind = (uint16_t)kind;
    k->elem = slot + 1;
    k->dst = (uint64_t)(uintptr_t)e;
    k->src = (uint64_t)(uintptr_t)st;
    k->size = flags;
    return (int)sizeof *k;
}

CUresult gs__key_param_ptrs(const struct gs_key *k, void *stack[64], void ***out)
{
    /* kernelParams, one pointer per parameter into the key's packed bytes: the
    ** form the CUDA runtime itself launches with. */
    const struct gs_layout *l = gs__layout_of(k->f);
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

/* Where there is no memory for more than 64 parameter pointers: k's packed
** bytes themselves, laid out as the kernel's parameters are, as the launch's
** argument buffer (an `extra` list in buffer, of *size bytes), so that a held
** launch is never lost for want of memory. */
static void **packed_args(const struct gs_key *k, void *buffer[5], size_t *size)
{
    *size = gs__layout_of(k->f)->size;
    buffer[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    buffer[1] = gs__key_params(k);
    buffer[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    buffer[3] = size;
    buffer[4] = CU_LAUNCH_PARAM_END;
    return buffer;
}

CUresult gs__key_issue(const struct gs_key *k, CUstream s, const void *src_override)
{
    switch (k->kind) {
    case GS_OP_LAUNCH: {
        void *stack[64], **params, *buffer[5], **extra = NULL;
        size_t size;
        CUresult rc = gs__key_param_ptrs(k, stack, &params);
        if (rc == CUDA_ERROR_OUT_OF_MEMORY)
            extra = packed_args(k, buffer, &size);
        else if (rc != CUDA_SUCCESS)
            return rc;
        if (k->nattrs) {
            CUlaunchConfig cfg = {k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
                                  k->shmem, s, gs__key_attrs(k), k->nattrs};
            rc = GS_REAL(cuLaunchKernelEx)(&cfg, k->f, params, extra);
        } else {
            rc = GS_REAL(cuLaunchKernel)(k->f, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
                                         k->block[2], k->shmem, s, params, extra);
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
    case GS_OP_RECORD:
        return GS_REAL(cuEventRecord)((CUevent)(uintptr_t)k->dst, s);
    case GS_OP_WAIT:
        return GS_REAL(cuStreamWaitEvent)(s, (CUevent)(uintptr_t)k->dst, (unsigned)k->size);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

/* Does [p, p + n) lie inside one device allocation?  Asked of the driver once
** an allocation, then of r while the memory epoch stays. */
static int device_range_ok(struct gs_ranges *r, unsigned epoch, uint64_t p, uint64_t n)
{
    CUpointer_attribute a[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned type = 0;
    CUdeviceptr lo = 0;
    size_t size = 0;
    void *d[3] = {&type, &lo, &size};

    if (r->epoch != epoch) {
        memset(r, 0, sizeof *r);
        r->epoch = epoch;
    }
    if (p + n < p)
        return 0;
    for (int i = 0; i < GS_RANGES; i++)
        if (p >= r->lo[i] && p + n <= r->hi[i])
            return 1;
    if (!gs__real[GS_ID_cuPointerGetAttributes] || GS_REAL(cuPointerGetAttributes)(3, a, d, p) != CUDA_SUCCESS ||
        type != CU_MEMORYTYPE_DEVICE || !size || p < lo || p + n > lo + size)
        return 0;
    r->lo[r->next] = lo;
    r->hi[r->next] = lo + size;
    r->next = (r->next + 1) % GS_RANGES;
    return 1;
}

int gs__key_moves_ok(const struct gs_key *k, const struct gs_key *have, struct gs_ranges *r, unsigned epoch)
{
    uint64_t bytes = k->kind == GS_OP_SET ? k->size * k->elem : k->size;
    int dst_dev = k->kind == GS_OP_D2D || k->kind == GS_OP_SET || k->kind == GS_OP_H2D;
    int src_dev = k->kind == GS_OP_D2D || k->kind == GS_OP_D2H;
    int resized = k->size != have->size;

    if (k->kind == GS_OP_LAUNCH || k->kind >= GS_OP_RECORD)
        return 1;
    if (k->kind == GS_OP_SET && (!k->elem || k->dst % k->elem))
        return 0;
    if (dst_dev && (k->dst != have->dst || resized) && !device_range_ok(r, epoch, k->dst, bytes))
        return 0;
    if (src_dev && (k->src != have->src || resized) && !device_range_ok(r, epoch, k->src, bytes))
        return 0;
    return 1;
}

uint64_t gs__key_args_hash(const struct gs_key *k)
{
    if (k->kind != GS_OP_LAUNCH)
        return (k->dst ^ k->src * 0xC2B2AE3D27D4EB4Full ^ k->size << 40) * 0x9E3779B97F4A7C15ull;
    return gs__bytes_hash(gs__key_params(k), k->nparams) ^ k->grid[0] ^ (uint64_t)k->grid[1] << 21 ^
           (uint64_t)k->grid[2] << 42;
}

uint64_t gs__key_shape_hash(const void *key, uint32_t len, uint32_t cmp)
{
    const unsigned char *k = key;
    const struct gs_key *c = key;
    uint64_t host = c->kind == GS_OP_H2D ? c->src : c->kind == GS_OP_D2H ? c->dst : 0;

    if (!gs__key_grid_is_arg(k, len, cmp))
        return gs__bytes_hash(k, cmp);
    return (gs__bytes_hash(k, GS_KEY_GRID_AT) * 31 ^ gs__bytes_hash(k + GS_KEY_GRID_END, cmp - GS_KEY_GRID_END)) +
           (host ? (host ^ c->size << 32) * 0x9E3779B97F4A7C15ull : 0);
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

/* The calling thread's buffer for a launch key (gs__key_buffer, key.h). */
static pthread_key_t key_buffer_key;
static pthread_once_t key_buffer_once = PTHREAD_ONCE_INIT;
GS_TLS unsigned char *gs__key_buf;

static void key_buffer_init(void)
{
    pthread_key_create(&key_buffer_key, free);
}

unsigned char *gs__key_buffer_new(void)
{
    pthread_once(&key_buffer_once, key_buffer_init);
    gs__key_buf = aligned_alloc(16, (GS_KEY_MAX + 15) & ~(size_t)15);
    pthread_setspecific(key_buffer_key, gs__key_buf); /* freed when the thread exits */
    return gs__key_buf;
}

const char *gs__key_differs(const struct gs_key *e, const struct gs_key *k)
{
    return !e                                        ? "no op was expected"
           : e->kind != k->kind                      ? "another kind of op"
           : e->member != k->member                  ? "another stream of the group"
           : e->f != k->f                            ? "another function"
           : memcmp(e->block, k->block, sizeof e->block) ? "another block"
           : e->shmem != k->shmem                    ? "other dynamic shared memory"
           : e->nattrs != k->nattrs                  ? "other launch attributes"
           : e->kind != GS_OP_LAUNCH                 ? "other addresses, size or value"
                                                     : "other grid, attributes or parameters";
}
