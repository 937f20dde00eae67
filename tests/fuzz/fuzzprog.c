/*
** fuzzprog.c: one random driver-API program per seed, for differential fuzzing
** of graphshim over the fake driver (tests/fuzz/README.md).
**
**   fuzzprog SEED [MAX_THREADS]
**
** The seed picks 1 to 8 threads.  Each thread, with its own random generator,
** defines kernels of random layouts (fakecuda_define_kernel), makes its own
** streams, events, device buffers and pinned buffers, generates a random loop
** BODY of ops and boundaries, and runs it ITERS times with small random
** per-iteration variations (changed arguments or pointers, a skipped or repeated
** op, an extra boundary, an invalid launch, a module reloaded behind a reused
** handle), so that under graphshim the body's sequences become stable, are held
** and replayed.  What the program observes (buffers after syncs and D2H copies,
** host functions' readings) and the return code of every driver call go to the
** thread's output as digests; at the end main prints every thread's output in
** thread order.  The same seed prints the same text with and without the shim.
**
** The program is race-free by the rules of the real driver, so that any order
** the shim may legitimately choose gives the same result: every buffer is
** owned by one stream at a time and changes owner only through an event
** recorded on the old owner and waited on by the new one (a "handoff"); the host
** reads pinned memory only after synchronizing its owner, writes pinned memory
** only after a context synchronize, and rewrites a pageable source right after
** its copy returns (which the driver allows).
**
** A thread with memory ops (most threads; decided apart from the generator, so
** that a thread without them is the program the same seed made before they
** existed) also frees and allocates again, between segments, its pinned
** buffers (as cuMemAllocHost, cuMemHostAlloc, registered or plain pageable
** memory), its pageable buffers (malloc or mmap) and device buffers (with a
** smaller allocation taking the freed address), frees and allocates the
** pageable source of an H2D copy right after the call returns, and defines
** large-parameter kernels (one struct of 4 KiB to 32,000 bytes by value).
** FUZZ_CLASSIC=1 leaves the memory ops out of every thread.
**
** Divided into: random numbers and digests; kernels (one trampoline per
** definition, all mixing every parameter byte); generation of the body; running
** it; threads and main.
*/
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <sys/mman.h>
#include <cuda.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"

#define MAX_THREADS 8
#define NDEV 6           /* device buffers per thread */
#define NKS 4            /* kernel slots per thread, each with a global */
#define NPIN 2           /* pinned buffers per thread */
#define NRES (NDEV + NKS + NPIN)
#define RES_GLOB(k) (NDEV + (k))
#define RES_PIN(p) (NDEV + NKS + (p))
#define BUF_BYTES 4096   /* every buffer; globals use their first 8 bytes */
#define MAX_CREATED 4    /* created streams per thread */
#define NSTREAMS (MAX_CREATED + 2)
#define MAX_EVENTS 48
#define MAX_OPS 256
#define MAX_PARAMS 64
#define PARAM_BYTES_MAX 32764
#define MAX_KDEFS 128    /* kernel definitions of the whole program */
#ifndef MAX_RELOADS
#define MAX_RELOADS 6    /* module reloads per thread */
#endif

/* --- Random numbers and digests ------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A number in [0, n). */
static unsigned rnd(uint64_t *s, unsigned n)
{
    return n ? (unsigned)(splitmix(s) % n) : 0;
}

/* True with probability pct percent. */
static int chance(uint64_t *s, unsigned pct)
{
    return rnd(s, 100) < pct;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* --- Per-thread state ------------------------------------------------------ */

struct kdesc;

/* What one launch, copy, memset or boundary of the body does. */
enum op_kind {
    OP_LAUNCH, OP_H2D, OP_D2H, OP_D2D, OP_MEMSET, OP_HANDOFF, OP_HOSTFN, OP_SSYNC,
    OP_CSYNC, OP_ESYNC, OP_SQUERY, OP_OBSERVE, OP_REALLOC, OP_SCRATCH, OP_BAD,
    OP_PINREALLOC, OP_PAGEREALLOC,  /* threads with memory ops only */
    OP_EQUERY, OP_SSPIN, OP_NCCL    /* threads with event ops only */
};

/* How a pinned slot's memory was allocated (memory ops change it). */
enum pin_kind { PIN_ALLOCHOST, PIN_HOSTALLOC, PIN_REGISTERED, PIN_PAGEABLE };

struct op {
    enum op_kind kind;
    int s;              /* stream index (see struct thr.streams) */
    int pt;             /* call the _ptsz variant */
    int zero;           /* pass stream 0 for a default stream */
    /* launches */
    int ks, how, nattr, attr_kind[4], every_iter;
    unsigned grid[3], block[3], shmem;
    uint64_t argseed;
    int out_r, out_off, in_r, in_off, alt_off;
    /* copies and memsets (pageable: host side is a pageable buffer) */
    int src_r, dst_r, soff, doff, n, pageable, width;
    unsigned value;
    /* handoffs: from stream s to stream s2 through event ev; event queries:
    ** ev recorded on s2 (s itself, or the legacy stream after the blocking
    ** stream s), how 1: with cuEventRecordWithFlags */
    int s2, ev;
    uint32_t owned;     /* resources owned by s here (observations, host functions) */
    /* an inner loop: this op and the loop_len - 1 after it run loop_reps times
    ** back to back (as a loop body inside one segment) */
    int loop_len, loop_reps;
};

struct thr {
    int tid;
    uint64_t gen, var;            /* generation and variation random states */
    FILE *out;
    char *text;
    size_t text_len;
    int it, pos;                  /* where the run is: iteration, op index */
    uint64_t rcdig;               /* digest of every driver call's return code */
    unsigned long ncalls;
    int ncreated;
    CUstream streams[NSTREAMS];   /* created ones, then legacy, then per-thread */
    CUevent events[MAX_EVENTS];
    int nevents;
    _Atomic uintptr_t base[NRES]; /* device address of each resource */
    unsigned char *pin[NPIN];
    int pin_kind[NPIN];           /* enum pin_kind */
    unsigned char *page[2];       /* pageable buffers */
    int page_mmap[2];             /* page[i] from mmap (else malloc) */
    size_t page_size[2];
    int memops;                   /* frees and reallocations of every kind, large parameters */
    int evops;                    /* event and stream query spins, kernels writing pinned memory, collectives */
    unsigned sflags[MAX_CREATED]; /* flags of the created streams */
    CUmodule nccl_mod;
    CUfunction nccl;              /* the collective (evops) */
    _Atomic uint64_t hostdig[NSTREAMS];
    atomic_int bad_ptr;           /* a kernel met a pointer into no buffer of ours */
    struct kdesc *kd[NKS];        /* current definition of each kernel slot */
    int lib[NKS];                 /* slot is a library (CUkernel), not a module */
    CUmodule mod[NKS];
    CUlibrary libh[NKS];
    CUfunction fn[NKS];
    int version[NKS], nreloads;
    struct op body[MAX_OPS];
    int nbody, iters;
    int use_proc;                 /* entry points from cuGetProcAddress */
    int main_stream;              /* the stream most ops go to */
};

static CUcontext g_ctx;
static int g_nthreads;

/* --- Entry points ---------------------------------------------------------- */

/* The stream-ordered entry points, in their legacy and _ptsz forms, taken
** directly or through cuGetProcAddress as a runtime would. */
struct api {
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*MemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
    CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*StreamQuery)(CUstream);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventRecordWithFlags)(CUevent, CUstream, unsigned);
    CUresult (*LaunchHostFunc)(CUstream, CUhostFn, void *);
};

