/* fakecuda.c - core of the CPU fake of the CUDA driver: handle registry,
 * initialisation, device and context, memory, streams, events, stream capture.
 * Every operation executes synchronously when it is enqueued, unless the
 * stream is capturing, in which case it becomes a node of the capture graph,
 * or FAKECUDA_PENDING queues it (fake_queue.c). */
#define _GNU_SOURCE
#include "fake_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

pthread_mutex_t g_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* ------------------------------------------------------------------------ */
/* registry: open-addressing pointer set                                    */
/* ------------------------------------------------------------------------ */
#define TOMB ((void *)1)
static void **R_slots;
static size_t R_cap, R_used; /* used counts live + tombstones */
static uint32_t g_ids[K_COUNT];

static size_t rhash(const void *p)
{
    uint64_t x = (uintptr_t)p;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return (size_t)x;
}

static void reg_insert(void *p)
{
    size_t i = rhash(p) & (R_cap - 1);
    while (R_slots[i] && R_slots[i] != TOMB) i = (i + 1) & (R_cap - 1);
    if (!R_slots[i]) R_used++;
    R_slots[i] = p;
}

void reg_add(void *obj, int kind)
{
    LOCK();
    struct hdr *h = obj;
    h->kind = (uint32_t)kind;
    h->id = ++g_ids[kind];
    if ((R_used + 1) * 2 > R_cap) {
        void **old = R_slots; size_t oc = R_cap;
        R_cap = oc ? oc * 2 : 256;
        R_slots = calloc(R_cap, sizeof(void *));
        R_used = 0;
        for (size_t i = 0; i < oc; i++)
            if (old[i] && old[i] != TOMB) reg_insert(old[i]);
        free(old);
    }
    reg_insert(obj);
    UNLOCK();
}

static size_t reg_slot(const void *p)
{
    if (!R_cap || !p || p == TOMB) return (size_t)-1; /* TOMB: CU_STREAM_LEGACY's value too */
    size_t i = rhash(p) & (R_cap - 1);
    while (R_slots[i]) {
        if (R_slots[i] == p) return i;
        i = (i + 1) & (R_cap - 1);
    }
    return (size_t)-1;
}

void reg_del(void *obj)
{
    LOCK();
    size_t i = reg_slot(obj);
    if (i != (size_t)-1) R_slots[i] = TOMB;
    UNLOCK();
}

void *reg_get(const void *p, int kind)
{
    void *r = NULL;
    LOCK();
    size_t i = reg_slot(p);
    if (i != (size_t)-1 && ((const struct hdr *)p)->kind == (uint32_t)kind) r = (void *)p;
    UNLOCK();
    return r;
}

void reg_each(int kind, void (*fn)(void *obj, void *arg), void *arg)
{
    for (size_t i = 0; i < R_cap; i++)
        if (R_slots[i] && R_slots[i] != TOMB && ((struct hdr *)R_slots[i])->kind == (uint32_t)kind)
            fn(R_slots[i], arg);
}

/* ------------------------------------------------------------------------ */
/* global state                                                             */
/* ------------------------------------------------------------------------ */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_inited;
static int g_drv_version = FAKE_DRIVER_VERSION_DEFAULT;
static long g_graph_launch_us;
static long g_launch_us;               /* FAKECUDA_LAUNCH_US: the host's time per kernel launch */
static long g_capture_us, g_ctx_sync_us;
/* FAKECUDA_CLOCK=virtual: the fake's clock moves only where time is spent on
** purpose (see fakecuda.h, fakecuda_advance_ns), not while a busy machine
** has the process descheduled; graphshim's test build reads it with
** GRAPHSHIM_TEST_CLOCK=fake. */
static int g_virtual;
#define FAKE_CALL_NS 100
static _Atomic unsigned long long g_vclock = 1000000000ull;
static void (*_Atomic g_on_advance)(void);

static long g_kernel_us;                 /* FAKECUDA_KERNEL_US: the GPU's time per kernel */
static _Atomic unsigned long long g_gpu_until; /* monotonic ns when the GPU is done */
static CUresult g_sticky;
static struct ctx g_primary;
static __thread struct ctx *t_ctx;
__thread int t_in_callback;
static __thread CUstreamCaptureMode t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
/* The calling thread's per-thread streams, one per context it used. */
struct pts { struct stream s; struct pts *next; };
static __thread struct pts *t_pts;
static struct capture *g_captures;
static uint64_t g_capture_ids;

struct arena g_dev = {.name = "device"}, g_host = {.name = "pinned"};
static size_t g_exec_kb = 16; /* FAKECUDA_EXEC_KB: device memory of an executable, less its nodes' */
static size_t g_graph_kb = 2048; /* FAKECUDA_GRAPH_KB: taken at the first instantiation, for good */
static int g_graph_taken;
struct hreg { uintptr_t p; size_t size; unsigned flags; uint64_t serial; };
static struct hreg *g_reg; static size_t g_nreg, g_capreg;
static uint64_t g_serial; /* allocations made so far */

void fake_log_init(void);

static void map_arena(struct arena *a, uintptr_t hint, size_t size)
{
    void *p = mmap((void *)hint, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) { perror("fakecuda: mmap arena"); abort(); }
    a->base = p;
    a->size = size;
}

static void fork_prepare(void) { LOCK(); }
static void fork_release(void) { UNLOCK(); }

static int g_event_reuse = 1; /* FAKECUDA_EVENT_REUSE=0: a destroyed event's handle never comes back */

static void once_init(void)
{
    pthread_atfork(fork_prepare, fork_release, fork_release);
    const char *v = getenv("FAKECUDA_DRIVER_VERSION");
    if (v && *v) g_drv_version = atoi(v);
    const char *gl = getenv("FAKECUDA_GRAPH_LAUNCH_US");
    if (gl && *gl) g_graph_launch_us = atol(gl);
    const char *lu = getenv("FAKECUDA_LAUNCH_US");
    if (lu && *lu) g_launch_us = atol(lu);
    const char *cu = getenv("FAKECUDA_CAPTURE_US");
    if (cu && *cu) g_capture_us = atol(cu);
    const char *cs = getenv("FAKECUDA_CTX_SYNC_US");
    if (cs && *cs) g_ctx_sync_us = atol(cs);
    const char *ku = getenv("FAKECUDA_KERNEL_US");
    if (ku && *ku) g_kernel_us = atol(ku);
    const char *ck = getenv("FAKECUDA_CLOCK");
    if (ck && strcmp(ck, "virtual") == 0) g_virtual = 1;
    const char *er = getenv("FAKECUDA_EVENT_REUSE");
    if (er && strcmp(er, "0") == 0) g_event_reuse = 0;
    size_t mb = 8192, pinned_mb = 4096;
    const char *m = getenv("FAKECUDA_MEM_MB");
    if (m && *m) mb = strtoull(m, NULL, 10);
    const char *pm = getenv("FAKECUDA_PINNED_MB");
    if (pm && *pm) pinned_mb = strtoull(pm, NULL, 10);
    const char *xk = getenv("FAKECUDA_EXEC_KB");
    if (xk && *xk) g_exec_kb = strtoull(xk, NULL, 10);
    const char *gk = getenv("FAKECUDA_GRAPH_KB");
    if (gk && *gk) g_graph_kb = strtoull(gk, NULL, 10);
    /* Fixed addresses keep device pointers (and so kernel parameter bytes)
     * identical across runs; falls back to any address. */
    map_arena(&g_dev, 0x200000000000ULL, mb << 20);
    map_arena(&g_host, 0x300000000000ULL, pinned_mb << 20);
    fake_pending();
    g_primary.primary = 1;
    reg_add(&g_primary, K_CTX);
    fake_log_init();
}

