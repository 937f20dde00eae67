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
#include "fuzzprog.h"

CUcontext g_ctx;
int g_nthreads;

/* --- Entry points ---------------------------------------------------------- */

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
    X(LaunchHostFunc, "cuLaunchHostFunc", cuLaunchHostFunc, cuLaunchHostFunc_ptsz)                \
    X(MemcpyAsync, "cuMemcpyAsync", cuMemcpyAsync, cuMemcpyAsync_ptsz)                         \
    X(StreamAddCallback, "cuStreamAddCallback", cuStreamAddCallback, cuStreamAddCallback_ptsz) \
    X(MemAllocAsync, "cuMemAllocAsync", cuMemAllocAsync, cuMemAllocAsync_ptsz)                 \
    X(MemFreeAsync, "cuMemFreeAsync", cuMemFreeAsync, cuMemFreeAsync_ptsz)                     \
    X(MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync,               \
      cuMemAllocFromPoolAsync_ptsz)                                                            \
    X(StreamWriteValue32, "cuStreamWriteValue32", cuStreamWriteValue32_v2,                     \
      cuStreamWriteValue32_v2_ptsz)                                                            \
    X(StreamBeginCapture, "cuStreamBeginCapture", cuStreamBeginCapture_v2,                     \
      cuStreamBeginCapture_v2_ptsz)                                                            \
    X(StreamEndCapture, "cuStreamEndCapture", cuStreamEndCapture, cuStreamEndCapture_ptsz)     \
    X(GraphLaunch, "cuGraphLaunch", cuGraphLaunch, cuGraphLaunch_ptsz)                         \
    X(MemcpyHtoD, "cuMemcpyHtoD", cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds)                       \
    X(MemcpyDtoH, "cuMemcpyDtoH", cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds)                       \
    X(MemcpyDtoD, "cuMemcpyDtoD", cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds)                       \
    X(Memcpy, "cuMemcpy", cuMemcpy, cuMemcpy_ptds)                                             \
    X(MemsetD8, "cuMemsetD8", cuMemsetD8_v2, cuMemsetD8_v2_ptds)                               \
    X(MemsetD16, "cuMemsetD16", cuMemsetD16_v2, cuMemsetD16_v2_ptds)                           \
    X(MemsetD32, "cuMemsetD32", cuMemsetD32_v2, cuMemsetD32_v2_ptds)

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

const struct api *api(const struct thr *t, int pt)
{
    return t->use_proc ? &g_proc[pt] : &g_direct[pt];
}

/* Records a driver call's return code: into the thread's digest, and as a line
** of output when it is not CUDA_SUCCESS.  Returns rc. */
CUresult note(struct thr *t, CUresult rc, int line)
{
    t->rcdig = mix(t->rcdig, (uint64_t)rc);
    t->ncalls++;
    if (rc != CUDA_SUCCESS)
        fprintf(t->out, "t%d i%d p%d rc %d (line %d)\n", t->tid, t->it, t->pos, (int)rc, line);
    return rc;
}

/* --- Kernels ---------------------------------------------------------------- */

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

/* Kernel name of slot ks resolved into t->fn[ks], through a new module or
** library. */
static void kernel_resolve(struct thr *t, int ks, const char *name)
{
    if (t->lib[ks]) {
        CUkernel k = NULL;
        RC(cuLibraryLoadData(&t->libh[ks], "fuzz image", NULL, NULL, 0, NULL, NULL, 0));
        RC(cuLibraryGetKernel(&k, t->libh[ks], name));
        t->fn[ks] = (CUfunction)k;   /* the runtime launches a CUkernel so */
    } else {
        RC(cuModuleLoadData(&t->mod[ks], "fuzz image"));
        RC(cuModuleGetFunction(&t->fn[ks], t->mod[ks], name));
    }
}

/* Defines a new kernel of a random layout for slot ks of thread t (its
** name made from thread, slot and version) and resolves it into t->fn[ks],
** through a new module or library.  Prints the return codes; 0 or -1. */
int kernel_new(struct thr *t, int ks)
{
    uint64_t *g = &t->gen;
    int idx = atomic_fetch_add(&g_nkd, 1);
    if (idx >= MAX_KDEFS)
        return -1;
    struct kdesc *kd = &g_kd[idx];
    char name[64], plain[48];
    unsigned c = rnd(g, 100);
    int want = c < 8 ? 0 : c < 60 ? 1 + (int)rnd(g, 8) : 9 + (int)rnd(g, 56);
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
    if (!bigk && t->xops && want > 32 && (kd->salt >> 8) % 4 == 0)
        want += 32;   /* wide: 65 to 96 parameters (threads with extra ops) */
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
    snprintf(plain, sizeof plain, "t%d_s%d_v%d", t->tid, ks, t->version[ks]++);
    fuzz_kernel_name(name, sizeof name, plain, kd->salt);
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
    kernel_resolve(t, ks, name);
    fprintf(t->out, "t%d kernel %s params %d bytes %zu\n", t->tid, name, kd->n, kd->total);
    return 0;
}