#define API_LIST(X)                                                                           \
    X(LaunchKernel, "cuLaunchKernel", cuLaunchKernel, cuLaunchKernel_ptsz)                     \
    X(LaunchKernelEx, "cuLaunchKernelEx", cuLaunchKernelEx, cuLaunchKernelEx_ptsz)             \
    X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz)   \
    X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz)   \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz)   \
    X(MemsetD8Async, "cuMemsetD8Async", cuMemsetD8Async, cuMemsetD8Async_ptsz)                 \
    X(MemsetD16Async, "cuMemsetD16Async", cuMemsetD16Async, cuMemsetD16Async_ptsz)             \
    X(MemsetD32Async, "cuMemsetD32Async", cuMemsetD32Async, cuMemsetD32Async_ptsz)             \
    X(StreamSynchronize, "cuStreamSynchronize", cuStreamSynchronize, cuStreamSynchronize_ptsz) \
    X(StreamQuery, "cuStreamQuery", cuStreamQuery, cuStreamQuery_ptsz)                         \
    X(StreamWaitEvent, "cuStreamWaitEvent", cuStreamWaitEvent, cuStreamWaitEvent_ptsz)         \
    X(EventRecord, "cuEventRecord", cuEventRecord, cuEventRecord_ptsz)                         \
    X(EventRecordWithFlags, "cuEventRecordWithFlags", cuEventRecordWithFlags,                  \
      cuEventRecordWithFlags_ptsz)                                                             \
    X(LaunchHostFunc, "cuLaunchHostFunc", cuLaunchHostFunc, cuLaunchHostFunc_ptsz)

static struct api g_direct[2], g_proc[2];

/* Fills both tables; returns 0, or -1 when cuGetProcAddress fails. */
static int api_load(void)
{
    CUdriverProcAddressQueryResult st;
#define DIRECT(field, name, legacy, ptsz) \
    g_direct[0].field = legacy;           \
    g_direct[1].field = ptsz;
    API_LIST(DIRECT)
#undef DIRECT
#define PROC(field, name, legacy, ptsz)                                                      \
    for (int pt = 0; pt < 2; pt++)                                                           \
        if (cuGetProcAddress_v2(name, (void **)&g_proc[pt].field, 12080,                        \
                             pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM              \
                                : CU_GET_PROC_ADDRESS_DEFAULT,                               \
                             &st) != CUDA_SUCCESS || !g_proc[pt].field)                      \
            return -1;
    API_LIST(PROC)
#undef PROC
    return 0;
}

static const struct api *api(const struct thr *t, int pt)
{
    return t->use_proc ? &g_proc[pt] : &g_direct[pt];
}

/* Records a driver call's return code: into the thread's digest, and as a line
** of output when it is not CUDA_SUCCESS.  Returns rc. */
static CUresult note(struct thr *t, CUresult rc, int line)
{
    t->rcdig = mix(t->rcdig, (uint64_t)rc);
    t->ncalls++;
    if (rc != CUDA_SUCCESS)
        fprintf(t->out, "t%d i%d p%d rc %d (line %d)\n", t->tid, t->it, t->pos, (int)rc, line);
    return rc;
}

#define RC(call) note(t, (call), __LINE__)

/* --- Kernels ---------------------------------------------------------------- */

/* One kernel definition: a layout and which of its 8-byte parameters are the
** output and input pointers (-1: none; without an output pointer the kernel
** updates its slot's global, as a kernel may update a __device__ variable). */
struct kdesc {
    struct thr *t;
    int slot, n, out_idx, in_idx;
    size_t sizes[MAX_PARAMS + 1], offs[MAX_PARAMS], total;
    uint64_t k, salt;
};

static struct kdesc g_kd[MAX_KDEFS];
static atomic_int g_nkd;

/* The resource and offset that p points into, as one number; -1 for none. */
static int64_t locate(struct thr *t, uintptr_t p)
{
    for (int r = 0; r < NDEV + NKS; r++) {
        uintptr_t b = atomic_load(&t->base[r]);
        if (b && p >= b && p < b + BUF_BYTES)
            return (int64_t)r * BUF_BYTES + (int64_t)(p - b);
    }
    for (int i = 0; i < NPIN; i++)
        if (p >= (uintptr_t)t->pin[i] && p < (uintptr_t)t->pin[i] + BUF_BYTES)
            return (int64_t)RES_PIN(i) * BUF_BYTES + (int64_t)(p - (uintptr_t)t->pin[i]);
    return -1;
}

/* The body of every kernel: mixes the launch's dimensions, every parameter byte
** (pointers as the buffer and offset they point to) and 8 bytes its input
** pointer points to, then updates its output: out = out * k + hash. */
static void kbody(struct kdesc *kd, void **params, const struct fakecuda_dims *d)
{
    struct thr *t = kd->t;
    uint64_t h = kd->salt;
    unsigned char *target = NULL;

    for (int i = 0; i < 3; i++)
        h = mix(mix(h, d->grid[i]), d->block[i]);
    h = mix(h, d->shared_mem);
    for (int i = 0; i < kd->n; i++) {
        if (i == kd->out_idx || i == kd->in_idx) {
            uintptr_t p;
            memcpy(&p, params[i], sizeof p);
            int64_t where = locate(t, p);
            if (where < 0 || (where % BUF_BYTES) > BUF_BYTES - 8) {
                atomic_store(&t->bad_ptr, 1);
                return;
            }
            h = mix(h, (uint64_t)where);
            if (i == kd->out_idx) {
                target = (unsigned char *)p;
            } else {
                uint64_t v;
                memcpy(&v, (void *)p, sizeof v);
                h = mix(h, v);
            }
        } else {
            h = mix_bytes(mix(h, kd->sizes[i]), params[i], kd->sizes[i]);
        }
    }
    if (!target)
        target = (unsigned char *)atomic_load(&t->base[RES_GLOB(kd->slot)]);
    uint64_t v;
    memcpy(&v, target, sizeof v);
    v = v * kd->k + h;
    memcpy(target, &v, sizeof v);
}

/* A collective, by a real NCCL kernel's mangled name (graphshim must never hold
** or graph it): its one parameter is NCCL's argument storage, here an output
** pointer and a value, out = out * k + value. */
#define NCCL_NAME "_Z24ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE"
#define NCCL_ARGS 4096
static void nccl_kernel(void **params, const struct fakecuda_dims *d)
{
    uint64_t p, v, x;
    (void)d;
    memcpy(&p, params[0], sizeof p);
    memcpy(&v, (const char *)params[0] + 8, sizeof v);
    memcpy(&x, (void *)(uintptr_t)p, sizeof x);
    x = x * 0x9e3779b97f4a7c15ull + v;
    memcpy((void *)(uintptr_t)p, &x, sizeof x);
}

/* Kernel i calls kbody with g_kd[i]; the names are octal literals, so that
** TRAMP8(a) defines the eight trampolines 8a .. 8a+7. */
#define TRAMP(i) \
    static void tramp_##i(void **p, const struct fakecuda_dims *d) { kbody(&g_kd[i], p, d); }