void fake_once(void) { pthread_once(&g_once, once_init); }
int fake_driver_version(void) { fake_once(); return g_drv_version; }
long fake_graph_launch_us(void) { fake_once(); return g_graph_launch_us; }

static unsigned long long mono_ns(void)
{
    struct timespec t;
    if (g_virtual) return atomic_load(&g_vclock);
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* Waits until the fake's clock reads until (ns): the virtual clock is moved
** there at once. */
static void wait_until(unsigned long long until)
{
    unsigned long long now;
    while ((now = mono_ns()) < until) {
        if (g_virtual) {
            atomic_compare_exchange_weak(&g_vclock, &now, until);
            continue;
        }
        struct timespec t = {(time_t)((until - now) / 1000000000ull), (long)((until - now) % 1000000000ull)};
        nanosleep(&t, NULL);
    }
}

FAKECUDA_EXPORT unsigned long long fakecuda_clock_ns(void)
{
    fake_once();
    return mono_ns();
}

FAKECUDA_EXPORT void fakecuda_advance_ns(unsigned long long ns)
{
    void (*cb)(void);
    fake_once();
    if (!g_virtual) {
        struct timespec t = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
        nanosleep(&t, NULL);
        return;
    }
    atomic_fetch_add(&g_vclock, ns);
    if ((cb = atomic_load(&g_on_advance)))
        cb();
}

FAKECUDA_EXPORT void fakecuda_on_advance(void (*cb)(void))
{
    atomic_store(&g_on_advance, cb);
}

/* FAKECUDA_KERNEL_US: a kernel runs at once (its bytes are there on return), but
** the GPU counts as busy for that long after the work before it: one queue for
** every stream, as one GPU running one stream's work at a time. */
void fake_gpu_kernel(void)
{
    if (g_kernel_us <= 0) return;
    unsigned long long now = mono_ns(), u = atomic_load(&g_gpu_until);
    atomic_store(&g_gpu_until, (u > now ? u : now) + (unsigned long long)g_kernel_us * 1000ull);
}

static bool gpu_busy(void) { return g_kernel_us > 0 && mono_ns() < atomic_load(&g_gpu_until); }

/* A synchronize returns when the GPU is done. */
static void gpu_wait(void)
{
    unsigned long long u;
    while (g_kernel_us > 0 && mono_ns() < (u = atomic_load(&g_gpu_until)))
        wait_until(u);
}

void fake_spend_us(long us)
{
    if (us > 0) wait_until(mono_ns() + (unsigned long long)us * 1000ull);
}

CUresult api_enter(bool need_ctx)
{
    fake_once();
    if (g_virtual) atomic_fetch_add(&g_vclock, FAKE_CALL_NS); /* no call takes no time */
    if (!g_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (need_ctx) {
        if (t_in_callback) return CUDA_ERROR_NOT_PERMITTED;
        if (g_sticky) return g_sticky;
        if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
        if (!reg_get(t_ctx, K_CTX)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    }
    return CUDA_SUCCESS;
}

CUresult fake_sticky(void)
{
    LOCK();
    CUresult rc = g_sticky;
    UNLOCK();
    return rc;
}

void fake_set_sticky(CUresult rc)
{
    LOCK();
    if (!g_sticky) g_sticky = rc;
    UNLOCK();
}

struct ctx *cur_ctx(void) { return t_ctx; }

double fake_now_ms(void) { return (double)mono_ns() / 1e6; }

/* ------------------------------------------------------------------------ */
/* init, version, device, context                                           */
/* ------------------------------------------------------------------------ */
CUresult x_Init(unsigned flags)
{
    fake_once();
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    g_inited = 1;
    return CUDA_SUCCESS;
}

CUresult x_DriverGetVersion(int *v)
{
    fake_once();
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = g_drv_version;
    return CUDA_SUCCESS;
}

CUresult x_DeviceGet(CUdevice *d, int ordinal)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult x_DeviceGetCount(int *n)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult x_DeviceGetName(char *name, int len, CUdevice d)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", "FakeCUDA CPU Device");
    return CUDA_SUCCESS;
}

CUresult x_DeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice d)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!pi || (int)a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    int v = 0;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = 8; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = 2; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1000000; break;
    default: v = 0; break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

CUresult x_DevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    g_primary.refcount++;
    UNLOCK();
    *pctx = (CUcontext)&g_primary;
    return CUDA_SUCCESS;
}

CUresult x_DevicePrimaryCtxRelease(CUdevice d)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    if (g_primary.refcount <= 0) rc = CUDA_ERROR_INVALID_CONTEXT;
    else g_primary.refcount--;
    UNLOCK();
    return rc;
}

static int arena_free(struct arena *a, uintptr_t p);

static void reset_stream(void *obj, void *arg)
{
    struct stream *s = obj;
    if (s->ctx != arg || s->special) return;
    if (s->cap) capture_invalidate(s->cap);
    reg_del(s); /* struct kept, as at cuStreamDestroy */
}

static void reset_event(void *obj, void *arg)
{
    (void)arg;
    reg_del(obj); /* struct kept: graph nodes may reference it */
}

/* Destroys every resource of the primary context, which stays retained and
** current where it was: its work finishes, its device and pinned memory
** (registered ranges too) are freed, its streams, modules and executables go.
** The fake does not know an event's context: every event goes.  Graphs, which
** belong to no context here, and virtual memory management's reservations and
** handles stay (not modelled). */
CUresult x_DevicePrimaryCtxReset(CUdevice d)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    queue_drain();
    LOCK();
    reg_each(K_STREAM, reset_stream, &g_primary);
    reg_each(K_EVENT, reset_event, NULL);
    modules_reset(&g_primary);
    execs_reset(&g_primary);
    for (size_t i = 0; i < g_dev.n;)
        if (g_dev.b[i].vmm || arena_free(&g_dev, g_dev.b[i].addr) != 0) i++;
    while (g_host.n)
        arena_free(&g_host, g_host.b[0].addr);
    g_nreg = 0;
    g_primary.flags = 0;
    UNLOCK();
    return CUDA_SUCCESS;
}

CUresult x_CtxCreate(CUcontext *pctx, unsigned flags, CUdevice d)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    struct ctx *c = calloc(1, sizeof *c);
    c->flags = flags;
    reg_add(c, K_CTX);
    t_ctx = c;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult x_CtxDestroy(CUcontext ctx)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    struct ctx *c = reg_get(ctx, K_CTX);
    if (!c || c->primary) return CUDA_ERROR_INVALID_CONTEXT;
    queue_drain(); /* its work finishes first */
    reg_del(c);
    if (t_ctx == c) t_ctx = NULL;
    /* the struct is kept: other threads may still have it current */
    return CUDA_SUCCESS;
}

CUresult x_CtxSetCurrent(CUcontext ctx)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (ctx && !reg_get(ctx, K_CTX)) return CUDA_ERROR_INVALID_CONTEXT;
    t_ctx = (struct ctx *)ctx;
    return CUDA_SUCCESS;
}

/* cuCtxPushCurrent / cuCtxPopCurrent: the thread's stack of current contexts. */
#define CTX_STACK 16
static __thread struct ctx *t_stack[CTX_STACK];
static __thread int t_depth;

