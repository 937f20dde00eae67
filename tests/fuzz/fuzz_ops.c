/*
** fuzz_ops.c: running a thread's loop body, with the variations of each
** iteration (tests/fuzz/README.md).
*/
#include "fuzzprog.h"

/* --- Running it ----------------------------------------------------------- */

CUstream sh(const struct thr *t, const struct op *o, int s)
{
    if (s == stream_legacy(t))
        return o->zero && !o->pt ? NULL : CU_STREAM_LEGACY;
    if (s == stream_pt(t))
        return o->zero && o->pt ? NULL : CU_STREAM_PER_THREAD;
    return t->streams[s];
}

CUdeviceptr dptr(struct thr *t, int r, int off)
{
    if (r >= RES_PIN(0))   /* pinned memory, as a kernel sees mapped memory */
        return (CUdeviceptr)(uintptr_t)(t->pin[r - RES_PIN(0)] + off);
    return (CUdeviceptr)(atomic_load(&t->base[r]) + (uintptr_t)off);
}


/* The argument of a host function or callback of op o (freed at exit: a host
** function may run late). */
struct hostarg *host_arg(struct thr *t, const struct op *o)
{
    struct hostarg *h = malloc(sizeof *h);
    *h = (struct hostarg){t, o->s, o->owned, (uint64_t)t->it * 1000 + (uint64_t)t->pos};
    return h;
}

/* Host function: folds the pinned buffers its stream owns into the stream's
** digest; it runs in stream order, after the copies before it. */
void host_fn(void *p)
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
void observe_host(struct thr *t, int s, uint32_t owned, const char *what)
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

/* Changes one byte of one argument that is no pointer: half the time the last
** byte of the last such argument (the end of the parameter bytes, where an
** off-by-one in a comparison hides), else one at random. */
static void tweak_byte(struct thr *t, const struct kdesc *kd, unsigned char *buf)
{
    int cand[MAX_PARAMS], n = 0;
    for (int i = 0; i < kd->n; i++)
        if (i != kd->out_idx && i != kd->in_idx)
            cand[n++] = i;
    if (!n)
        return;
    int i = chance(&t->var, 50) ? cand[n - 1] : cand[rnd(&t->var, (unsigned)n)];
    size_t at = chance(&t->var, 50) ? kd->sizes[i] - 1 : rnd(&t->var, (unsigned)kd->sizes[i]);
    buf[kd->offs[i] + at] ^= (unsigned char)(1 + t->it % 255);
}

/* The kind of an invalid launch (launch()): 1 to 4, and for threads with extra
** ops 6 to 15 too. */
static int bad_kind(struct thr *t)
{
    if (t->xops && chance(&t->var, 40))
        return 6 + (int)rnd(&t->var, 10);
    return 1 + (int)rnd(&t->var, 4);
}

/* The dimensions of an invalid launch of kind bad (launch()); a kernel without
** parameters, which takes a launch without them, gets a zero grid. */
static void bad_dims(int bad, const struct kdesc *kd, unsigned grid[3], unsigned block[3], unsigned *shmem)
{
    if (bad == 1)
        grid[1] = 0;
    else if (bad == 2)
        block[0] = 2048;
    else if (bad == 3)
        *shmem = 300000;
    else if (bad == 6)
        grid[1] = 70000;
    else if (bad == 11)
        grid[0] = 1u << 31;
    else if (bad == 12)
        grid[2] = 0;
    else if (bad == 13)
        grid[2] = 70000;
    else if (bad == 15 || ((bad == 4 || bad == 9) && !kd->n))
        grid[0] = 0;
}

/* An extra list made malformed (variant v): no size, a size key with no
** pointer to it, or no buffer pointer. */
static void malformed(void **extra, size_t *size, unsigned v)
{
    if (v == 0) {
        extra[2] = CU_LAUNCH_PARAM_END;
    } else if (v == 1) {
        extra[3] = NULL;
    } else {
        extra[0] = CU_LAUNCH_PARAM_BUFFER_SIZE, extra[1] = size;
        extra[2] = CU_LAUNCH_PARAM_END;
    }
}

/* Launch attributes a launch of threads with extra ops may carry, with the
** values a program that sets them would give: a cluster of one block, the
** default scheduling policy, memory synchronization domain and its map, a
** preferred carveout. */
static void xattr(CUlaunchAttribute *a, int kind)
{
    switch (kind) {
    case 5:
        a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a->value.clusterDim.x = a->value.clusterDim.y = a->value.clusterDim.z = 1;
        break;
    case 6:
        a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
        a->value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_DEFAULT;
        break;
    case 7:
        a->id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
        a->value.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;
        break;
    case 8:
        a->id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP;
        a->value.memSyncDomainMap.default_ = 0;
        a->value.memSyncDomainMap.remote = 1;
        break;
    default:
        a->id = CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
        a->value.sharedMemCarveout = 50;
        break;
    }
}