static void dump_body(const struct thr *t)
{
    static const char *names[] = {"launch", "h2d", "d2h", "d2d", "memset", "handoff", "hostfn", "ssync",
                                  "csync", "esync", "squery", "observe", "realloc", "scratch", "bad",
                                  "pinrealloc", "pagerealloc", "equery", "sspin", "nccl", "syncmem",
                                  "gencopy", "callback", "asyncalloc", "owngraph", "attr", "renew", "ctxref",
                                  "allockind", "ctx2", "readback", "writevalue", "vmm", "huge",
                                  "h2h", "caperr", "pause"};
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

/* The thread's streams, events, buffers and kernels. */
static void thread_setup(struct thr *t)
{
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
}

/* The end: everything complete, every buffer read back, everything freed. */
static void thread_final(struct thr *t)
{
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
    if (t->ctx2)
        ctx2_final(t);
    for (int ks = 0; ks < NKS; ks++)
        RC(t->lib[ks] ? cuLibraryUnload(t->libh[ks]) : cuModuleUnload(t->mod[ks]));
    if (t->evops)
        RC(cuModuleUnload(t->nccl_mod));
    fprintf(t->out, "t%d final bad-pointer %d calls %lu rc %016llx\n", t->tid,
            atomic_load(&t->bad_ptr), t->ncalls, (unsigned long long)t->rcdig);
}

static void *thread_main(void *p)
{
    struct thr *t = p;
    uint64_t s = g_seed * 1000003 + (uint64_t)t->tid;

    sched_enter(t);   /* before the thread's first allocation, too */

    t->gen = splitmix(&s);
    t->var = splitmix(&s) ^ 0x5555;
    uint64_t m = s ^ 0x6d656d6f70730000ull;   /* apart from gen and var */
    const char *classic = getenv("FUZZ_CLASSIC");
    t->memops = !(classic && *classic && strcmp(classic, "0")) && chance(&m, 70);
    t->evops = !(classic && *classic && strcmp(classic, "0")) && chance(&m, 70);
    uint64_t x = s ^ 0x78746f7073000000ull;   /* apart from the others */
    t->xops = !(classic && *classic && strcmp(classic, "0")) && !getenv("FUZZ_NO_XOPS") && chance(&x, 70);
    t->focus = t->xops && chance(&x, 40);
    t->out = open_memstream(&t->text, &t->text_len);
    thread_setup(t);
    if (t->xops)
        RC(cuMemAlloc_v2(&t->scratch_dev, 256));
    if (t->xops && chance(&x, 30))
        ctx2_make(t);
    t->rotate = t->xops && chance(&x, 25) ? 2 + (int)rnd(&x, 2) : 0;
    t->site = (int)((s >> 7) % 8);   /* apart from the generators */
    t->iters = 8 + (int)rnd(&t->gen, 25);
    gen_body(t);
    fprintf(t->out, "t%d body %d ops, %d iterations, %s entry points%s%s%s\n", t->tid, t->nbody, t->iters,
            t->use_proc ? "cuGetProcAddress" : "direct", t->memops ? ", memory ops" : "",
            t->evops ? ", event ops" : "", t->xops ? t->focus ? ", extra ops, focused" : ", extra ops" : "");
    if (getenv("FUZZ_DUMP"))
        dump_body(t);
    run_loop(t);
    thread_final(t);
    fclose(t->out);
    sched_leave(t);
    return NULL;
}

int fuzz_loop_main(int argc, char **argv);  /* fuzz_loop.c: fuzzprog loop SEED */
int fuzz_steps_main(int argc, char **argv); /* fuzz_loop.c: fuzzprog steps SEED */
int fuzz_periods_main(int argc, char **argv); /* fuzz_period.c: fuzzprog periods SEED */
int fuzz_xs_main(int argc, char **argv);      /* fuzz_xs.c: fuzzprog xs SEED */

int main(int argc, char **argv)
{
    static struct thr thr[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    CUdevice dev;
    int nthreads;

    if (argc == 3 && strcmp(argv[1], "loop") == 0)
        return fuzz_loop_main(argc, argv);
    if (argc == 3 && strcmp(argv[1], "steps") == 0)
        return fuzz_steps_main(argc, argv);
    if (argc == 3 && strcmp(argv[1], "periods") == 0)
        return fuzz_periods_main(argc, argv);
    if (argc == 3 && strcmp(argv[1], "xs") == 0)
        return fuzz_xs_main(argc, argv);
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: fuzzprog SEED [MAX_THREADS] | fuzzprog loop|steps|periods|xs SEED\n");
        return 2;
    }
    g_seed = strtoull(argv[1], NULL, 0);
    fuzz_end_begin(g_seed);
    fuzz_sites_begin(g_seed, argv);
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
    if (!getenv("FUZZ_SERIAL"))
        sched_init(nthreads);
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
    /* A collective is never put in a graph (graphshim holds none): without
    ** graphshim none is captured either, so a count above 0 differs. */
    printf("collectives captured %lu\n", fakecuda_captured("nccl"));
    /* A quarter of the programs end as one that calls cudaDeviceReset before it
    ** exits: every resource of the primary context goes, graphshim's too. */
    uint64_t r = g_seed ^ 0x7265736574000000ull;
    if (chance(&r, 25)) {
        printf("reset %d\n", (int)(chance(&r, 50) ? cuDevicePrimaryCtxReset_v2(dev) : cuDevicePrimaryCtxReset(dev)));
        printf("release %d\n", (int)cuDevicePrimaryCtxRelease_v2(dev));
    }
    return fuzz_end_finish();
}