CUresult x_CtxPushCurrent(CUcontext ctx)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!ctx || !reg_get(ctx, K_CTX)) return CUDA_ERROR_INVALID_CONTEXT;
    if (t_depth == CTX_STACK) return CUDA_ERROR_OUT_OF_MEMORY;
    t_stack[t_depth++] = t_ctx;
    t_ctx = (struct ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult x_CtxPopCurrent(CUcontext *pctx)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = (CUcontext)t_ctx;
    t_ctx = t_depth ? t_stack[--t_depth] : NULL;
    return CUDA_SUCCESS;
}

CUresult x_CtxGetCurrent(CUcontext *pctx)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)t_ctx;
    return CUDA_SUCCESS;
}

CUresult x_CtxGetDevice(CUdevice *d, CUcontext ctx, int explicit_ctx)
{
    CUresult rc = api_enter(!(explicit_ctx && ctx));
    if (rc) return rc;
    if (explicit_ctx && ctx && !reg_get(ctx, K_CTX)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult x_CtxSynchronize(CUcontext ctx, int explicit_ctx)
{
    CUresult rc = api_enter(!(explicit_ctx && ctx));
    if (rc) return rc;
    if (explicit_ctx && ctx && !reg_get(ctx, K_CTX)) return CUDA_ERROR_INVALID_CONTEXT;
    if (t_in_callback) return CUDA_ERROR_NOT_PERMITTED;
    /* Synchronizing a context that encompasses an ongoing capture is invalid
     * whatever the capture mode (CUDA programming guide, "Prohibited and
     * Unhandled Operations"). */
    fake_spend_us(g_ctx_sync_us); /* FAKECUDA_CTX_SYNC_US: before it looks */
    gpu_wait();
    LOCK();
    int hit = 0;
    for (struct capture *c = g_captures; c; c = c->next) { capture_invalidate(c); hit = 1; }
    UNLOCK();
    if (hit) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return queue_drain();
}

/* ------------------------------------------------------------------------ */
/* memory                                                                   */
/* ------------------------------------------------------------------------ */
bool in_arena(const struct arena *a, uintptr_t p)
{
    return a->base && p >= (uintptr_t)a->base && p < (uintptr_t)a->base + a->size;
}

struct block *arena_find(struct arena *a, uintptr_t p)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        struct block *b = &a->b[mid];
        if (p < b->addr) hi = mid;
        else if (p >= b->addr + b->size) lo = mid + 1;
        else return b;
    }
    return NULL;
}

/* An allocation takes the arena's memory (a->used, of a->size) and a range of
** its addresses; memory taken without addresses (exec_mem_take) counts too. */
static int arena_alloc(struct arena *a, size_t size, size_t align, uintptr_t *out)
{
    size_t need = (size + align - 1) & ~(align - 1);
    uintptr_t cur = (uintptr_t)a->base, end = cur + a->size;
    size_t pos = 0;
    if (need > a->size - a->used) return -1;
    for (; pos <= a->n; pos++) {
        uintptr_t next = pos < a->n ? a->b[pos].addr : end;
        if (next >= cur && next - cur >= need) break;
        if (pos < a->n) cur = (a->b[pos].addr + a->b[pos].size + align - 1) & ~(uintptr_t)(align - 1);
    }
    if (pos > a->n) return -1;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->b = realloc(a->b, a->cap * sizeof *a->b);
    }
    memmove(&a->b[pos + 1], &a->b[pos], (a->n - pos) * sizeof *a->b);
    a->b[pos] = (struct block){.addr = cur, .size = need, .req = size, .serial = ++g_serial};
    a->n++;
    a->used += need;
    *out = cur;
    return (int)pos;
}

static int arena_free(struct arena *a, uintptr_t p)
{
    struct block *b = arena_find(a, p);
    if (!b || b->addr != p) return -1;
    memset((void *)b->addr, POISON_BYTE, b->size);
    a->used -= b->size;
    size_t pos = (size_t)(b - a->b);
    memmove(&a->b[pos], &a->b[pos + 1], (a->n - pos - 1) * sizeof *a->b);
    a->n--;
    return 0;
}

bool pinned_find(uintptr_t p, uintptr_t *start, size_t *size, int *registered)
{
    bool r = false;
    LOCK();
    struct block *b = in_arena(&g_host, p) ? arena_find(&g_host, p) : NULL;
    if (b) {
        if (start) *start = b->addr;
        if (size) *size = b->req;
        if (registered) *registered = 0;
        r = true;
    } else {
        for (size_t i = 0; i < g_nreg; i++)
            if (p >= g_reg[i].p && p < g_reg[i].p + g_reg[i].size) {
                if (start) *start = g_reg[i].p;
                if (size) *size = g_reg[i].size;
                if (registered) *registered = 1;
                r = true;
                break;
            }
    }
    UNLOCK();
    return r;
}

uint64_t alloc_serial(uintptr_t p)
{
    uint64_t r = 0;
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p)
                      : in_arena(&g_host, p) ? arena_find(&g_host, p) : NULL;
    if (b) r = b->vmm ? vmm_serial(p) : b->serial;
    for (size_t i = 0; !b && i < g_nreg; i++)
        if (p >= g_reg[i].p && p < g_reg[i].p + g_reg[i].size)
            r = g_reg[i].serial;
    UNLOCK();
    return r;
}

bool alloc_pool(uintptr_t p)
{
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p) : NULL;
    bool r = b && b->pool;
    UNLOCK();
    return r;
}

bool alloc_vmm(uintptr_t p)
{
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p) : NULL;
    bool r = b && b->vmm;
    UNLOCK();
    return r;
}

bool dev_range_ok(uintptr_t p, size_t n)
{
    bool ok = false;
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p) : NULL;
    if (b && b->vmm) ok = vmm_range_ok(p, n);
    else if (b) ok = p < b->addr + b->req && p + n <= b->addr + b->req;
    else {
        uintptr_t s; size_t sz;
        if (pinned_find(p, &s, &sz, NULL)) ok = p + n <= s + sz;
    }
    UNLOCK();
    return ok;
}