/* The launch attributes of op o (o->nattr of them), into attrs. */
static void launch_attrs(const struct op *o, uint64_t seed, CUlaunchAttribute *attrs)
{
    memset(attrs, 0, 4 * sizeof *attrs);
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
        case 4:  /* one the shim does not key: the launch passes through */
            attrs[i].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
            break;
        default:
            xattr(&attrs[i], o->attr_kind[i]);
            break;
        }
    }
}

/* Issues one launch of kernel slot ks the op's way.  bad: an invalid launch
** (1: a zero grid, 2: too large a block, 3: too much shared memory, 4: an
** extra buffer too small; threads with extra ops: 6 a grid too high, 7 both
** kernelParams and extra, 8 an extra list with a key the driver does not know,
** 9 neither for a kernel with parameters, 10 attributes counted but not
** given, 11 a grid too wide (2^31), 12 a grid of no depth, 13 too deep, 14 a
** malformed extra list, which a kernel without parameters takes, 15 a grid of
** no width), or 5: a valid one with one argument byte changed.  A launch of
** threads with extra ops through extra may pass the whole argument buffer's
** size, more than the kernel takes and than any kernel may (a fixed buffer);
** one of a kernel without parameters may pass no kernelParams. */
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
    if (bad == 5)
        tweak_byte(t, kd, buf);
    bad_dims(bad, kd, grid, block, &shmem);
    if (bad == 4)
        size = kd->total - 1;
    if (bad == 4 || bad == 8 || bad == 14)
        how |= 2;
    else if (bad == 10)
        how |= 1;
    if (!bad && (how & 2) && t->xops && (o->argseed & 7) == 0)
        size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    if (bad == 8)
        extra[2] = (void *)(uintptr_t)0x7;   /* no CU_LAUNCH_PARAM_* key */
    else if (bad == 14)
        malformed(extra, &size, (unsigned)(seed % 3));
    void **kp = how & 2 ? NULL : args, **ex = how & 2 ? extra : NULL;
    if (bad == 7)
        kp = args, ex = extra;
    else if (bad == 9 || (!bad && !kd->n && t->xops && (o->argseed & 2)))
        kp = ex = NULL;
    CUstream s = sh(t, o, o->s);
    if (how & 1) {
        CUlaunchAttribute attrs[4];
        launch_attrs(o, seed, attrs);
        CUlaunchConfig cfg = {grid[0], grid[1], grid[2], block[0], block[1], block[2], shmem, s,
                              o->nattr ? attrs : NULL, (unsigned)o->nattr};
        CUlaunchAttribute many[9];
        if (o->nattr == 1 && o->attr_kind[0] == 3 && t->xops && (o->argseed & 3) == 0) {
            memset(many, 0, sizeof many);   /* more attributes than the shim keys, all to be ignored */
            cfg.attrs = many, cfg.numAttrs = 9;
        }
        if (bad == 10)
            cfg.attrs = NULL, cfg.numAttrs = 1;
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

void fill_page(struct thr *t, int i, uint64_t seed)
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
CUresult ready(CUresult rc)
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

/* A launch of the body; variation: 1 changed arguments, 2 changed pointer,
** 3 an invalid launch first, 4 one argument byte changed. */
static void run_launch(struct thr *t, const struct op *o, int variation)
{
    uint64_t seed = o->argseed;
    if (o->out_r >= RES_PIN(0) && t->pin_kind[o->out_r - RES_PIN(0)] == PIN_PAGEABLE)
        return;   /* a kernel cannot write pageable memory */
    if (o->every_iter || variation == 1)
        seed += (uint64_t)t->it * 7919 + 1;
    if (variation == 3)
        launch(t, o, seed, o->out_off, bad_kind(t));
    launch(t, o, seed, variation == 2 ? o->alt_off : o->out_off, variation == 4 ? 5 : 0);
}

/* A copy of the body: H2D, D2H or D2D; variation 2 moves its device side, 6
** (buffers in rotation) moves it to the iteration's place of t->rotate. */
static void run_copy(struct thr *t, const struct op *o, int variation, const struct api *a, CUstream s)
{
    int it = t->it, room = BUF_BYTES - o->n + 1;
    int shift = variation == 2 ? 8 * (1 + it % 3) : variation == 6 ? 8 * (it % t->rotate) : 0;

    if (o->kind == OP_H2D) {
        /* Moved pointers: the device side shifts (the host side is the program's). */
        CUdeviceptr d = dptr(t, o->dst_r, (o->doff + shift) % room);
        if (!o->pageable) {
            RC(a->MemcpyHtoDAsync(d, t->pin[o->src_r] + o->soff, (size_t)o->n, s));
            return;
        }
        fill_page(t, 0, (uint64_t)it * 31 + (uint64_t)t->pos + (uint64_t)t->rep * 1000003);
        RC(a->MemcpyHtoDAsync(d, t->page[0] + o->soff, (size_t)o->n, s));
        if (o->value & 1)   /* freed, even, and allocated again (often at its address) */
            page_renew(t, 0, (o->value >> 1) & 1, BUF_BYTES);
        memset(t->page[0], 0xEE, BUF_BYTES);   /* allowed: the copy has its bytes */
    } else if (o->kind == OP_D2H) {
        CUdeviceptr d = dptr(t, o->src_r, (o->soff + shift) % room);
        if (!o->pageable) {
            RC(a->MemcpyDtoHAsync(t->pin[o->dst_r] + o->doff, d, (size_t)o->n, s));
            return;
        }
        memset(t->page[1], 0, BUF_BYTES);
        RC(a->MemcpyDtoHAsync(t->page[1] + o->doff, d, (size_t)o->n, s));
        /* a D2H copy into pageable memory is complete when the call returns */
        fprintf(t->out, "t%d i%d p%d d2h %016llx\n", t->tid, it, t->pos,
                (unsigned long long)mix_bytes(0, t->page[1], BUF_BYTES));
    } else {
        /* Moved pointers: both sides shift (a caching allocator's other block). */
        RC(a->MemcpyDtoDAsync(dptr(t, o->dst_r, (o->doff + shift) % room),
                              dptr(t, o->src_r, (o->soff + shift) % room), (size_t)o->n, s));
    }
}

static void run_memset(struct thr *t, const struct op *o, int variation, const struct api *a, CUstream s)
{
    int it = t->it;
    unsigned v = o->value + (variation == 1 ? (unsigned)it : 0);
    int units = (o->dst_r >= NDEV ? 8 : BUF_BYTES) / o->width, room = units - o->n + 1;
    int off = variation == 2   ? o->width * ((o->doff / o->width + 1 + it % 3) % room)
              : variation == 6 ? o->width * ((o->doff / o->width + it % t->rotate) % room)
                               : o->doff;
    CUdeviceptr p = dptr(t, o->dst_r, off);
    if (o->width == 1)
        RC(a->MemsetD8Async(p, (unsigned char)v, (size_t)o->n, s));
    else if (o->width == 2)
        RC(a->MemsetD16Async(p, (unsigned short)v, (size_t)o->n, s));
    else
        RC(a->MemsetD32Async(p, v, (size_t)o->n, s));
}

/* Synchronizes, queries or reads back; a handoff; a host function. */
static void run_sync(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    int it = t->it;

    switch (o->kind) {
    case OP_HANDOFF: {
        struct op o2 = *o;
        o2.s = o->s2;
        RC(a->EventRecord(t->events[o->ev], s));
        RC(api(t, o2.pt)->StreamWaitEvent(sh(t, &o2, o->s2), t->events[o->ev], 0));
        break;
    }
    case OP_HOSTFN:
        RC(a->LaunchHostFunc(s, host_fn, host_arg(t, o)));
        break;
    case OP_SSYNC:
        RC(t->site ? fuzz_sync_via(t->site, a->StreamSynchronize, s) : a->StreamSynchronize(s));
        observe_host(t, o->s, o->owned, "ssync");
        break;
    case OP_ESYNC:
        RC(a->EventRecord(t->events[o->ev], s));
        RC(cuEventSynchronize(t->events[o->ev]));
        observe_host(t, o->s, o->owned, "esync");
        break;
    case OP_CSYNC:
        RC(o->how && t->xops ? cuCtxSynchronize_v2(o->how == 1 ? g_ctx : NULL) : cuCtxSynchronize());
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
    default:   /* OP_OBSERVE */
        for (int r = 0; r < NDEV + NKS; r++) {
            if (!(o->owned & (1u << r)))
                continue;
            unsigned char tmp[BUF_BYTES];
            RC(a->MemcpyDtoHAsync(tmp, dptr(t, r, 0), r < NDEV ? BUF_BYTES : 8, s));
            fprintf(t->out, "t%d i%d p%d obs r%d %016llx\n", t->tid, it, t->pos, r,
                    (unsigned long long)mix_bytes(0, tmp, r < NDEV ? BUF_BYTES : 8));
        }
        break;
    }
}

/* A device buffer freed and allocated again.  value's bit 3: the new buffer
** is stream-ordered pool memory in odd iterations, where the driver refuses to
** move a copy node made on cuMemAlloc memory (and back). */
static void run_realloc(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    CUdeviceptr old = dptr(t, o->dst_r, 0), neu;
    int pool = (o->value >> 3) & t->it & 1;
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
    RC(a->MemsetD32Async(neu, o->value + (unsigned)t->it, BUF_BYTES / 4, s));
}

/* The slot's owner is done with it; another kind (and maybe size) of host
** memory takes its place, often at the same address. */
static void run_pin_realloc(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
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
        t->pin[p][j] = (unsigned char)(o->value + (unsigned)t->it * 13 + (unsigned)j * 7);
}

/* Runs op o of the body in iteration t->it; variation: 0 none, 1 changed
** arguments, 2 changed pointer, 3 invalid launch first, 4 one argument byte
** changed, 6 a copy's or memset's buffers in rotation. */
static void run_op(struct thr *t, const struct op *o, int variation)
{
    const struct api *a = api(t, o->pt);
    CUstream s = sh(t, o, o->s);

    switch (o->kind) {
    case OP_LAUNCH:
        run_launch(t, o, variation);
        break;
    case OP_H2D:
    case OP_D2H:
    case OP_D2D:
        run_copy(t, o, variation, a, s);
        break;
    case OP_MEMSET:
        run_memset(t, o, variation, a, s);
        break;
    case OP_SSPIN:
    case OP_EQUERY:
    case OP_NCCL:
        run_evop(t, o, a, s);
        break;
    case OP_REALLOC:
        run_realloc(t, o, a, s);
        break;
    case OP_SCRATCH: {
        CUdeviceptr p;
        RC(cuMemAlloc_v2(&p, 512));
        RC(cuMemFree_v2(p));
        break;
    }
    case OP_BAD: {
        /* a launch that fails: it owns nothing, so one that ran would race with
        ** the kernel's launches on other streams (its global); a kernel without
        ** parameters takes a malformed extra list (14), so it gets a grid of no
        ** width instead (fuzz seed 82: other bytes under graphshim, which
        ** ordered the two differently, as a GPU may) */
        int bad = bad_kind(t);
        launch(t, o, (uint64_t)t->it, 0, bad == 14 && !t->kd[o->ks]->n ? 15 : bad);
        break;
    }
    case OP_PINREALLOC:
        run_pin_realloc(t, o, a, s);
        break;
    case OP_PAGEREALLOC:
        page_renew(t, o->dst_r, o->n & 1, o->n & 2 ? BUF_BYTES + 4096 : BUF_BYTES);
        break;
    default:
        if (o->kind >= OP_XFIRST)
            run_xop(t, o, a, s);
        else
            run_sync(t, o, a, s);
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
void run_loop(struct thr *t)
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
                t->rep = r;
                for (int q = 0; q < o->loop_len; q++, t->pos++) {
                    sched_turn(t);
                    run_op(t, &t->body[t->pos], 0);
                }
                t->pos = at;
            }
            t->rep = 0;
            if (vary && chance(&t->var, 15)) {
                unsigned c = rnd(&t->var, 6);
                if (c == 0 && (o->kind == OP_LAUNCH || o->kind == OP_MEMSET || o->kind == OP_D2D))
                    continue;   /* skipped this time */
                if (c == 1)
                    extra_boundary(t, o->s);
                if (c == 2 && (o->kind == OP_LAUNCH || o->kind == OP_MEMSET))
                    run_op(t, o, 0);   /* repeated this time */
                variation = c == 3 ? 1 : c == 4 ? 2 : c == 5 && chance(&t->var, 30) ? 3 : 0;
                if (variation == 1 && t->xops && chance(&t->var, 50))
                    variation = 4;   /* one byte of one argument changed, as a scalar an optimizer steps */
            }
            if (t->rotate && !variation && t->it % t->rotate)   /* buffers in rotation: they move and come back */
                variation = o->kind == OP_LAUNCH ? 2
                            : o->kind == OP_MEMSET || (o->kind >= OP_H2D && o->kind <= OP_D2D) ? 6 : 0;
            sched_turn(t);
            if (t->xops && chance(&t->var, 8))   /* the host works (or polls) between calls: held work ages */
                fakecuda_advance_ns(20000 + 1000 * (uint64_t)rnd(&t->var, 100));
            run_op(t, o, variation);
        }
    }
}

/* FUZZ_DUMP set: prints the body on stderr, to read a difference by. */