#define TRAMP8(a) TRAMP(0##a##0) TRAMP(0##a##1) TRAMP(0##a##2) TRAMP(0##a##3) \
    TRAMP(0##a##4) TRAMP(0##a##5) TRAMP(0##a##6) TRAMP(0##a##7)
#define ALL16(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17)
ALL16(TRAMP8)
#define TNAME(i) tramp_##i,
#define TNAME8(a) TNAME(0##a##0) TNAME(0##a##1) TNAME(0##a##2) TNAME(0##a##3) \
    TNAME(0##a##4) TNAME(0##a##5) TNAME(0##a##6) TNAME(0##a##7)
static const fakecuda_kernel_fn g_tramp[MAX_KDEFS] = {ALL16(TNAME8)};

static size_t align_of(size_t size)
{
    size_t a = size < 8 ? size : 8, p = 1;
    while (p < a)
        p <<= 1;
    return p;
}

/* A random parameter size: mostly scalars, some small structs, a few large. */
static size_t param_size(uint64_t *g)
{
    static const size_t scalars[] = {1, 2, 4, 8, 8, 8};
    unsigned c = rnd(g, 100);
    if (c < 65)
        return scalars[rnd(g, 6)];
    if (c < 90)
        return 1 + rnd(g, 64);
    return 65 + rnd(g, 4096 - 64);
}

/* Defines a new kernel of a random layout for slot ks of thread t (its
** name made from thread, slot and version) and resolves it into t->fn[ks],
** through a new module or library.  Prints the return codes; 0 or -1. */
static int kernel_new(struct thr *t, int ks)
{
    uint64_t *g = &t->gen;
    int idx = atomic_fetch_add(&g_nkd, 1);
    if (idx >= MAX_KDEFS)
        return -1;
    struct kdesc *kd = &g_kd[idx];
    char name[64];
    unsigned c = rnd(g, 100);
    int want = c < 8 ? 0 : c < 60 ? 1 + (int)rnd(g, 8) : 9 + (int)rnd(g, MAX_PARAMS - 8);
    int bigk = t->memops && chance(g, 35), big = -1;   /* a large-parameter kernel; its struct */
    size_t off = 0;

    if (bigk)
        want = 3 + (int)rnd(g, 3);

    memset(kd, 0, sizeof *kd);
    kd->t = t;
    kd->slot = ks;
    kd->k = splitmix(g) | 1;
    kd->salt = splitmix(g);
    kd->out_idx = kd->in_idx = -1;
    if (want && chance(g, 85)) {
        kd->out_idx = (int)rnd(g, (unsigned)want);
        if (want > 1 && chance(g, 60))
            do
                kd->in_idx = (int)rnd(g, (unsigned)want);
            while (kd->in_idx == kd->out_idx);
    }
    if (bigk) {
        /* one struct of 4 KiB to 32,000 bytes by value, the rest scalars */
        do
            big = (int)rnd(g, (unsigned)want);
        while (big == kd->out_idx || big == kd->in_idx);
    }
    for (int i = 0; i < want; i++) {
        static const size_t scalar[] = {1, 2, 4, 8};
        size_t sz = (i == kd->out_idx || i == kd->in_idx) ? 8
                    : i == big                            ? 4096 + rnd(g, 32000 - 4096 + 1)
                    : big >= 0                            ? scalar[rnd(g, 4)]
                                                          : param_size(g);
        size_t a = align_of(sz), end = ((off + a - 1) & ~(a - 1)) + sz;
        if (end > PARAM_BYTES_MAX) {
            if (kd->out_idx >= i)
                kd->out_idx = -1;
            if (kd->in_idx >= i)
                kd->in_idx = -1;
            break;
        }
        kd->sizes[i] = sz;
        kd->offs[i] = end - sz;
        off = end;
        kd->n = i + 1;
    }
    kd->total = off;
    kd->sizes[kd->n] = 0;
    snprintf(name, sizeof name, "t%d_s%d_v%d", t->tid, ks, t->version[ks]++);
    if (chance(g, 10)) {
        /* A layout over the driver's limit is refused. */
        size_t big[] = {8, PARAM_BYTES_MAX, 0};
        fprintf(t->out, "t%d define-too-big %d\n", t->tid, fakecuda_define_kernel(name, g_tramp[idx], big));
    }
    if (fakecuda_define_kernel(name, g_tramp[idx], kd->sizes) != 0) {
        fprintf(t->out, "t%d define %s failed\n", t->tid, name);
        return -1;
    }
    t->kd[ks] = kd;
    if (t->lib[ks]) {
        CUkernel k = NULL;
        RC(cuLibraryLoadData(&t->libh[ks], "fuzz image", NULL, NULL, 0, NULL, NULL, 0));
        RC(cuLibraryGetKernel(&k, t->libh[ks], name));
        t->fn[ks] = (CUfunction)k;   /* the runtime launches a CUkernel so */
    } else {
        RC(cuModuleLoadData(&t->mod[ks], "fuzz image"));
        RC(cuModuleGetFunction(&t->fn[ks], t->mod[ks], name));
    }
    fprintf(t->out, "t%d kernel %s params %d bytes %zu\n", t->tid, name, kd->n, kd->total);
    return 0;
}

/* --- Generating the body -------------------------------------------------- */

/* Generation state: which stream owns each resource at this point of the body. */
struct gen {
    int owner[NRES], init_owner[NRES];
};

static int nstreams_used(const struct thr *t)
{
    return t->ncreated + 2;
}

static int stream_legacy(const struct thr *t) { return t->ncreated; }
static int stream_pt(const struct thr *t) { return t->ncreated + 1; }

static struct op *op_add(struct thr *t, enum op_kind kind, int s)
{
    struct op *o = &t->body[t->nbody++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->s = s;
    o->pt = (int)rnd(&t->gen, 2);
    if (s == stream_legacy(t) || s == stream_pt(t)) {
        o->zero = chance(&t->gen, 50);
        if (o->zero)
            o->pt = s == stream_pt(t);
    }
    return o;
}

/* Makes stream s the owner of resource r, through a handoff if needed. */
static void need(struct thr *t, struct gen *g, int s, int r)
{
    if (g->owner[r] == s)
        return;
    struct op *o = op_add(t, OP_HANDOFF, g->owner[r]);
    o->s2 = s;
    o->ev = (int)rnd(&t->gen, (unsigned)t->nevents);
    g->owner[r] = s;
}

/* A resource in [lo, hi): mostly one that stream s owns already, so that
** handoffs stay a minority of the body. */
static int pick(struct thr *t, const struct gen *g, int s, int lo, int hi)
{
    int mine[NRES], n = 0;
    for (int r = lo; r < hi; r++)
        if (g->owner[r] == s)
            mine[n++] = r;
    if (n && chance(&t->gen, 85))
        return mine[rnd(&t->gen, (unsigned)n)];
    return lo + (int)rnd(&t->gen, (unsigned)(hi - lo));
}

static uint32_t owned_by(const struct gen *g, int s)
{
    uint32_t m = 0;
    for (int r = 0; r < NRES; r++)
        if (g->owner[r] == s)
            m |= 1u << r;
    return m;
}

static void gen_dims(struct thr *t, struct op *o)
{
    uint64_t *g = &t->gen;
    for (int i = 0; i < 3; i++)
        o->grid[i] = i == 0 || chance(g, 20) ? 1 + rnd(g, 4) : 1;
    o->block[0] = 1 + rnd(g, 256);
    o->block[1] = chance(g, 20) ? 1 + rnd(g, 4) : 1;
    o->block[2] = 1;
    o->shmem = chance(g, 30) ? rnd(g, 2048) : 0;
}

/* A memory op (threads with memory ops): a pinned slot freed and allocated
** again as another kind, a pageable buffer freed and allocated again, or a
** device buffer freed with a smaller allocation taking its address. */
static void gen_memop(struct thr *t, struct gen *g, int s)
{
    uint64_t *r = &t->gen;
    unsigned c = rnd(r, 100);
    struct op *o;

    if (c < 50) {
        int p = (int)rnd(r, NPIN);
        o = op_add(t, OP_PINREALLOC, g->owner[RES_PIN(p)]);
        o->dst_r = p;
        o->n = (int)rnd(r, 16);      /* bits 0-1: the new kind; 2: allocate before freeing; 3: a page more */
        o->width = (int)rnd(r, 8);   /* flags of cuMemHostAlloc / cuMemHostRegister */
        o->value = (unsigned)splitmix(r);
    } else if (c < 75) {
        o = op_add(t, OP_PAGEREALLOC, s);
        o->dst_r = (int)rnd(r, 2);
        o->n = (int)rnd(r, 4);       /* bit 0: mmap (else malloc); bit 1: a page more */
    } else {
        int res = (int)rnd(r, NDEV);
        o = op_add(t, OP_REALLOC, g->owner[res]);
        o->dst_r = res;
        o->value = (unsigned)splitmix(r);
        o->n = 4 + (int)rnd(r, 4);
    }
    o->owned = owned_by(g, o->s);
}

/* A launch on stream s of kernel slot ks, writing resource out (a device buffer,
** or pinned memory the kernel writes as mapped memory) and reading in. */
static struct op *gen_launch(struct thr *t, struct gen *g, int s, int ks, int out, int in)
{
    uint64_t *r = &t->gen;
    need(t, g, s, RES_GLOB(ks));
    need(t, g, s, out);
    need(t, g, s, in);
    struct op *o = op_add(t, OP_LAUNCH, s);
    o->ks = ks;
    o->how = (int)rnd(r, 4);
    o->nattr = o->how & 1 ? (int)rnd(r, 4) : 0;
    for (int i = 0; i < o->nattr; i++)
        o->attr_kind[i] = chance(r, 5) ? 4 : (int)rnd(r, 4);
    o->every_iter = chance(r, 25);
    gen_dims(t, o);
    o->argseed = splitmix(r);
    o->out_r = out;
    o->out_off = 8 * (int)rnd(r, BUF_BYTES / 8);
    o->alt_off = 8 * (int)rnd(r, BUF_BYTES / 8);
    o->in_r = in;
    o->in_off = 8 * (int)rnd(r, BUF_BYTES / 8);
    return o;
}

/* The size and offsets of a copy. */
static void copy_extent(struct thr *t, struct op *o)
{
    uint64_t *r = &t->gen;
    o->n = 1 + (int)rnd(r, chance(r, 50) ? 64 : BUF_BYTES);
    o->soff = (int)rnd(r, (unsigned)(BUF_BYTES - o->n + 1));
    o->doff = (int)rnd(r, (unsigned)(BUF_BYTES - o->n + 1));
}

/* Pinned buffer pin written on stream s: a D2H copy from device buffer src,
** or (src < 0) now and then a kernel's output instead. */
static void gen_pin_write(struct thr *t, struct gen *g, int s, int pin, int src)
{
    uint64_t *r = &t->gen;
    if (src < 0 && chance(r, 50)) {
        gen_launch(t, g, s, (int)rnd(r, NKS), RES_PIN(pin), pick(t, g, s, 0, NDEV));
        return;
    }
    if (src < 0)
        src = pick(t, g, s, 0, NDEV);
    need(t, g, s, src);
    need(t, g, s, RES_PIN(pin));
    struct op *o = op_add(t, OP_D2H, s);
    o->src_r = src;
    o->dst_r = pin;
    copy_extent(t, o);
}

/* A stream blocking with respect to the legacy stream: a created one without
** CU_STREAM_NON_BLOCKING, or the per-thread stream. */
static int pick_blocking(struct thr *t)
{
    int c[MAX_CREATED + 1], n = 0;
    for (int i = 0; i < t->ncreated; i++)
        if (!(t->sflags[i] & CU_STREAM_NON_BLOCKING))
            c[n++] = i;
    c[n++] = stream_pt(t);
    return c[rnd(&t->gen, (unsigned)n)];
}

/* An event op (threads with event ops): pinned memory written on a stream,
** then read by the host once an event recorded behind it answers ready (the
** event on the stream itself, or on the legacy stream after a blocking stream,
** whose implicit synchronization orders the record after that work), or once
** a stream query does; the same after a kernel on another stream made what the
** copy reads (a handoff between them); or a collective, which graphshim must
** never hold. */
static void gen_evop(struct thr *t, struct gen *g, int s)
{
    uint64_t *r = &t->gen;
    unsigned c = rnd(r, 100);
    int pin = (int)rnd(r, NPIN), src = -1;
    struct op *o;

    if (c < 15) {
        int out = pick(t, g, s, 0, NDEV);
        need(t, g, s, out);
        o = op_add(t, OP_NCCL, s);
        o->out_r = out;
        o->out_off = 8 * (int)rnd(r, BUF_BYTES / 8);
        o->owned = owned_by(g, s);
        return;
    }
    if (c < 30) {   /* produced on s, consumed on another stream */
        src = pick(t, g, s, 0, NDEV);
        gen_launch(t, g, s, (int)rnd(r, NKS), src, pick(t, g, s, 0, NDEV));
        s = (int)rnd(r, (unsigned)nstreams_used(t));
    } else if (c < 65) {
        s = pick_blocking(t);
    }
    gen_pin_write(t, g, s, pin, src);
    if (c >= 90) {
        o = op_add(t, OP_SSPIN, s);
    } else {
        o = op_add(t, OP_EQUERY, s);
        o->s2 = s;
        if (c >= 30 && c < 65) {   /* recorded on the legacy stream */
            o->s2 = stream_legacy(t);
            o->zero = chance(r, 50);
            o->pt = o->zero ? 0 : (int)rnd(r, 2);
        }
        o->ev = (int)rnd(r, (unsigned)t->nevents);
        o->how = (int)rnd(r, 2);
    }
    o->owned = owned_by(g, s);
}

/* Appends one random op (with the handoffs it needs) on a random stream. */
static void gen_op(struct thr *t, struct gen *g)
{
    uint64_t *r = &t->gen;
    int ns = nstreams_used(t), s = chance(r, 55) ? t->main_stream : (int)rnd(r, (unsigned)ns);
    unsigned c = rnd(r, 100);
    struct op *o;

    if (t->nbody > MAX_OPS - 16)
        return;
    if (t->memops && chance(r, 12)) {
        gen_memop(t, g, s);
        return;
    }
    if (t->evops && chance(r, 15)) {
        gen_evop(t, g, s);
        return;
    }
    if (c < 45) {
        int ks = pick(t, g, s, RES_GLOB(0), RES_GLOB(NKS)) - RES_GLOB(0);
        int out = pick(t, g, s, 0, NDEV), in = pick(t, g, s, 0, NDEV);
        o = gen_launch(t, g, s, ks, out, in);
    } else if (c < 52) {
        int dst = pick(t, g, s, 0, NDEV), pin = pick(t, g, s, RES_PIN(0), RES_PIN(NPIN)) - RES_PIN(0);
        int pageable = chance(r, 50);
        need(t, g, s, dst);
        if (!pageable)
            need(t, g, s, RES_PIN(pin));
        o = op_add(t, OP_H2D, s);
        o->pageable = pageable;
        o->src_r = pin;
        o->dst_r = dst;
        if (t->memops)
            o->value = (unsigned)rnd(r, 4);   /* bit 0: the pageable source freed right after the call */
    } else if (c < 58) {
        int src = pick(t, g, s, 0, NDEV), pin = pick(t, g, s, RES_PIN(0), RES_PIN(NPIN)) - RES_PIN(0);
        int pageable = chance(r, 30);
        need(t, g, s, src);
        if (!pageable)
            need(t, g, s, RES_PIN(pin));
        o = op_add(t, OP_D2H, s);
        o->pageable = pageable;
        o->src_r = src;
        o->dst_r = pin;
    } else if (c < 63) {
        int src = pick(t, g, s, 0, NDEV), dst = pick(t, g, s, 0, NDEV);
        need(t, g, s, src);
        need(t, g, s, dst);
        o = op_add(t, OP_D2D, s);
        o->src_r = src;
        o->dst_r = dst;
    } else if (c < 69) {
        int dst = pick(t, g, s, 0, NDEV + NKS);
        need(t, g, s, dst);
        o = op_add(t, OP_MEMSET, s);
        o->dst_r = dst;
        o->width = 1 << rnd(r, 3);
        o->value = (unsigned)splitmix(r);
    } else if (c < 73) {
        o = op_add(t, OP_HOSTFN, s);
    } else if (c < 78) {
        o = op_add(t, OP_SSYNC, s);
    } else if (c < 80) {
        o = op_add(t, OP_CSYNC, s);
    } else if (c < 83) {
        o = op_add(t, OP_ESYNC, s);
        o->ev = (int)rnd(r, (unsigned)t->nevents);
    } else if (c < 85) {
        o = op_add(t, OP_SQUERY, s);
    } else if (c < 90) {
        o = op_add(t, OP_OBSERVE, s);
    } else if (c < 93) {
        int res = (int)rnd(r, NDEV);
        o = op_add(t, OP_REALLOC, g->owner[res]);
        o->dst_r = res;
        o->value = (unsigned)splitmix(r);
        o->n = (int)rnd(r, t->memops ? 8 : 4);   /* bit 0: sync first; bit 1: allocate before
                                                 ** freeing; bit 2: a smaller one takes the address */
    } else if (c < 95) {
        o = op_add(t, OP_SCRATCH, s);
    } else if (c < 97) {
        o = op_add(t, OP_BAD, s);
        o->ks = (int)rnd(r, NKS);
        o->how = (int)rnd(r, 4);
        gen_dims(t, o);
    } else {
        o = op_add(t, OP_HOSTFN, s);
    }
    if (o->kind == OP_H2D || o->kind == OP_D2H || o->kind == OP_D2D)
        copy_extent(t, o);
    if (o->kind == OP_MEMSET) {
        int units = BUF_BYTES / o->width;
        if (o->dst_r >= NDEV)
            units = 8 / o->width;
        o->n = 1 + (int)rnd(r, (unsigned)units);
        o->doff = o->width * (int)rnd(r, (unsigned)(units - o->n + 1));
    }
    o->owned = owned_by(g, o->s);
}

/* Generates the thread's body: random ops, then handoffs that give every
** resource back to its owner at the start, so that iterations are alike. */
static void gen_body(struct thr *t)
{
    struct gen g;
    int ns = nstreams_used(t), nops = 4 + (int)rnd(&t->gen, 20);

    t->main_stream = (int)rnd(&t->gen, (unsigned)ns);
    for (int r = 0; r < NRES; r++)
        g.owner[r] = g.init_owner[r] = chance(&t->gen, 50) ? t->main_stream : (int)rnd(&t->gen, (unsigned)ns);
    t->nbody = 0;
    for (int i = 0; i < nops; i++)
        gen_op(t, &g);
    for (int r = 0; r < NRES; r++)
        need(t, &g, g.init_owner[r], r);
    /* Inner loops: up to two runs of 1 to 4 launches, memsets and device copies
    ** on one stream, repeated back to back. */
    for (int l = 0; l < 2; l++) {
        int start = (int)rnd(&t->gen, (unsigned)t->nbody), len = 1 + (int)rnd(&t->gen, 4), ok = 1;
        if (!chance(&t->gen, 50) || start + len > t->nbody)
            continue;
        for (int i = start; i < start + len && ok; i++) {
            const struct op *o = &t->body[i];
            ok = (o->kind == OP_LAUNCH || o->kind == OP_MEMSET || o->kind == OP_D2D) && o->s == t->body[start].s;
        }
        if (ok) {
            t->body[start].loop_len = len;
            t->body[start].loop_reps = 2 + (int)rnd(&t->gen, 80);
        }
    }
}

/* --- Running it ----------------------------------------------------------- */

static CUstream sh(const struct thr *t, const struct op *o, int s)
{
    if (s == stream_legacy(t))
        return o->zero && !o->pt ? NULL : CU_STREAM_LEGACY;
    if (s == stream_pt(t))
        return o->zero && o->pt ? NULL : CU_STREAM_PER_THREAD;
    return t->streams[s];
}

static CUdeviceptr dptr(struct thr *t, int r, int off)
{
    if (r >= RES_PIN(0))   /* pinned memory, as a kernel sees mapped memory */
        return (CUdeviceptr)(uintptr_t)(t->pin[r - RES_PIN(0)] + off);
    return (CUdeviceptr)(atomic_load(&t->base[r]) + (uintptr_t)off);
}

/* Argument of a host function: the thread, a stream and what it may read. */
struct hostarg {
    struct thr *t;
    int s;
    uint32_t owned;
    uint64_t tag;
};

/* Host function: folds the pinned buffers its stream owns into the stream's
** digest; it runs in stream order, after the copies before it. */
static void host_fn(void *p)
{
    struct hostarg *a = p;
    uint64_t h = atomic_load(&a->t->hostdig[a->s]);
    h = mix(h, a->tag);
    for (int i = 0; i < NPIN; i++)
        if (a->owned & (1u << RES_PIN(i)))
            h = mix_bytes(h, a->t->pin[i], BUF_BYTES);
    atomic_store(&a->t->hostdig[a->s], h);
}

/* Prints a digest of what the host may read once stream s is complete: the
** pinned buffers it owns (by mask) and its host functions' digest. */
static void observe_host(struct thr *t, int s, uint32_t owned, const char *what)
{
    uint64_t h = atomic_load(&t->hostdig[s]);
    for (int i = 0; i < NPIN; i++)
        if (owned & (1u << RES_PIN(i)))
            h = mix_bytes(mix(h, (uint64_t)i), t->pin[i], BUF_BYTES);
    fprintf(t->out, "t%d i%d p%d %s s%d %016llx rc %016llx\n", t->tid, t->it, t->pos, what, s,
            (unsigned long long)h, (unsigned long long)t->rcdig);
}

/* Fills the argument bytes of a launch of kd: random bytes from the op's seed
** (and the iteration, for ops whose arguments change every iteration), the two
** pointers where the layout has them.  buf receives the packed form too. */
static void make_args(struct thr *t, const struct op *o, const struct kdesc *kd, uint64_t seed,
                      int off_out, unsigned char *buf, void **args)
{
    uint64_t r = seed;
    memset(buf, 0, kd->total + 16);
    for (int i = 0; i < kd->n; i++) {
        unsigned char *p = buf + kd->offs[i];
        args[i] = p;
        if (i == kd->out_idx || i == kd->in_idx) {
            CUdeviceptr v = i == kd->out_idx ? dptr(t, o->out_r, off_out) : dptr(t, o->in_r, o->in_off);
            memcpy(p, &v, sizeof v);
            continue;
        }
        for (size_t j = 0; j < kd->sizes[i]; j += 8) {
            uint64_t v = splitmix(&r);
            memcpy(p + j, &v, kd->sizes[i] - j < 8 ? kd->sizes[i] - j : 8);
        }
    }
}

/* Issues one launch of kernel slot ks the op's way.  bad: an invalid launch
** (kind 0: a zero grid, 1: too large a block, 2: too much shared memory,
** 3: an extra buffer too small). */
static void launch(struct thr *t, const struct op *o, uint64_t seed, int off_out, int bad)
{
    const struct kdesc *kd = t->kd[o->ks];
    const struct api *a = api(t, o->pt);
    unsigned grid[3], block[3], shmem = o->shmem;
    static __thread unsigned char buf[PARAM_BYTES_MAX + 64];
    void *args[MAX_PARAMS + 1];
    size_t size = kd->total;
    int how = o->how;

    memcpy(grid, o->grid, sizeof grid);
    memcpy(block, o->block, sizeof block);
    make_args(t, o, kd, seed, off_out, buf, args);
    if (bad == 1)
        grid[1] = 0;
    else if (bad == 2)
        block[0] = 2048;
    else if (bad == 3)
        shmem = 300000;
    else if (bad == 4) {
        if (!kd->n)
            grid[0] = 0;
        size = kd->total - 1;
        how |= 2;
    }
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    void **kp = how & 2 ? NULL : args, **ex = how & 2 ? extra : NULL;
    CUstream s = sh(t, o, o->s);
    if (how & 1) {
        CUlaunchAttribute attrs[4];
        memset(attrs, 0, sizeof attrs);
        for (int i = 0; i < o->nattr; i++) {
            switch (o->attr_kind[i]) {
            case 0:
                attrs[i].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
                attrs[i].value.priority = -(int)(seed & 1);
                break;
            case 1:
                attrs[i].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
                attrs[i].value.programmaticStreamSerializationAllowed = (int)((seed >> 1) & 1);
                break;
            case 2:
                attrs[i].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
                attrs[i].value.cooperative = 0;
                break;
            case 3:
                attrs[i].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
                break;
            default:  /* one the shim does not key: the launch passes through */
                attrs[i].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
                break;
            }
        }
        CUlaunchConfig cfg = {grid[0], grid[1], grid[2], block[0], block[1], block[2], shmem, s,
                              o->nattr ? attrs : NULL, (unsigned)o->nattr};
        RC(a->LaunchKernelEx(&cfg, t->fn[o->ks], kp, ex));
    } else {
        RC(a->LaunchKernel(t->fn[o->ks], grid[0], grid[1], grid[2], block[0], block[1], block[2], shmem, s,
                           kp, ex));
    }
}

/* Unloads kernel slot ks's module or library and resolves a new kernel of a
** new layout in its place; the handle often comes back. */
static void reload(struct thr *t, int ks)
{
    CUfunction old = t->fn[ks];
    if (t->lib[ks])
        RC(cuLibraryUnload(t->libh[ks]));
    else
        RC(cuModuleUnload(t->mod[ks]));
    if (kernel_new(t, ks) != 0)
        exit(3);
    /* Threads share the driver's free handles: which one comes back is only
    ** the same from run to run with one thread. */
    fprintf(t->out, "t%d i%d reload s%d %s\n", t->tid, t->it, ks,
            g_nthreads > 1 ? "" : old == t->fn[ks] ? "same-handle" : "new-handle");
}

static void fill_page(struct thr *t, int i, uint64_t seed)
{
    uint64_t r = seed;
    for (int j = 0; j < BUF_BYTES; j += 8) {
        uint64_t v = splitmix(&r);
        memcpy(t->page[i] + j, &v, 8);
    }
}

/* Frees pageable buffer i and allocates it again (size bytes), from mmap (at
** the freed address where it is free) or malloc; zeroed. */
static void page_renew(struct thr *t, int i, int use_mmap, size_t size)
{
    void *old = t->page[i];
    if (t->page_mmap[i])
        munmap(old, t->page_size[i]);
    else
        free(old);
    void *p = use_mmap ? mmap(old, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : malloc(size);
    if (!p || p == MAP_FAILED) {
        perror("fuzzprog: page_renew");
        exit(3);
    }
    memset(p, 0, size);
    t->page[i] = p;
    t->page_mmap[i] = use_mmap;
    t->page_size[i] = size;
}

/* Host memory of a pinned slot, of *kind (flags: cuMemHostAlloc's, the low
** two for cuMemHostRegister).  Where the driver refuses, pageable memory. */
static unsigned char *pin_alloc(struct thr *t, int *kind, size_t size, int flags)
{
    void *p = NULL;
    if (*kind == PIN_ALLOCHOST) {
        if (RC(cuMemAllocHost_v2(&p, size)) != CUDA_SUCCESS)
            p = NULL;
    } else if (*kind == PIN_HOSTALLOC) {
        if (RC(cuMemHostAlloc(&p, size, (unsigned)flags & 7)) != CUDA_SUCCESS)
            p = NULL;
    } else if (*kind == PIN_REGISTERED) {
        p = aligned_alloc(4096, size);
        if (p && RC(cuMemHostRegister_v2(p, size, (unsigned)flags & 3)) != CUDA_SUCCESS) {
            free(p);
            p = NULL;
        }
    }
    if (!p) {
        *kind = PIN_PAGEABLE;
        p = malloc(size);
        if (!p)
            exit(3);
    }
    return p;
}

static void pin_free(struct thr *t, unsigned char *p, int kind)
{
    if (kind == PIN_ALLOCHOST || kind == PIN_HOSTALLOC) {
        RC(cuMemFreeHost(p));
    } else {
        if (kind == PIN_REGISTERED)
            RC(cuMemHostUnregister(p));
        free(p);
    }
}

/* A query's answer as the program notes it: how many times work answers
** CUDA_ERROR_NOT_READY depends on the schedule (FAKECUDA_PENDING, other
** threads' synchronizes), so not ready counts as success. */
static CUresult ready(CUresult rc)
{
    return rc == CUDA_ERROR_NOT_READY ? CUDA_SUCCESS : rc;
}

/* Queries stream s (or event e) until it answers other than not ready; returns
** that answer (still not ready after a bound: a program that would hang). */
static CUresult spin(struct thr *t, const struct api *a, CUstream s, CUevent e)
{
    CUresult rc;
    (void)t;
    for (long n = 0; n < (1L << 24); n++)
        if ((rc = e ? cuEventQuery(e) : a->StreamQuery(s)) != CUDA_ERROR_NOT_READY)
            return rc;
    return rc;
}

/* Runs event op o (threads with event ops) on stream s: a query spin, then the
** host reads what the stream wrote; or a collective. */
static void run_evop(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    static __thread unsigned char storage[NCCL_ARGS];
    struct op o2 = *o;
    CUevent e = t->events[o->ev];

    switch (o->kind) {
    case OP_SSPIN:
        RC(spin(t, a, s, NULL));
        observe_host(t, o->s, o->owned, "sspin");
        break;
    case OP_EQUERY:
        RC(o->how ? a->EventRecordWithFlags(e, sh(t, &o2, o->s2), 0) : a->EventRecord(e, sh(t, &o2, o->s2)));
        RC(spin(t, a, NULL, e));
        observe_host(t, o->s, o->owned, o->s2 == o->s ? "equery" : "lquery");
        break;
    default: {   /* OP_NCCL: NCCL's argument storage, an output pointer and a value */
        CUdeviceptr p = dptr(t, o->out_r, o->out_off);
        uint64_t v = (uint64_t)t->it * 131 + (uint64_t)t->pos;
        memcpy(storage, &p, sizeof p);
        memcpy(storage + 8, &v, sizeof v);
        RC(a->LaunchKernel(t->nccl, 1, 1, 1, 32, 1, 1, 0, s, (void *[]){storage}, NULL));
        break;
    }
    }
}

/* Runs op o of the body in iteration t->it; variation: 0 none, 1 changed
** arguments, 2 changed pointer, 3 invalid launch first. */
static void run_op(struct thr *t, const struct op *o, int variation)
{
    const struct api *a = api(t, o->pt);
    CUstream s = sh(t, o, o->s);
    int it = t->it;

    switch (o->kind) {
    case OP_LAUNCH: {
        uint64_t seed = o->argseed;
        if (o->out_r >= RES_PIN(0) && t->pin_kind[o->out_r - RES_PIN(0)] == PIN_PAGEABLE)
            break;   /* a kernel cannot write pageable memory */
        if (o->every_iter || variation == 1)
            seed += (uint64_t)it * 7919 + 1;
        if (variation == 3)
            launch(t, o, seed, o->out_off, 1 + (int)rnd(&t->var, 4));
        launch(t, o, seed, variation == 2 ? o->alt_off : o->out_off, 0);
        break;
    }
    case OP_H2D: {
        /* Moved pointers: the device side shifts (the host side is the program's). */
        int room = BUF_BYTES - o->n + 1, doff = variation == 2 ? (o->doff + 8 * (1 + it % 3)) % room : o->doff;
        if (o->pageable) {
            fill_page(t, 0, (uint64_t)it * 31 + (uint64_t)t->pos);
            RC(a->MemcpyHtoDAsync(dptr(t, o->dst_r, doff), t->page[0] + o->soff, (size_t)o->n, s));
            if (o->value & 1)   /* freed, even, and allocated again (often at its address) */
                page_renew(t, 0, (o->value >> 1) & 1, BUF_BYTES);
            memset(t->page[0], 0xEE, BUF_BYTES);   /* allowed: the copy has its bytes */
        } else {
            RC(a->MemcpyHtoDAsync(dptr(t, o->dst_r, doff), t->pin[o->src_r] + o->soff, (size_t)o->n, s));
        }
        break;
    }
    case OP_D2H: {
        int room = BUF_BYTES - o->n + 1, soff = variation == 2 ? (o->soff + 8 * (1 + it % 3)) % room : o->soff;
        if (o->pageable) {
            memset(t->page[1], 0, BUF_BYTES);
            RC(a->MemcpyDtoHAsync(t->page[1] + o->doff, dptr(t, o->src_r, soff), (size_t)o->n, s));
            /* a D2H copy into pageable memory is complete when the call returns */
            fprintf(t->out, "t%d i%d p%d d2h %016llx\n", t->tid, it, t->pos,
                    (unsigned long long)mix_bytes(0, t->page[1], BUF_BYTES));
        } else {
            RC(a->MemcpyDtoHAsync(t->pin[o->dst_r] + o->doff, dptr(t, o->src_r, soff), (size_t)o->n, s));
        }
        break;
    }
    case OP_D2D: {
        /* Moved pointers: both sides shift (a caching allocator's other block). */
        int room = BUF_BYTES - o->n + 1, sh = variation == 2 ? 8 * (1 + it % 3) : 0;
        RC(a->MemcpyDtoDAsync(dptr(t, o->dst_r, (o->doff + sh) % room), dptr(t, o->src_r, (o->soff + sh) % room),
                              (size_t)o->n, s));
        break;
    }
    case OP_MEMSET: {
        unsigned v = o->value + (variation == 1 ? (unsigned)it : 0);
        int units = (o->dst_r >= NDEV ? 8 : BUF_BYTES) / o->width, room = units - o->n + 1;
        int off = variation == 2 ? o->width * ((o->doff / o->width + 1 + it % 3) % room) : o->doff;
        CUdeviceptr p = dptr(t, o->dst_r, off);
        if (o->width == 1)
            RC(a->MemsetD8Async(p, (unsigned char)v, (size_t)o->n, s));
        else if (o->width == 2)
            RC(a->MemsetD16Async(p, (unsigned short)v, (size_t)o->n, s));
        else
            RC(a->MemsetD32Async(p, v, (size_t)o->n, s));
        break;
    }
    case OP_HANDOFF: {
        struct op o2 = *o;
        o2.s = o->s2;
        RC(a->EventRecord(t->events[o->ev], s));
        RC(api(t, o2.pt)->StreamWaitEvent(sh(t, &o2, o->s2), t->events[o->ev], 0));
        break;
    }
    case OP_HOSTFN: {
        struct hostarg *h = malloc(sizeof *h);   /* freed at exit: a host function may run late */
        *h = (struct hostarg){t, o->s, o->owned, (uint64_t)it * 1000 + (uint64_t)t->pos};
        RC(a->LaunchHostFunc(s, host_fn, h));
        break;
    }
    case OP_SSYNC:
        RC(a->StreamSynchronize(s));
        observe_host(t, o->s, o->owned, "ssync");
        break;
    case OP_ESYNC:
        RC(a->EventRecord(t->events[o->ev], s));
        RC(cuEventSynchronize(t->events[o->ev]));
        observe_host(t, o->s, o->owned, "esync");
        break;
    case OP_CSYNC:
        RC(cuCtxSynchronize());
        for (int i = 0; i < nstreams_used(t); i++)
            observe_host(t, i, i == o->s ? ~0u : 0, "csync");
        /* every stream is complete: the host may write pinned memory now */
        for (int i = 0; i < NPIN; i++)
            for (int j = 0; j < BUF_BYTES; j += 64)
                t->pin[i][j] = (unsigned char)(it + i + j / 64);
        break;
    case OP_SQUERY:
        RC(ready(a->StreamQuery(s)));
        break;
    case OP_SSPIN:
    case OP_EQUERY:
    case OP_NCCL:
        run_evop(t, o, a, s);
        break;
    case OP_OBSERVE:
        for (int r = 0; r < NDEV + NKS; r++) {
            if (!(o->owned & (1u << r)))
                continue;
            unsigned char tmp[BUF_BYTES];
            RC(a->MemcpyDtoHAsync(tmp, dptr(t, r, 0), r < NDEV ? BUF_BYTES : 8, s));
            fprintf(t->out, "t%d i%d p%d obs r%d %016llx\n", t->tid, it, t->pos, r,
                    (unsigned long long)mix_bytes(0, tmp, r < NDEV ? BUF_BYTES : 8));
        }
        break;
    case OP_REALLOC: {
        /* value's bit 3: the new buffer is stream-ordered pool memory in odd
        ** iterations, where the driver refuses to move a copy node made on
        ** cuMemAlloc memory (and back) */
        CUdeviceptr old = dptr(t, o->dst_r, 0), neu;
        int pool = (o->value >> 3) & it & 1;
        if (o->n & 1)
            RC(a->StreamSynchronize(s));
        if (o->n & 4) {
            /* a smaller allocation takes the freed address, the buffer moves */
            CUdeviceptr small;
            RC(cuMemFree_v2(old));
            RC(cuMemAlloc_v2(&small, BUF_BYTES / 2));
            RC(pool ? cuMemAllocAsync(&neu, BUF_BYTES, s) : cuMemAlloc_v2(&neu, BUF_BYTES));
            RC(a->MemsetD8Async(small, 0x77, BUF_BYTES / 2, s));
            RC(cuMemFree_v2(small));
        } else if (o->n & 2) {
            RC(pool ? cuMemAllocAsync(&neu, BUF_BYTES, s) : cuMemAlloc_v2(&neu, BUF_BYTES));
            RC(cuMemFree_v2(old));
        } else {
            RC(cuMemFree_v2(old));
            RC(pool ? cuMemAllocAsync(&neu, BUF_BYTES, s) : cuMemAlloc_v2(&neu, BUF_BYTES));
        }
        atomic_store(&t->base[o->dst_r], (uintptr_t)neu);
        RC(a->MemsetD32Async(neu, o->value + (unsigned)it, BUF_BYTES / 4, s));
        break;
    }
    case OP_SCRATCH: {
        CUdeviceptr p;
        RC(cuMemAlloc_v2(&p, 512));
        RC(cuMemFree_v2(p));
        break;
    }
    case OP_BAD:
        launch(t, o, (uint64_t)it, 0, 1 + (int)rnd(&t->var, 4));
        break;
    case OP_PINREALLOC: {
        /* The slot's owner is done with it; another kind (and maybe size) of
        ** host memory takes its place, often at the same address. */
        int p = o->dst_r, kind = o->n & 3, okind = t->pin_kind[p];
        size_t size = o->n & 8 ? BUF_BYTES + 4096 : BUF_BYTES;
        unsigned char *old = t->pin[p];
        RC(a->StreamSynchronize(s));
        if (o->n & 4) {
            unsigned char *neu = pin_alloc(t, &kind, size, o->width);
            pin_free(t, old, okind);
            t->pin[p] = neu;
        } else {
            pin_free(t, old, okind);
            t->pin[p] = pin_alloc(t, &kind, size, o->width);
        }
        t->pin_kind[p] = kind;
        for (int j = 0; j < BUF_BYTES; j++)
            t->pin[p][j] = (unsigned char)(o->value + (unsigned)it * 13 + (unsigned)j * 7);
        break;
    }
    case OP_PAGEREALLOC:
        page_renew(t, o->dst_r, o->n & 1, o->n & 2 ? BUF_BYTES + 4096 : BUF_BYTES);
        break;
    }
}

/* A random boundary between ops, on stream index s (variations only). */
static void extra_boundary(struct thr *t, int s)
{
    struct op o = {.kind = OP_SSYNC, .s = s};
    unsigned c = rnd(&t->var, 4);
    if (c == 0) {
        RC(api(t, 0)->StreamSynchronize(sh(t, &o, s)));
    } else if (c == 1) {
        RC(cuCtxSynchronize());
    } else if (c == 2) {
        RC(ready(api(t, 0)->StreamQuery(sh(t, &o, s))));
    } else {
        CUdeviceptr p;
        RC(cuMemAlloc_v2(&p, 256));
        RC(cuMemFree_v2(p));
    }
    fprintf(t->out, "t%d i%d p%d boundary %u rc %016llx\n", t->tid, t->it, t->pos, c,
            (unsigned long long)t->rcdig);
}

/* Runs the body t->iters times with per-iteration variations. */
static void run_loop(struct thr *t)
{
    int calm = chance(&t->var, 30);   /* a third of threads vary little */
    for (t->it = 0; t->it < t->iters; t->it++) {
        int vary = chance(&t->var, calm ? 5 : 25);
        if (t->it > 2 && t->nreloads < MAX_RELOADS && chance(&t->var, 4)) {
            t->nreloads++;
            reload(t, (int)rnd(&t->var, NKS));
        }
        for (t->pos = 0; t->pos < t->nbody; t->pos++) {
            const struct op *o = &t->body[t->pos];
            int variation = 0;
            for (int r = 1; r < o->loop_reps; r++) {
                int at = t->pos;
                for (int q = 0; q < o->loop_len; q++, t->pos++)
                    run_op(t, &t->body[t->pos], 0);
                t->pos = at;
            }
            if (vary && chance(&t->var, 15)) {
                unsigned c = rnd(&t->var, 6);
                if (c == 0 && (o->kind == OP_LAUNCH || o->kind == OP_MEMSET || o->kind == OP_D2D))
                    continue;   /* skipped this time */
                if (c == 1)
                    extra_boundary(t, o->s);
                if (c == 2 && (o->kind == OP_LAUNCH || o->kind == OP_MEMSET))
                    run_op(t, o, 0);   /* repeated this time */
                variation = c == 3 ? 1 : c == 4 ? 2 : c == 5 && chance(&t->var, 30) ? 3 : 0;
            }
            run_op(t, o, variation);
        }
    }
}

/* FUZZ_DUMP set: prints the body on stderr, to read a difference by. */
static void dump_body(const struct thr *t)
{
    static const char *names[] = {"launch", "h2d", "d2h", "d2d", "memset", "handoff", "hostfn", "ssync",
                                  "csync", "esync", "squery", "observe", "realloc", "scratch", "bad",
                                  "pinrealloc", "pagerealloc", "equery", "sspin", "nccl"};
    for (int i = 0; i < t->nbody; i++) {
        const struct op *o = &t->body[i];
        fprintf(stderr, "t%d p%d %s s%d pt%d zero%d", t->tid, i, names[o->kind], o->s, o->pt, o->zero);
        if (o->kind == OP_LAUNCH)
            fprintf(stderr, " slot %d how %d out r%d+%d in r%d+%d every %d", o->ks, o->how, o->out_r,
                    o->out_off, o->in_r, o->in_off, o->every_iter);
        if (o->kind == OP_HANDOFF || o->kind == OP_EQUERY)
            fprintf(stderr, " %s s%d event %d", o->kind == OP_HANDOFF ? "to" : "recorded on", o->s2, o->ev);
        if (o->kind >= OP_H2D && o->kind <= OP_MEMSET)
            fprintf(stderr, " src %d+%d dst %d+%d n %d pageable %d", o->src_r, o->soff, o->dst_r, o->doff,
                    o->n, o->pageable);
        if (o->kind == OP_REALLOC || o->kind == OP_PINREALLOC || o->kind == OP_PAGEREALLOC)
            fprintf(stderr, " buffer %d mode %d", o->dst_r, o->n);
        if (o->loop_reps)
            fprintf(stderr, " loop of %d ops x %d", o->loop_len, o->loop_reps);
        fprintf(stderr, " owned %x\n", o->owned);
    }
}

/* --- Threads and main ------------------------------------------------------ */

static uint64_t g_seed;

/* The collective of a thread with event ops, in a module of its own. */
static void collective_load(struct thr *t)
{
    RC(cuModuleLoadData(&t->nccl_mod, "nccl image"));
    RC(cuModuleGetFunction(&t->nccl, t->nccl_mod, NCCL_NAME));
}

static void *thread_main(void *p)
{
    struct thr *t = p;
    uint64_t s = g_seed * 1000003 + (uint64_t)t->tid;

    t->gen = splitmix(&s);
    t->var = splitmix(&s) ^ 0x5555;
    uint64_t m = s ^ 0x6d656d6f70730000ull;   /* apart from gen and var */
    const char *classic = getenv("FUZZ_CLASSIC");
    t->memops = !(classic && *classic && strcmp(classic, "0")) && chance(&m, 70);
    t->evops = !(classic && *classic && strcmp(classic, "0")) && chance(&m, 70);
    t->out = open_memstream(&t->text, &t->text_len);
    RC(cuCtxSetCurrent(g_ctx));
    t->use_proc = chance(&t->gen, 50);
    t->ncreated = 1 + (int)rnd(&t->gen, MAX_CREATED);
    for (int i = 0; i < t->ncreated; i++) {
        unsigned flags = chance(&t->gen, 50) ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
        RC(cuStreamCreate(&t->streams[i], flags));
        t->sflags[i] = flags;
        fprintf(t->out, "t%d stream %d flags %u\n", t->tid, i, flags);
    }
    t->nevents = 4 + (int)rnd(&t->gen, MAX_EVENTS - 4);
    for (int i = 0; i < t->nevents; i++)
        RC(cuEventCreate(&t->events[i], chance(&t->gen, 50) ? CU_EVENT_DISABLE_TIMING : CU_EVENT_DEFAULT));
    for (int r = 0; r < NDEV + NKS; r++) {
        CUdeviceptr d;
        RC(cuMemAlloc_v2(&d, BUF_BYTES));
        RC(cuMemsetD8_v2(d, (unsigned char)r, BUF_BYTES));
        atomic_store(&t->base[r], (uintptr_t)d);
    }
    for (int i = 0; i < NPIN; i++) {
        RC(cuMemAllocHost_v2((void **)&t->pin[i], BUF_BYTES));
        memset(t->pin[i], 0x40 + i, BUF_BYTES);
        t->pin_kind[i] = PIN_ALLOCHOST;
    }
    for (int i = 0; i < 2; i++) {
        t->page[i] = calloc(1, BUF_BYTES);
        t->page_size[i] = BUF_BYTES;
    }
    for (int ks = 0; ks < NKS; ks++) {
        t->lib[ks] = chance(&t->gen, 40);
        if (kernel_new(t, ks) != 0)
            exit(3);
    }
    if (t->evops)
        collective_load(t);
    t->iters = 8 + (int)rnd(&t->gen, 25);
    gen_body(t);
    fprintf(t->out, "t%d body %d ops, %d iterations, %s entry points%s%s\n", t->tid, t->nbody, t->iters,
            t->use_proc ? "cuGetProcAddress" : "direct", t->memops ? ", memory ops" : "",
            t->evops ? ", event ops" : "");
    if (getenv("FUZZ_DUMP"))
        dump_body(t);
    run_loop(t);

    /* The end: everything complete, every buffer read back. */
    t->pos = -1;
    RC(cuCtxSynchronize());
    for (int r = 0; r < NDEV + NKS; r++) {
        unsigned char tmp[BUF_BYTES];
        RC(cuMemcpyDtoH_v2(tmp, dptr(t, r, 0), BUF_BYTES));
        fprintf(t->out, "t%d final r%d %016llx\n", t->tid, r,
                (unsigned long long)mix_bytes(0, tmp, r < NDEV ? BUF_BYTES : 8));
    }
    for (int i = 0; i < NPIN; i++)
        fprintf(t->out, "t%d final pinned %d %016llx\n", t->tid, i,
                (unsigned long long)mix_bytes(0, t->pin[i], BUF_BYTES));
    for (int i = 0; i < nstreams_used(t); i++)
        fprintf(t->out, "t%d final host functions s%d %016llx\n", t->tid, i,
                (unsigned long long)atomic_load(&t->hostdig[i]));
    for (int i = 0; i < t->ncreated; i++)
        RC(cuStreamDestroy_v2(t->streams[i]));
    for (int ks = 0; ks < NKS; ks++)
        RC(t->lib[ks] ? cuLibraryUnload(t->libh[ks]) : cuModuleUnload(t->mod[ks]));
    if (t->evops)
        RC(cuModuleUnload(t->nccl_mod));
    fprintf(t->out, "t%d final bad-pointer %d calls %lu rc %016llx\n", t->tid,
            atomic_load(&t->bad_ptr), t->ncalls, (unsigned long long)t->rcdig);
    fclose(t->out);
    return NULL;
}

int main(int argc, char **argv)
{
    static struct thr thr[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    CUdevice dev;
    int nthreads;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: fuzzprog SEED [MAX_THREADS]\n");
        return 2;
    }
    g_seed = strtoull(argv[1], NULL, 0);
    uint64_t s = g_seed;
    nthreads = chance(&s, 50) ? 1 : 2 + (int)rnd(&s, MAX_THREADS - 1);
    if (argc == 3 && nthreads > atoi(argv[2]))
        nthreads = atoi(argv[2]) > 0 ? atoi(argv[2]) : 1;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&g_ctx, dev) || cuCtxSetCurrent(g_ctx) ||
        api_load()) {
        fprintf(stderr, "fuzzprog: driver setup failed\n");
        return 2;
    }
    if (fakecuda_define_kernel(NCCL_NAME, nccl_kernel, (const size_t[]){NCCL_ARGS, 0}) != 0) {
        fprintf(stderr, "fuzzprog: cannot define the collective\n");
        return 2;
    }
    g_nthreads = nthreads;
    printf("seed %llu threads %d\n", (unsigned long long)g_seed, nthreads);
    for (int i = 0; i < nthreads; i++) {
        thr[i].tid = i;
        if (nthreads == 1 || getenv("FUZZ_SERIAL"))
            thread_main(&thr[i]);
        else
            pthread_create(&th[i], NULL, thread_main, &thr[i]);
    }
    for (int i = 0; i < nthreads; i++) {
        if (nthreads > 1 && !getenv("FUZZ_SERIAL"))
            pthread_join(th[i], NULL);
        fwrite(thr[i].text, 1, thr[i].text_len, stdout);
    }
    return 0;
}