CUresult mem_alloc_raw(CUdeviceptr *dptr, size_t size, int graph_owned, int pool)
{
    uintptr_t p;
    LOCK();
    int pos = arena_alloc(&g_dev, size, 256, &p);
    if (pos >= 0) {
        g_dev.b[pos].graph_owned = graph_owned;
        g_dev.b[pos].pool = pool;
    }
    UNLOCK();
    if (pos < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

/* Addresses without memory: the block's size is given back to the count. */
CUresult vmm_reserve(CUdeviceptr *ptr, size_t size, size_t align)
{
    uintptr_t p;
    LOCK();
    int pos = g_dev.size - g_dev.used >= size ? arena_alloc(&g_dev, size, align, &p) : -1;
    if (pos >= 0) {
        g_dev.b[pos].vmm = 1;
        g_dev.used -= g_dev.b[pos].size;
    }
    UNLOCK();
    if (pos < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *ptr = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

CUresult vmm_unreserve(CUdeviceptr ptr)
{
    struct block *b = arena_find(&g_dev, ptr);
    g_dev.used += b->size;
    return arena_free(&g_dev, ptr) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

uint64_t vmm_next_serial(void)
{
    return ++g_serial;
}

size_t exec_mem_size(size_t nodes)
{
    fake_once();
    return (g_exec_kb << 10) + (nodes << 10);
}

int graph_mem_take(void)
{
    int ok;
    fake_once();
    LOCK();
    ok = g_graph_taken || g_graph_kb << 10 <= g_dev.size - g_dev.used;
    if (ok && !g_graph_taken) {
        g_dev.used += g_graph_kb << 10;
        g_graph_taken = 1;
    }
    UNLOCK();
    return ok ? 0 : -1;
}

int exec_mem_take(size_t n)
{
    int ok;
    LOCK();
    ok = n <= g_dev.size - g_dev.used;
    if (ok) g_dev.used += n;
    UNLOCK();
    return ok ? 0 : -1;
}

void exec_mem_give(size_t n)
{
    LOCK();
    g_dev.used -= n;
    UNLOCK();
}

CUresult mem_free_raw(CUdeviceptr p)
{
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p) : NULL;
    int r = b && !b->vmm ? arena_free(&g_dev, p) : -1;
    UNLOCK();
    return r ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult x_MemAlloc(CUdeviceptr *dptr, size_t size)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!dptr || !size) return CUDA_ERROR_INVALID_VALUE;
    if ((rc = unsafe_check())) return rc;
    return mem_alloc_raw(dptr, size, 0, 0);
}

CUresult x_MemFree(CUdeviceptr p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if ((rc = unsafe_check())) return rc;
    queue_drain(); /* cudaFree waits for the device; cuMemFreeHost does not */
    return mem_free_raw(p);
}

CUresult x_MemGetInfo(size_t *fr, size_t *total)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!fr || !total) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *total = g_dev.size;
    *fr = g_dev.size - g_dev.used;
    UNLOCK();
    return CUDA_SUCCESS;
}

CUresult x_MemHostAlloc(void **pp, size_t size, unsigned flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pp || !size) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                            CU_MEMHOSTALLOC_WRITECOMBINED))
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t p;
    LOCK();
    int pos = arena_alloc(&g_host, size, 4096, &p);
    UNLOCK();
    if (pos < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *pp = (void *)p;
    return CUDA_SUCCESS;
}

CUresult x_MemFreeHost(void *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    int r = in_arena(&g_host, (uintptr_t)p) ? arena_free(&g_host, (uintptr_t)p) : -1;
    UNLOCK();
    return r ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult x_MemHostRegister(void *p, size_t size, unsigned flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p || !size) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                            CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY))
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a = (uintptr_t)p;
    LOCK();
    if (in_arena(&g_dev, a) || in_arena(&g_host, a)) rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    for (size_t i = 0; !rc && i < g_nreg; i++)
        if (a < g_reg[i].p + g_reg[i].size && g_reg[i].p < a + size)
            rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    if (!rc) {
        if (g_nreg == g_capreg) {
            g_capreg = g_capreg ? g_capreg * 2 : 16;
            g_reg = realloc(g_reg, g_capreg * sizeof *g_reg);
        }
        g_reg[g_nreg++] = (struct hreg){a, size, flags, ++g_serial};
    }
    UNLOCK();
    return rc;
}

CUresult x_MemHostUnregister(void *p)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    rc = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    LOCK();
    for (size_t i = 0; i < g_nreg; i++)
        if (g_reg[i].p == (uintptr_t)p) {
            g_reg[i] = g_reg[--g_nreg];
            rc = CUDA_SUCCESS;
            break;
        }
    UNLOCK();
    return rc;
}

CUresult x_MemHostGetDevicePointer(CUdeviceptr *pd, void *p, unsigned flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pd || flags) return CUDA_ERROR_INVALID_VALUE;
    if (!pinned_find((uintptr_t)p, NULL, NULL, NULL)) return CUDA_ERROR_INVALID_VALUE;
    *pd = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

static CUresult ptr_attr(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
    uintptr_t p = (uintptr_t)ptr, start = 0;
    size_t size = 0;
    int is_dev = 0, reg = 0;
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p) : NULL;
    if (b && !b->vmm) { is_dev = 1; start = b->addr; size = b->req; }
    else if (b) is_dev = vmm_mapping(p, &start, &size);   /* a mapping with access */
    UNLOCK();
    if (!is_dev && !pinned_find(p, &start, &size, &reg)) return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = (CUcontext)&g_primary; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = is_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (is_dev) return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)p; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = start; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(unsigned *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = start; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult x_PointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    return ptr_attr(data, attr, ptr);
}

CUresult x_PointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!attrs || !data) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
        if (ptr_attr(data[i], attrs[i], ptr) == CUDA_SUCCESS) continue;
        /* unrecognised pointers are not an error here: zero / unregistered */
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        case CU_POINTER_ATTRIBUTE_MAPPED:
            *(unsigned *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = -2; break;
        case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        case CU_POINTER_ATTRIBUTE_HOST_POINTER: case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: case CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(void **)data[i] = NULL; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* streams and capture core                                                 */
/* ------------------------------------------------------------------------ */
/* The default streams belong to a context, as on the real driver: each context
 * has its own legacy stream, and each thread a per-thread stream in each
 * context it uses.  With no context current, the primary context's. */
static struct ctx *default_ctx(void)
{
    return t_ctx ? t_ctx : &g_primary;
}

static struct stream *legacy_stream(void)
{
    struct ctx *c = default_ctx();
    LOCK();
    if (!c->legacy) {
        c->legacy = calloc(1, sizeof *c->legacy);
        c->legacy->special = S_LEGACY;
        c->legacy->ctx = c;
    }
    UNLOCK();
    return c->legacy;
}

static struct stream *per_thread_stream(void)
{
    struct ctx *c = default_ctx();
    struct pts *p;
    for (p = t_pts; p && p->s.ctx != c; p = p->next)
        ;
    if (!p) {
        p = calloc(1, sizeof *p);
        p->s.special = S_PERTHREAD;
        p->s.ctx = c;
        p->next = t_pts;
        t_pts = p;
    }
    return &p->s;
}

CUresult stream_resolve(CUstream h, int pt, struct stream **out)
{
    if (!h) *out = pt ? per_thread_stream() : legacy_stream();
    else if (h == CU_STREAM_LEGACY) *out = legacy_stream();
    else if (h == CU_STREAM_PER_THREAD) *out = per_thread_stream();
    else if (!(*out = reg_get(h, K_STREAM))) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

bool stream_capturing(const struct stream *s) { return s->cap != NULL; }

void capture_invalidate(struct capture *c)
{
    if (c && c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
        c->invalidated = 1;
    }
}

bool stream_blocking(const struct stream *s)
{
    return s->special == S_PERTHREAD || !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* What a synchronize or query of s waits for under FAKECUDA_PENDING: its own
 * last op.  Not a legacy-stream action issued after it, even where s is
 * blocking: measured on an H200 (bench/ptds_legacy_probe.cu), a
 * cudaStreamSynchronize or cudaStreamQuery of a thread's per-thread stream
 * returned before a kernel another thread had launched on the legacy stream
 * after that stream's last op; an event recorded on the per-thread stream
 * did wait for it (an action of a blocking stream waits on the legacy
 * stream's earlier work, which the FIFO's order gives). */
static uint64_t stream_target(const struct stream *s)
{
    return s->last_seq;
}

/* An operation on the legacy stream while a blocking stream of its context
 * captures (the legacy stream synchronizes with the blocking streams of its
 * own context only). */
static CUresult legacy_check(const struct stream *legacy, bool invalidate)
{
    int hit = 0;
    for (struct capture *c = g_captures; c; c = c->next)
        for (size_t i = 0; i < c->nstreams; i++)
            if (stream_blocking(c->streams[i]) && c->streams[i]->ctx == legacy->ctx) {
                if (invalidate) capture_invalidate(c);
                hit = 1;
                break;
            }
    return hit ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

CUresult stream_prep(CUstream h, int pt, struct stream **out)
{
    LOCK();
    CUresult rc = stream_resolve(h, pt, out);
    if (!rc && (*out)->special == S_LEGACY) rc = legacy_check(*out, true);
    if (!rc && (*out)->cap && (*out)->cap->status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
        rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    UNLOCK();
    return rc;
}

/* "Potentially unsafe" calls (synchronous copies/memsets, cuMemAlloc, cuMemFree)
 * under the capture-interaction rules of cuThreadExchangeStreamCaptureMode. */
CUresult unsafe_check(void)
{
    if (t_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
    int hit = 0;
    pthread_t self = pthread_self();
    LOCK();
    for (struct capture *c = g_captures; c; c = c->next) {
        bool mine = pthread_equal(c->thread, self);
        if ((mine && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
            (!mine && t_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
             c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            capture_invalidate(c);
            hit = 1;
        }
    }
    UNLOCK();
    return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

static void set_deps(struct stream *s, struct node *const *d, size_t n)
{
    if (n > s->capdeps) {
        s->capdeps = n < 4 ? 4 : n;
        s->deps = realloc(s->deps, s->capdeps * sizeof *s->deps);
    }
    if (n) memmove(s->deps, d, n * sizeof *d);
    s->ndeps = n;
}

static void add_deps(struct stream *s, struct node *const *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < s->ndeps; j++) if (s->deps[j] == d[i]) break;
        if (j < s->ndeps) continue;
        if (s->ndeps == s->capdeps) {
            s->capdeps = s->capdeps ? s->capdeps * 2 : 4;
            s->deps = realloc(s->deps, s->capdeps * sizeof *s->deps);
        }
        s->deps[s->ndeps++] = d[i];
    }
}

CUresult stream_submit(struct stream *s, struct node *tmpl)
{
    LOCK();
    if (s->cap) {
        if (tmpl->type == CU_GRAPH_NODE_TYPE_KERNEL && tmpl->u.k.kd)
            tmpl->u.k.kd->captured++;
        fake_count_op(tmpl->type, true);
        struct node *n = graph_append(s->cap->graph, tmpl, s->deps, s->ndeps);
        set_deps(s, &n, 1);
        UNLOCK();
        return CUDA_SUCCESS;
    }
    CUresult rc = CUDA_SUCCESS;
    if (!fake_pending()) {
        rc = node_run(tmpl);
        node_payload_free(tmpl);
    } else if (tmpl->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
        rc = queue_copy(s, tmpl);
    } else {
        queue_node(s, tmpl, NULL);
    }
    if (!rc)
        fake_count_op(tmpl->type, false);
    UNLOCK();
    if (!rc && tmpl->type == CU_GRAPH_NODE_TYPE_KERNEL) /* FAKECUDA_LAUNCH_US: not into a capture */
        fake_spend_us(g_launch_us);
    return rc;
}

static void capture_join(struct capture *c, struct stream *s)
{
    if (c->nstreams == c->capstreams) {
        c->capstreams = c->capstreams ? c->capstreams * 2 : 4;
        c->streams = realloc(c->streams, c->capstreams * sizeof *c->streams);
    }
    c->streams[c->nstreams++] = s;
    s->cap = c;
    s->ndeps = 0;
}

static void capture_leave(struct capture *c, struct stream *s)
{
    for (size_t i = 0; i < c->nstreams; i++)
        if (c->streams[i] == s) { c->streams[i] = c->streams[--c->nstreams]; break; }
    s->cap = NULL;
    s->ndeps = 0;
}

static void capture_end(struct capture *c)
{
    for (size_t i = 0; i < c->nstreams; i++) { c->streams[i]->cap = NULL; c->streams[i]->ndeps = 0; }
    c->nstreams = 0;
    c->status = CU_STREAM_CAPTURE_STATUS_NONE;
    for (struct capture **pp = &g_captures; *pp; pp = &(*pp)->next)
        if (*pp == c) { *pp = c->next; break; }
    /* the struct itself is kept: events may still point at it */
}

CUresult x_StreamCreate(CUstream *ph, unsigned flags, int prio)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s = calloc(1, sizeof *s);
    s->flags = flags;
    s->prio = prio > 0 ? 0 : prio < -5 ? -5 : prio;
    s->ctx = t_ctx;
    reg_add(s, K_STREAM);
    *ph = (CUstream)s;
    return CUDA_SUCCESS;
}

CUresult x_StreamDestroy(CUstream h)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct stream *s = reg_get(h, K_STREAM);
    if (!s) { UNLOCK(); return CUDA_ERROR_INVALID_HANDLE; }
    if (fake_pending()) queue_complete(stream_target(s)); /* its work finishes */
    if (s->cap) {
        struct capture *c = s->cap;
        if (c->origin == s) {
            capture_invalidate(c);
            capture_end(c);
            graph_free(c->graph);
            c->graph = NULL;
        } else {
            /* a forked stream leaves; the capture goes on (measured:
            ** bench/xstream_probe.cu, "cuStreamDestroy of the fork") */
            capture_leave(c, s);
        }
    }
    reg_del(s);
    /* struct kept (captures may reference it); dependency array released */
    free(s->deps); s->deps = NULL; s->capdeps = 0;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult sync_or_query(CUstream h, int pt, bool query)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct stream *s;
    LOCK();
    rc = stream_resolve(h, pt, &s);
    if (!rc && s->cap) {
        capture_invalidate(s->cap);
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (!rc && s->special == S_LEGACY) rc = legacy_check(s, true);
    UNLOCK();
    if (!rc && fake_pending())
        rc = query ? queue_query(stream_target(s), &s->q_seq, &s->q_count) : queue_complete(stream_target(s));
    if (!rc && query && gpu_busy()) rc = CUDA_ERROR_NOT_READY;
    if (!rc && !query) gpu_wait();
    return rc;
}

CUresult x_StreamSynchronize(CUstream h, int pt) { return sync_or_query(h, pt, false); }
CUresult x_StreamQuery(CUstream h, int pt) { return sync_or_query(h, pt, true); }

CUresult x_StreamGetFlags(CUstream h, unsigned *flags, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    if ((rc = stream_resolve(h, pt, &s))) return rc;
    *flags = s->flags;
    return CUDA_SUCCESS;
}

CUresult x_StreamGetCtx(CUstream h, CUcontext *ctx, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    if ((rc = stream_resolve(h, pt, &s))) return rc;
    *ctx = (CUcontext)(s->ctx ? s->ctx : cur_ctx());
    return CUDA_SUCCESS;
}

/* e's last record was in its capture (e->cap): a captured record, or a
** record node (ext) */
static bool event_in_capture(const struct event *e, int ext)
{
    return e->cap && e->cap->id == e->cap_id && !e->ext == !ext;
}

static bool event_captured(const struct event *e)
{
    return event_in_capture(e, 0) && e->cap->status != CU_STREAM_CAPTURE_STATUS_NONE;
}

CUresult x_StreamWaitEvent(CUstream h, CUevent he, unsigned flags, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct event *e = reg_get(he, K_EVENT);
    struct stream *s;
    if (!e) { rc = CUDA_ERROR_INVALID_HANDLE; goto out; }
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) { rc = CUDA_ERROR_INVALID_VALUE; goto out; }
    if ((rc = stream_prep(h, pt, &s))) goto out;
    /* "This flag is invalid outside of stream capture" (cuda.h): 401, illegal state
     * (measured: bench/xstream_probe.cu, "external flags outside a capture") */
    if ((flags & CU_EVENT_WAIT_EXTERNAL) && !s->cap) { rc = CUDA_ERROR_ILLEGAL_STATE; goto out; }
    if (flags & CU_EVENT_WAIT_EXTERNAL) {
        struct node t = {.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT};
        t.u.ev = e;
        e->graphed = 1;
        rc = stream_submit(s, &t);
        goto out;
    }
    if (event_captured(e)) {
        struct capture *c = e->cap;
        if (!s->cap) {
            if (s->special == S_LEGACY) { capture_invalidate(c); rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT; goto out; }
            capture_join(c, s);
            set_deps(s, e->deps, e->ndeps);
        } else if (s->cap == c) {
            add_deps(s, e->deps, e->ndeps);
        } else {
            capture_invalidate(s->cap);
            capture_invalidate(c);
            rc = CUDA_ERROR_STREAM_CAPTURE_MERGE;
        }
        goto out;
    }
    if (s->cap && event_in_capture(e, 0)) {
        /* last recorded in a capture that ended: a capture's wait on it gives 1
         * and invalidates it (measured: "... after a launch; a new capture
         * waits") */
        capture_invalidate(s->cap);
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (s->cap && e->recorded) {
        /* waiting on a non-captured event from a capturing stream */
        capture_invalidate(s->cap);
        rc = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    } else if (!s->cap && fake_pending()) {
        /* The wait is the stream's work: a synchronize of the stream waits for
         * the event's work too (and, on the legacy stream, for the blocking
         * streams' earlier work); issue order already orders what follows. */
        struct node t = {.type = CU_GRAPH_NODE_TYPE_EMPTY};
        queue_wait(s, &t, NULL, e);
    }
out:
    UNLOCK();
    return rc;
}

CUresult x_LaunchHostFunc(CUstream h, CUhostFn fn, void *ud, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    LOCK();
    if (!(rc = stream_prep(h, pt, &s))) {
        struct node t = {.type = CU_GRAPH_NODE_TYPE_HOST};
        t.u.host.fn = fn;
        t.u.host.userData = ud;
        rc = stream_submit(s, &t);
    }
    UNLOCK();
    return rc;
}

/* cuStreamWriteValue32: a 32-bit store in stream order, modelled as a host node. */
struct write_value { CUdeviceptr addr; unsigned value; };
static void write_value_fn(void *ud)
{
    struct write_value *w = ud;
    *(volatile unsigned *)(uintptr_t)w->addr = w->value;
}

CUresult x_StreamWriteValue32(CUstream h, CUdeviceptr addr, unsigned value, unsigned flags, int pt)
{
    struct write_value *w;
    if (!addr || (addr & 3) || flags) return CUDA_ERROR_INVALID_VALUE;
    if (!(w = malloc(sizeof *w))) return CUDA_ERROR_OUT_OF_MEMORY;
    w->addr = addr;
    w->value = value;
    return x_LaunchHostFunc(h, write_value_fn, w, pt); /* held by the node: never freed */
}

CUresult x_StreamAddCallback(CUstream h, CUstreamCallback cb, void *ud, unsigned flags, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!cb || flags) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    LOCK();
    rc = stream_prep(h, pt, &s);
    if (!rc && s->cap) {     /* stream callbacks cannot be captured */
        capture_invalidate(s->cap);
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (!rc && fake_pending()) queue_callback(s, cb, h, ud);
    UNLOCK();
    if (rc || fake_pending()) return rc;
    t_in_callback++;
    cb(h, CUDA_SUCCESS, ud);
    t_in_callback--;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* events                                                                   */
/* ------------------------------------------------------------------------ */
static struct event *g_free_events; /* destroyed, named by no graph node: made again first */

CUresult x_EventCreate(CUevent *ph, unsigned flags)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_VALUE;
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    /* A destroyed event's handle comes back first, as the driver gives it
    ** (measured on an H100: PyTorch's 12 events of 6 forks and joins, made and
    ** destroyed in turn, had 7 handles); FAKECUDA_EVENT_REUSE=0: never. */
    LOCK();
    struct event *e = g_free_events;
    if (e) {
        g_free_events = e->next_free;
        memset(e, 0, sizeof *e);
    }
    UNLOCK();
    if (!e && !(e = calloc(1, sizeof *e)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = flags;
    reg_add(e, K_EVENT);
    *ph = (CUevent)e;
    return CUDA_SUCCESS;
}

/* A record completes when the GPU has run the work before it: with
** FAKECUDA_KERNEL_US, at the end of the GPU's busy time (one queue for every
** stream), which its synchronize waits for and its time reads. */
void event_mark(struct event *e)
{
    unsigned long long now = mono_ns(), u = g_kernel_us > 0 ? atomic_load(&g_gpu_until) : 0;
    e->recorded = 1;
    e->done_ns = u > now ? u : now;
    e->t_ms = (double)e->done_ns / 1e6;
    e->cap = NULL;
    e->ext = 0;
}

CUresult x_EventRecord(CUevent he, CUstream h, unsigned flags, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct event *e = reg_get(he, K_EVENT);
    struct stream *s;
    if (!e) rc = CUDA_ERROR_INVALID_HANDLE;
    else if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL) rc = CUDA_ERROR_INVALID_VALUE;
    else if (!(rc = stream_prep(h, pt, &s))) {
        if (!s->cap && (flags & CU_EVENT_RECORD_EXTERNAL)) {
            rc = CUDA_ERROR_ILLEGAL_STATE; /* invalid outside of capture, as the wait's flag */
        } else if (flags & CU_EVENT_RECORD_EXTERNAL) {
            struct node t = {.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD};
            t.u.ev = e;
            e->graphed = 1;
            if (!(rc = stream_submit(s, &t))) {
                e->cap = s->cap;
                e->cap_id = s->cap->id;
                e->ext = 1;
            }
        } else if (s->cap) {
            e->cap = s->cap;
            e->cap_id = s->cap->id;
            e->ext = 0;
            e->deps = realloc(e->deps, (s->ndeps ? s->ndeps : 1) * sizeof *e->deps);
            if (s->ndeps) memcpy(e->deps, s->deps, s->ndeps * sizeof *e->deps);
            e->ndeps = s->ndeps;
        } else if (fake_pending()) {
            queue_record(s, e);
        } else {
            event_mark(e);
        }
    }
    UNLOCK();
    return rc;
}

/* The event he, for a query or a synchronize: CUDA_SUCCESS and *out, or why
 * it cannot be waited for.  Measured (bench/xstream_probe.cu): a query of an
 * event last recorded in an active capture gives 907 and invalidates the
 * capture; then, and once it ended, the event gives 1 until it is recorded
 * again; so does an event last recorded in a capture that ended well, also
 * after the graph's launch ("... after a launch; a new capture waits").  A query of an event last recorded by a record node
 * (CU_EVENT_RECORD_EXTERNAL) of an active capture gives 900 and invalidates
 * it.  A synchronize is taken to do as a query does. */
static CUresult event_to_wait(CUevent he, struct event **out)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct event *e = reg_get(he, K_EVENT);
    if (!e) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    } else if (event_in_capture(e, 0) && (e->cap->invalidated || e->cap->status == CU_STREAM_CAPTURE_STATUS_NONE)) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (event_captured(e)) {
        capture_invalidate(e->cap);
        rc = CUDA_ERROR_CAPTURED_EVENT;
    } else if (event_in_capture(e, 1) && e->cap->status != CU_STREAM_CAPTURE_STATUS_NONE) {
        capture_invalidate(e->cap);
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    UNLOCK();
    *out = e;
    return rc;
}

CUresult x_EventQuery(CUevent he)
{
    struct event *e;
    CUresult rc = event_to_wait(he, &e);
    if (!rc && fake_pending()) rc = queue_query(e->seq, &e->q_seq, &e->q_count);
    if (!rc && e->recorded && mono_ns() < e->done_ns) rc = CUDA_ERROR_NOT_READY;
    return rc;
}

CUresult x_EventSynchronize(CUevent he)
{
    struct event *e;
    CUresult rc = event_to_wait(he, &e);
    if (!rc && fake_pending()) rc = queue_complete(e->seq);
    if (!rc && e->recorded) wait_until(e->done_ns); /* the GPU's work before the record */
    return rc;
}

CUresult x_EventElapsedTime(float *ms, CUevent ha, CUevent hb)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct event *a = reg_get(ha, K_EVENT), *b = reg_get(hb, K_EVENT);
    if (!a || !b) rc = CUDA_ERROR_INVALID_HANDLE;
    else if (event_captured(a) || event_captured(b)) rc = CUDA_ERROR_CAPTURED_EVENT;
    else if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!a->recorded || !b->recorded) rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!queue_done(a->seq) || !queue_done(b->seq)) rc = CUDA_ERROR_NOT_READY; /* no wait */
    else *ms = (float)(b->t_ms - a->t_ms);
    UNLOCK();
    return rc;
}

CUresult x_EventDestroy(CUevent he)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct event *e = reg_get(he, K_EVENT);
    if (!e) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    } else {
        reg_del(e); /* struct kept: graph nodes may reference it; where none does, made again */
        if (!e->graphed && g_event_reuse) {
            e->next_free = g_free_events;
            g_free_events = e;
        }
    }
    UNLOCK();
    return rc;
}

/* ------------------------------------------------------------------------ */
/* stream capture                                                           */
/* ------------------------------------------------------------------------ */
/* A capture into graph g (NULL: a new one) whose first node depends on the n
** nodes deps of g. */
static CUresult begin_capture(CUstream h, struct graph *g, const CUgraphNode *deps, size_t n,
                              CUstreamCaptureMode mode, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    LOCK();
    if ((rc = stream_resolve(h, pt, &s))) goto out;
    if (s->special == S_LEGACY) { rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; goto out; }
    if (s->cap) { rc = CUDA_ERROR_ILLEGAL_STATE; goto out; }
    for (size_t i = 0; i < n; i++) {
        struct node *d = reg_get(deps[i], K_NODE);
        if (!d || d->g != g) { rc = CUDA_ERROR_INVALID_VALUE; goto out; }
    }
    struct capture *c = calloc(1, sizeof *c);
    c->id = ++g_capture_ids;
    c->mode = mode;
    c->status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    c->graph = g ? g : graph_new(1);
    c->to_graph = g != NULL;
    c->origin = s;
    c->thread = pthread_self();
    c->next = g_captures;
    g_captures = c;
    capture_join(c, s);
    add_deps(s, (struct node *const *)deps, n);
out:
    UNLOCK();
    if (!rc) /* FAKECUDA_CAPTURE_US: the capture stays open, other threads meet it */
        fake_spend_us(g_capture_us);
    return rc;
}

CUresult x_StreamBeginCapture(CUstream h, CUstreamCaptureMode mode, int pt)
{
    return begin_capture(h, NULL, NULL, 0, mode, pt);
}

/* Capture into the program's graph g, the first node after deps (CUDA 12.3).
** Edge data other than the default (all zero) is not modelled: the fake
** refuses it with CUDA_ERROR_NOT_SUPPORTED. */
CUresult x_StreamBeginCaptureToGraph(CUstream h, CUgraph hg, const CUgraphNode *deps, const CUgraphEdgeData *data,
                                     size_t n, CUstreamCaptureMode mode, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct graph *g = reg_get(hg, K_GRAPH);
    if (!g || (n && !deps)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; data && i < n; i++) {
        static const CUgraphEdgeData zero;
        if (memcmp(&data[i], &zero, sizeof zero)) return CUDA_ERROR_NOT_SUPPORTED;
    }
    return begin_capture(h, g, deps, n, mode, pt);
}

static void mark_ancestors(struct node *n, char *seen)
{
    if (seen[n->idx]) return;
    seen[n->idx] = 1;
    for (size_t i = 0; i < n->ndeps; i++) mark_ancestors(n->deps[i], seen);
}

CUresult x_StreamEndCapture(CUstream h, CUgraph *pg, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pg) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    LOCK();
    if ((rc = stream_resolve(h, pt, &s))) goto out;
    struct capture *c = s->cap;
    if (!c) { rc = CUDA_ERROR_ILLEGAL_STATE; goto out; }
    if (c->origin != s) { /* measured: the capture is invalidated (bench/xstream_probe.cu) */
        capture_invalidate(c);
        rc = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
        goto out;
    }
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self())) {
        rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
        goto out;
    }
    if (c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        char *seen = calloc(c->graph->n + 1, 1);
        for (size_t i = 0; i < s->ndeps; i++) mark_ancestors(s->deps[i], seen);
        for (size_t k = 0; k < c->nstreams && !rc; k++) {
            struct stream *t = c->streams[k];
            if (t == s) continue;
            for (size_t i = 0; i < t->ndeps; i++)
                if (!seen[t->deps[i]->idx]) { rc = CUDA_ERROR_STREAM_CAPTURE_UNJOINED; break; }
        }
        free(seen);
    } else {
        rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    capture_end(c);
    if (rc) {
        if (!c->to_graph) /* the program's own graph stays its, with what was captured */
            graph_free(c->graph);
        *pg = NULL;
    } else {
        *pg = (CUgraph)c->graph;
    }
    c->graph = NULL;
out:
    UNLOCK();
    return rc;
}

CUresult x_StreamGetCaptureInfo(CUstream h, CUstreamCaptureStatus *st, cuuint64_t *id,
                                CUgraph *g, const CUgraphNode **deps,
                                const CUgraphEdgeData **edges, size_t *ndeps, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    LOCK();
    if ((rc = stream_resolve(h, pt, &s))) goto out;
    if (s->special == S_LEGACY && (rc = legacy_check(s, false))) goto out;
    struct capture *c = s->cap;
    *st = c ? (CUstreamCaptureStatus)c->status : CU_STREAM_CAPTURE_STATUS_NONE;
    if (id && c) *id = c->id;
    bool active = c && c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (g) *g = active ? (CUgraph)c->graph : NULL;
    if (deps) *deps = active ? (const CUgraphNode *)s->deps : NULL;
    if (edges) *edges = NULL;
    if (ndeps) *ndeps = active ? s->ndeps : 0;
out:
    UNLOCK();
    return rc;
}

CUresult x_StreamIsCapturing(CUstream h, CUstreamCaptureStatus *st, int pt)
{
    return x_StreamGetCaptureInfo(h, st, NULL, NULL, NULL, NULL, NULL, pt);
}

CUresult x_ThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = t_mode;
    t_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* copies and memsets                                                       */
/* ------------------------------------------------------------------------ */
/* side: 0 host, 1 device, 2 unified (cuMemcpy / cuMemcpyAsync) */
static CUmemorytype side_type(int side, uintptr_t p)
{
    if (side == 0) return CU_MEMORYTYPE_HOST;
    if (side == 1) return CU_MEMORYTYPE_DEVICE;
    return in_arena(&g_dev, p) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
}

static bool side_ok(int side, uintptr_t p, size_t n)
{
    if (!p) return false;
    if (side_type(side, p) == CU_MEMORYTYPE_DEVICE) return dev_range_ok(p, n);
    return true;
}

CUresult x_Memcpy(uintptr_t dst, int dside, uintptr_t src, int sside, size_t n,
                  int async, CUstream h, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (n && (!side_ok(dside, dst, n) || !side_ok(sside, src, n))) return CUDA_ERROR_INVALID_VALUE;
    struct node t = {.type = CU_GRAPH_NODE_TYPE_MEMCPY};
    t.u.cp.srcMemoryType = side_type(sside, src);
    t.u.cp.dstMemoryType = side_type(dside, dst);
    if (t.u.cp.srcMemoryType == CU_MEMORYTYPE_HOST) t.u.cp.srcHost = (const void *)src;
    else t.u.cp.srcDevice = src;
    if (t.u.cp.dstMemoryType == CU_MEMORYTYPE_HOST) t.u.cp.dstHost = (void *)dst;
    else t.u.cp.dstDevice = dst;
    t.u.cp.WidthInBytes = n;
    t.u.cp.Height = 1;
    t.u.cp.Depth = 1;
    struct stream *s;
    LOCK();
    if (async) {
        if (!(rc = stream_prep(h, pt, &s))) rc = stream_submit(s, &t);
    } else if (!(rc = unsafe_check())) {
        rc = stream_resolve(NULL, pt, &s);
        if (s->cap) { capture_invalidate(s->cap); rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
        else if (s->special == S_LEGACY) rc = legacy_check(s, true);
        if (!rc) queue_drain(); /* a synchronous copy or memset waits for earlier work */
        if (!rc) rc = node_run(&t);
    }
    UNLOCK();
    return rc;
}

CUresult x_Memset(CUdeviceptr dst, unsigned value, unsigned esize, size_t n,
                  int async, CUstream h, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (dst % esize) return CUDA_ERROR_INVALID_VALUE;
    if (n && !dev_range_ok(dst, n * esize)) return CUDA_ERROR_INVALID_VALUE;
    struct node t = {.type = CU_GRAPH_NODE_TYPE_MEMSET};
    t.u.ms.dst = dst;
    t.u.ms.value = value;
    t.u.ms.elementSize = esize;
    t.u.ms.width = n;
    t.u.ms.height = 1;
    t.u.ms.pitch = n * esize;
    struct stream *s;
    LOCK();
    if (async) {
        if (!(rc = stream_prep(h, pt, &s))) rc = stream_submit(s, &t);
    } else if (!(rc = unsafe_check())) {
        rc = stream_resolve(NULL, pt, &s);
        if (s->cap) { capture_invalidate(s->cap); rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; }
        else if (s->special == S_LEGACY) rc = legacy_check(s, true);
        if (!rc) queue_drain(); /* a synchronous copy or memset waits for earlier work */
        if (!rc) rc = node_run(&t);
    }
    UNLOCK();
    return rc;
}

CUresult x_MemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream h, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!dptr || !size) return CUDA_ERROR_INVALID_VALUE;
    struct stream *s;
    LOCK();
    if ((rc = stream_prep(h, pt, &s))) goto out;
    if ((rc = mem_alloc_raw(dptr, size, s->cap != NULL, 1))) goto out;
    if (s->cap) {
        struct node t = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC};
        t.u.ma.p = *dptr;
        t.u.ma.size = size;
        rc = stream_submit(s, &t);
    }
out:
    UNLOCK();
    return rc;
}

CUresult x_MemFreeAsync(CUdeviceptr p, CUstream h, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct stream *s;
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p) : NULL;
    if (!b || b->addr != p || b->vmm) rc = CUDA_ERROR_INVALID_VALUE;
    else if (!(rc = stream_prep(h, pt, &s))) {
        if (s->cap) {
            struct node t = {.type = CU_GRAPH_NODE_TYPE_MEM_FREE};
            t.u.mf = p;
            rc = stream_submit(s, &t);
        } else {
            /* freed in stream order: after the stream's work, and on a blocking
             * stream after the legacy stream's earlier work too (an action of a
             * blocking stream waits on it) */
            uint64_t upto = stream_target(s);
            if (stream_blocking(s) && s->ctx && s->ctx->legacy && s->ctx->legacy->last_seq > upto)
                upto = s->ctx->legacy->last_seq;
            if (fake_pending()) queue_complete(upto);
            rc = mem_free_raw(p);
        }
    }
    UNLOCK();
    return rc;
}

/* Executes a CUDA_MEMCPY3D (host / device / unified operands, no arrays). */
CUresult run_copy3d(const CUDA_MEMCPY3D *p)
{
    size_t w = p->WidthInBytes, hgt = p->Height ? p->Height : 1, dep = p->Depth ? p->Depth : 1;
    size_t sp = p->srcPitch ? p->srcPitch : w, dp = p->dstPitch ? p->dstPitch : w;
    size_t sh = p->srcHeight ? p->srcHeight : hgt, dh = p->dstHeight ? p->dstHeight : hgt;
    uintptr_t sb = p->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->srcHost : p->srcDevice;
    uintptr_t db = p->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->dstHost : p->dstDevice;
    if (!w) return CUDA_SUCCESS;
    size_t soff = ((p->srcZ * sh) + p->srcY) * sp + p->srcXInBytes;
    size_t doff = ((p->dstZ * dh) + p->dstY) * dp + p->dstXInBytes;
    size_t sspan = ((dep - 1) * sh + (hgt - 1)) * sp + w, dspan = ((dep - 1) * dh + (hgt - 1)) * dp + w;
    if (p->srcMemoryType != CU_MEMORYTYPE_HOST && in_arena(&g_dev, sb) && !dev_range_ok(sb + soff, sspan))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (p->dstMemoryType != CU_MEMORYTYPE_HOST && in_arena(&g_dev, db) && !dev_range_ok(db + doff, dspan))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    for (size_t z = 0; z < dep; z++)
        for (size_t y = 0; y < hgt; y++)
            memmove((char *)db + doff + (z * dh + y) * dp, (const char *)sb + soff + (z * sh + y) * sp, w);
    return CUDA_SUCCESS;
}

CUresult run_memset(const CUDA_MEMSET_NODE_PARAMS *m)
{
    size_t rowbytes = m->width * m->elementSize;
    size_t span = m->height ? (m->height - 1) * m->pitch + rowbytes : 0;
    if (span && !dev_range_ok(m->dst, span)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    for (size_t y = 0; y < m->height; y++) {
        char *row = (char *)(uintptr_t)m->dst + y * m->pitch;
        for (size_t i = 0; i < m->width; i++) {
            if (m->elementSize == 1) ((uint8_t *)row)[i] = (uint8_t)m->value;
            else if (m->elementSize == 2) ((uint16_t *)row)[i] = (uint16_t)m->value;
            else ((uint32_t *)row)[i] = m->value;
        }
    }
    return CUDA_SUCCESS;
}

void run_memfree(CUdeviceptr p)
{
    LOCK();
    struct block *b = in_arena(&g_dev, p) ? arena_find(&g_dev, p) : NULL;
    if (b) memset((void *)b->addr, POISON_BYTE, b->size);
    UNLOCK();
}
