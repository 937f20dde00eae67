/*
** fuzz_xops.c: the extra ops (threads with extra ops; tests/fuzz/README.md).
**
** Every entry point graphshim treats as an op or a boundary that the older
** grammar never called: the synchronous copies and memsets in their legacy and
** _ptds forms, the generic cuMemcpyAsync, stream callbacks, stream-ordered
** allocations freed in the same segment, the program's own capture and graph
** launch, function attributes, a stream destroyed and created again, a
** reference to the primary context taken and given back, a second context, a
** stream memory operation (cuStreamWriteValue32: hooks.def does not list it,
** so graphshim must take it for what it cannot tell), pinned memory read
** back after each kind of boundary that must issue held work first, and small
** ops: an allocation no device holds, a copy from host to host, capture calls
** and a destroy the driver refuses, graphshim's own pause.  Each keeps the
** program race-free as fuzzprog.c describes: a synchronous copy or memset runs
** on the legacy stream (the per-thread stream for _ptds), so the resources it
** touches are handed to that stream first, as to any other.
*/
#include <dlfcn.h>

#include "fuzzprog.h"

enum syncmem { SM_H2D_PINNED, SM_H2D_PAGEABLE, SM_D2H, SM_D2D, SM_GENERIC, SM_SET8, SM_SET16, SM_SET32, SM_KINDS };
enum gencopy { GC_D2D, GC_H2D_PINNED, GC_H2D_PAGEABLE, GC_D2H_PINNED, GC_KINDS };

/* A synchronous copy or memset, on the legacy or the per-thread stream. */
static void gen_syncmem(struct thr *t, struct gen *g)
{
    int s = chance(&t->gen, 50) ? stream_legacy(t) : stream_pt(t);
    int src = pick(t, g, s, 0, NDEV), dst = pick(t, g, s, 0, NDEV), pin = (int)rnd(&t->gen, NPIN);
    struct op *o;
    unsigned how = rnd(&t->gen, SM_KINDS);

    need(t, g, s, src);
    need(t, g, s, dst);
    if (how == SM_H2D_PINNED)
        need(t, g, s, RES_PIN(pin));
    o = op_add(t, OP_SYNCMEM, s);
    o->pt = s == stream_pt(t);
    o->how = (int)how;
    o->src_r = how == SM_H2D_PINNED ? pin : src;
    o->dst_r = dst;
    o->value = (unsigned)splitmix(&t->gen);
    if (how >= SM_SET8) {
        o->width = 1 << (how - SM_SET8);
        memset_extent(t, o);
    } else {
        copy_extent(t, o);
    }
}

/* cuMemcpyAsync: device to device, pinned or pageable host to device, device
** to pinned host. */
static void gen_gencopy(struct thr *t, struct gen *g, int s)
{
    int src = pick(t, g, s, 0, NDEV), dst = pick(t, g, s, 0, NDEV), pin = (int)rnd(&t->gen, NPIN);
    unsigned how = rnd(&t->gen, GC_KINDS);
    struct op *o;

    need(t, g, s, src);
    need(t, g, s, dst);
    if (how == GC_H2D_PINNED || how == GC_D2H_PINNED)
        need(t, g, s, RES_PIN(pin));
    o = op_add(t, OP_GENCOPY, s);
    o->how = (int)how;
    o->src_r = src;
    o->dst_r = dst;
    o->ks = pin;
    copy_extent(t, o);
}

/* A created stream with CU_STREAM_NON_BLOCKING, at random; -1 for none. */
static int nonblocking(struct thr *t)
{
    int c[MAX_CREATED], n = 0;
    for (int i = 0; i < t->ncreated; i++)
        if (t->sflags[i] & CU_STREAM_NON_BLOCKING)
            c[n++] = i;
    return n ? c[rnd(&t->gen, (unsigned)n)] : -1;
}

/* Pinned memory written on s, then read by the host (or a callback) after a
** boundary that must issue what s holds first. */
static void gen_readback(struct thr *t, struct gen *g, int s)
{
    int pin = (int)rnd(&t->gen, NPIN), src = pick(t, g, s, 0, NDEV);
    need(t, g, s, src);
    need(t, g, s, RES_PIN(pin));
    struct op *o = op_add(t, OP_READBACK, s);
    o->how = (int)rnd(&t->gen, 4);   /* context, event, callback, the legacy stream's memset */
    o->src_r = src;
    o->dst_r = pin;
    o->ev = (int)rnd(&t->gen, (unsigned)t->nevents);
    copy_extent(t, o);
    o->owned = owned_by(g, s);
}

/* A stream memory operation, an entry point hooks.def does not list, onto the
** word a launch before it on s writes (where there is one): issued before
** that launch, it would be overwritten. */
static void gen_writevalue(struct thr *t, struct gen *g, int s)
{
    int dst = pick(t, g, s, 0, NDEV), doff = 4 * (int)rnd(&t->gen, BUF_BYTES / 4);
    for (int i = t->nbody - 1; i >= 0; i--)
        if (t->body[i].kind == OP_LAUNCH && t->body[i].s == s && t->body[i].out_r < NDEV) {
            dst = t->body[i].out_r, doff = t->body[i].out_off;
            break;
        }
    need(t, g, s, dst);
    struct op *o = op_add(t, OP_WRITEVALUE, s);
    o->dst_r = dst;
    o->doff = doff;
    o->value = (unsigned)splitmix(&t->gen);
    o->owned = owned_by(g, s);
}

/* A small op on stream s: an allocation of 1 TiB; a copy from host to host;
** a capture's end on a stream never begun, or a default stream destroyed;
** graphshim's own pause around a memset. */
static void gen_small(struct thr *t, struct gen *g, int s)
{
    unsigned c = rnd(&t->gen, 4);
    struct op *o;

    if (c == 0) {
        o = op_add(t, OP_HUGE, s);
        o->how = (int)rnd(&t->gen, 4);   /* cuMemAlloc, cuMemAllocAsync on s, cuMemAllocHost, managed */
    } else if (c == 1) {
        int pin = (int)rnd(&t->gen, NPIN), how = (int)rnd(&t->gen, 4);   /* bit 0: a pageable source;
                                                                          ** bit 1: a pageable destination */
        if (!(how & 1))
            need(t, g, s, RES_PIN((pin + 1) % NPIN));
        if (!(how & 2))
            need(t, g, s, RES_PIN(pin));
        o = op_add(t, OP_H2H, s);
        o->how = how;
        o->src_r = (pin + 1) % NPIN;
        o->dst_r = pin;
        copy_extent(t, o);
    } else if (c == 2) {
        int d = chance(&t->gen, 50) ? stream_legacy(t) : stream_pt(t);
        o = op_add(t, OP_CAPERR, chance(&t->gen, 50) ? s : d);
        o->how = o->s == stream_legacy(t) || o->s == stream_pt(t) ? (int)rnd(&t->gen, 2) : 0;   /* 1: destroyed */
    } else {
        int dst = pick(t, g, s, 0, NDEV);
        need(t, g, s, dst);
        o = op_add(t, OP_PAUSE, s);
        o->how = (int)rnd(&t->gen, 4);   /* bit 0: paused twice; bit 1: a resume unpaused first */
        o->dst_r = dst;
        o->width = 4;
        o->value = (unsigned)splitmix(&t->gen);
        memset_extent(t, o);
    }
    o->owned = owned_by(g, o->s);
}

/* One of the extra ops on stream s (with the handoffs it needs). */
void gen_xop(struct thr *t, struct gen *g, int s)
{
    unsigned c = rnd(&t->gen, 100);
    struct op *o;

    if (chance(&t->gen, 12)) {
        gen_small(t, g, s);
        return;
    }
    if (c < 12) {
        gen_readback(t, g, s);
        return;
    }
    if (c < 16) {
        gen_writevalue(t, g, s);
        return;
    }
    if (c < 34) {
        gen_syncmem(t, g);
        return;
    }
    if (c < 44) {
        gen_gencopy(t, g, s);
        return;
    }
    if (c < 54) {
        o = op_add(t, OP_CALLBACK, s);
    } else if (c < 66) {
        int dst = pick(t, g, s, 0, NDEV);
        need(t, g, s, dst);
        o = op_add(t, OP_ASYNCALLOC, s);
        o->how = (int)rnd(&t->gen, 2);   /* 1: from the device's default pool */
        o->dst_r = dst;
        o->value = (unsigned)splitmix(&t->gen);
        copy_extent(t, o);
    } else if (c < 76 && g_nthreads == 1 && nonblocking(t) >= 0) {
        /* the program's own capture, in a program of one thread (another
        ** thread's context synchronize would fail it) on a non-blocking stream
        ** (a blocking one meets the legacy stream's work) */
        int cs = nonblocking(t), a = pick(t, g, cs, 0, NDEV), b = pick(t, g, cs, 0, NDEV);
        need(t, g, cs, a);
        need(t, g, cs, b);
        o = op_add(t, OP_OWNGRAPH, cs);
        o->how = (int)rnd(&t->gen, 4);   /* thread-local, relaxed, the first call's global mode, or
                                          ** captured into a graph of the program's after its memset */
        o->src_r = a;
        o->dst_r = b;
        o->value = (unsigned)splitmix(&t->gen);
        copy_extent(t, o);
        o->width = chance(&t->gen, 25);   /* a second begin on the capturing stream */
    } else if (c < 84) {
        o = op_add(t, OP_ATTR, s);
        o->how = (int)rnd(&t->gen, 4);
        o->ks = (int)rnd(&t->gen, NKS);
        o->value = (unsigned)rnd(&t->gen, 3) * 24576;
    } else if (c < 90) {
        o = op_add(t, OP_RENEW, (int)rnd(&t->gen, (unsigned)t->ncreated));
        o->ev = (int)rnd(&t->gen, (unsigned)t->nevents);
    } else if (c < 96 && t->ctx2 && chance(&t->gen, 60)) {
        o = op_add(t, OP_CTX2, s);
        o->how = (int)rnd(&t->gen, 2);   /* made current by cuCtxSetCurrent, or pushed */
        o->n = 1 + (int)rnd(&t->gen, 3);
        o->value = (unsigned)splitmix(&t->gen);
    } else if (c < 96) {
        o = op_add(t, OP_CTXREF, s);
        o->how = (int)rnd(&t->gen, 3);
    } else if (chance(&t->gen, 50)) {
        o = op_add(t, OP_ALLOCKIND, s);
        o->how = (int)rnd(&t->gen, 3);
    } else {
        int dst = pick(t, g, s, 0, NDEV);
        need(t, g, s, dst);
        o = op_add(t, OP_VMM, s);
        o->how = (int)rnd(&t->gen, 4);   /* bit 0: the upper half first; bit 1: mapped again elsewhere */
        o->dst_r = dst;
        o->value = (unsigned)splitmix(&t->gen);
        copy_extent(t, o);
    }
    o->owned = owned_by(g, o->s);
}

/* --- Running them ------------------------------------------------------------ */

static void run_syncmem(struct thr *t, const struct op *o, const struct api *a)
{
    CUdeviceptr d = dptr(t, o->dst_r, o->doff), src = dptr(t, o->src_r, o->soff);
    size_t n = (size_t)o->n;
    unsigned v = o->value + (unsigned)t->it;
    unsigned char tmp[BUF_BYTES];

    switch (o->how) {
    case SM_H2D_PINNED:
        RC(a->MemcpyHtoD(d, t->pin[o->src_r] + o->soff, n));
        break;
    case SM_H2D_PAGEABLE:
        fill_page(t, 0, (uint64_t)t->it * 37 + (uint64_t)t->pos);
        RC(a->MemcpyHtoD(d, t->page[0] + o->soff, n));
        memset(t->page[0], 0xEE, BUF_BYTES);   /* the copy is complete */
        break;
    case SM_D2H:
        memset(tmp, 0, sizeof tmp);
        RC(a->MemcpyDtoH(tmp, src, n));
        fprintf(t->out, "t%d i%d p%d syncd2h %016llx\n", t->tid, t->it, t->pos,
                (unsigned long long)mix_bytes(0, tmp, n));
        break;
    case SM_D2D:
        RC(a->MemcpyDtoD(d, src, n));
        break;
    case SM_GENERIC:
        RC(a->Memcpy(d, src, n));
        break;
    case SM_SET8:
        RC(a->MemsetD8(d, (unsigned char)v, n));
        break;
    case SM_SET16:
        RC(a->MemsetD16(d, (unsigned short)v, n));
        break;
    default:
        RC(a->MemsetD32(d, v, n));
        break;
    }
}

static void run_gencopy(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    CUdeviceptr d = dptr(t, o->dst_r, o->doff), src = dptr(t, o->src_r, o->soff);
    size_t n = (size_t)o->n;

    switch (o->how) {
    case GC_D2D:
        RC(a->MemcpyAsync(d, src, n, s));
        break;
    case GC_H2D_PINNED:
        RC(a->MemcpyAsync(d, (CUdeviceptr)(uintptr_t)(t->pin[o->ks] + o->soff), n, s));
        break;
    case GC_H2D_PAGEABLE:
        fill_page(t, 0, (uint64_t)t->it * 41 + (uint64_t)t->pos + (uint64_t)t->rep * 1000003);
        RC(a->MemcpyAsync(d, (CUdeviceptr)(uintptr_t)(t->page[0] + o->soff), n, s));
        memset(t->page[0], 0xEE, BUF_BYTES);   /* allowed: the copy has its bytes */
        break;
    default:
        RC(a->MemcpyAsync((CUdeviceptr)(uintptr_t)(t->pin[o->ks] + o->doff), src, n, s));
        break;
    }
}

static void CUDA_CB callback_fn(CUstream s, CUresult status, void *p)
{
    (void)s;
    (void)status;
    host_fn(p);
}

/* Stream-ordered memory: allocated, set, read into a buffer of the stream's
** and freed, all on the stream. */
static void run_asyncalloc(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    CUdeviceptr p = 0;
    CUmemoryPool pool;
    if (o->how && RC(cuDeviceGetDefaultMemPool(&pool, 0)) == CUDA_SUCCESS) {
        if (RC(a->MemAllocFromPoolAsync(&p, BUF_BYTES, pool, s)) != CUDA_SUCCESS)
            return;
    } else if (RC(a->MemAllocAsync(&p, BUF_BYTES, s)) != CUDA_SUCCESS) {
        return;
    }
    RC(a->MemsetD8Async(p, (unsigned char)(o->value + (unsigned)t->it), BUF_BYTES, s));
    RC(a->MemcpyDtoDAsync(dptr(t, o->dst_r, o->doff), p + (CUdeviceptr)o->soff, (size_t)o->n, s));
    RC(a->MemFreeAsync(p, s));
}

/* The program's own graph: a memset and a copy captured on stream s (thread
** local or relaxed: other threads go on), instantiated, launched on s and
** destroyed once s is complete; or (how 3) a graph the program builds with the
** memset as a node, into which the copy is captured after it, as a library
** appends captured work to a graph of its own (cuStreamBeginCaptureToGraph).
** graphshim passes all of it through. */
static void run_owngraph(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    CUgraph g = NULL, built = NULL;
    CUgraphExec x = NULL;
    CUgraphNode set;
    CUstreamCaptureMode mode = o->how ? CU_STREAM_CAPTURE_MODE_RELAXED : CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    CUDA_MEMSET_NODE_PARAMS m = {.dst = dptr(t, o->src_r, o->soff & ~3), .value = o->value + (unsigned)t->it,
                                 .elementSize = 4, .width = (size_t)o->n / 4, .height = 1};
    CUresult rc;

    if (o->how == 3) {
        if (!m.width || RC(cuGraphCreate(&built, 0)) != CUDA_SUCCESS)
            return;
        rc = RC(cuGraphAddMemsetNode(&set, built, NULL, 0, &m, g_ctx));
        if (rc == CUDA_SUCCESS)
            rc = RC(o->pt ? cuStreamBeginCaptureToGraph_ptsz(s, built, &set, NULL, 1, mode)
                          : cuStreamBeginCaptureToGraph(s, built, &set, NULL, 1, mode));
    } else {
        rc = o->how == 2 ? RC(o->pt ? cuStreamBeginCapture_ptsz(s) : cuStreamBeginCapture(s))
                         : RC(a->StreamBeginCapture(s, mode));
    }
    if (rc == CUDA_SUCCESS && o->width)
        RC(a->StreamBeginCapture(s, mode));   /* capturing already: refused */
    if (rc == CUDA_SUCCESS) {
        if (o->how != 3)
            RC(a->MemsetD32Async(m.dst, m.value, (size_t)o->n / 4, s));
        RC(a->MemcpyDtoDAsync(dptr(t, o->dst_r, o->doff), dptr(t, o->src_r, o->soff), (size_t)o->n, s));
        RC(a->StreamEndCapture(s, &g));
    }
    if (g && RC(cuGraphInstantiateWithFlags(&x, g, 0)) == CUDA_SUCCESS) {
        RC(a->GraphLaunch(x, s));
        RC(a->StreamSynchronize(s));
        RC(cuGraphExecDestroy(x));
    }
    if (g || built)
        RC(cuGraphDestroy(g ? g : built));
}

/* Created stream o->s destroyed and created again with its flags; what it
** owned is handed to the new one by an event recorded on the old. */
static void run_renew(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    CUevent e = t->events[o->ev];
    RC(a->EventRecord(e, s));
    RC(cuStreamDestroy_v2(s));
    RC(cuStreamCreate(&t->streams[o->s], t->sflags[o->s]));
    RC(a->StreamWaitEvent(t->streams[o->s], e, 0));
}

/* A function attribute, a cache configuration, a kernel's attribute (slots
** of libraries hold CUkernels) or a context limit set. */
static void run_attr(struct thr *t, const struct op *o)
{
    switch (o->how) {
    case 0:
        RC(cuFuncSetAttribute(t->fn[o->ks], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)o->value));
        break;
    case 1:
        RC(cuFuncSetCacheConfig(t->fn[o->ks], CU_FUNC_CACHE_PREFER_SHARED));
        break;
    case 2:
        RC(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)o->value,
                                (CUkernel)t->fn[o->ks], 0));
        break;
    default:
        RC(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 1u << 20));
        break;
    }
}

/* Memory of another kind allocated and freed between ops: pitched, managed;
** or the default pool trimmed. */
static void run_allockind(struct thr *t, const struct op *o)
{
    CUdeviceptr p;
    size_t pitch;
    CUmemoryPool pool;

    if (o->how == 0) {
        if (RC(cuMemAllocPitch_v2(&p, &pitch, 100, 8, 4)) == CUDA_SUCCESS)
            RC(cuMemFree_v2(p));
    } else if (o->how == 1) {
        if (RC(cuMemAllocManaged(&p, 256, CU_MEM_ATTACH_GLOBAL)) == CUDA_SUCCESS)
            RC(cuMemFree_v2(p));
    } else if (RC(cuDeviceGetDefaultMemPool(&pool, 0)) == CUDA_SUCCESS) {
        RC(cuMemPoolTrimTo(pool, 0));
    }
}

/* Memory of virtual memory management, as a caching allocator's expandable
** segment: addresses reserved for two granules, a handle mapped at one of them
** with access granted.  Where that fails, as on a small device whose memory
** graphs took (the runner's oom3 setting gives graphshim's run a device of 3
** MiB, and the run without it the default), the allocator falls back on
** cuMemAlloc, so the calls of memory management go unnoted: the program's
** output is that of the work alone.  0 for none. */
struct vmm_mem {
    CUdeviceptr va, p;
    CUmemGenericAllocationHandle h;
    size_t gran;
    int mapped;   /* 1: p is a mapping of h in va; 0: p from cuMemAlloc */
};

static void vmm_get(struct vmm_mem *m, int upper)
{
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemAccessDesc rw = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    int supported = 0;

    memset(m, 0, sizeof *m);
    if (cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0) == CUDA_SUCCESS &&
        supported && cuMemGetAllocationGranularity(&m->gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == 0 &&
        cuMemAddressReserve(&m->va, 2 * m->gran, 0, 0, 0) == CUDA_SUCCESS) {
        if (cuMemCreate(&m->h, m->gran, &prop, 0) == CUDA_SUCCESS) {
            m->p = m->va + (upper ? m->gran : 0);
            if (cuMemMap(m->p, m->gran, 0, m->h, 0) == CUDA_SUCCESS &&
                cuMemSetAccess(m->p, m->gran, &rw, 1) == CUDA_SUCCESS) {
                m->mapped = 1;
                return;
            }
            cuMemUnmap(m->p, m->gran);
            cuMemRelease(m->h);
        }
        cuMemAddressFree(m->va, 2 * m->gran);
    }
    if (cuMemAlloc_v2(&m->p, BUF_BYTES) != CUDA_SUCCESS)
        m->p = 0;
}

/* The segment moved to its other granule (the handle's contents go with it). */
static void vmm_move(struct vmm_mem *m)
{
    CUmemAccessDesc rw = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
                          .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    if (!m->mapped || cuMemUnmap(m->p, m->gran) != CUDA_SUCCESS)
        return;
    m->p = m->p == m->va ? m->va + m->gran : m->va;
    if (cuMemMap(m->p, m->gran, 0, m->h, 0) != CUDA_SUCCESS || cuMemSetAccess(m->p, m->gran, &rw, 1) != CUDA_SUCCESS)
        fprintf(stderr, "fuzzprog: a handle could not be mapped again\n");
}

static void vmm_put(struct vmm_mem *m)
{
    if (!m->mapped) {
        cuMemFree_v2(m->p);
        return;
    }
    cuMemUnmap(m->p, m->gran);
    cuMemRelease(m->h);
    cuMemAddressFree(m->va, 2 * m->gran);
}

/* The segment set and copied from on stream s into a buffer of s's; now and
** then the stream synchronized, the segment moved and copied from again; the
** stream synchronized before the memory goes (work in flight must not read
** unmapped memory). */
static void run_vmm(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    struct vmm_mem m;

    vmm_get(&m, o->how & 1);
    if (!m.p)
        return;
    RC(a->MemsetD32Async(m.p, o->value + (unsigned)t->it, BUF_BYTES / 4, s));
    RC(a->MemcpyDtoDAsync(dptr(t, o->dst_r, o->doff), m.p + (CUdeviceptr)o->soff, (size_t)o->n, s));
    if (o->how & 2) {
        RC(a->StreamSynchronize(s));
        vmm_move(&m);
        RC(a->MemcpyDtoDAsync(dptr(t, o->dst_r, o->soff), m.p + (CUdeviceptr)o->doff, (size_t)o->n, s));
    }
    RC(a->StreamSynchronize(s));
    vmm_put(&m);
}

/* Pinned memory written on stream s, a boundary that must issue s's held work
** first (a context synchronize, an event synchronize, a callback that reads
** it, or a synchronous memset of the legacy stream, which waits for blocking
** streams and everything before it on the legacy stream), then the host reads
** it.  A non-blocking stream's memset case synchronizes s instead. */
static void run_readback(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    unsigned char *p = t->pin[o->dst_r];
    int legacy_waits = o->s == stream_legacy(t) || blocking(t, o->s);

    RC(a->MemcpyDtoHAsync(p + o->doff, dptr(t, o->src_r, o->soff), (size_t)o->n, s));
    switch (o->how) {
    case 0:
        RC(cuCtxSynchronize());
        break;
    case 1:
        RC(a->EventRecord(t->events[o->ev], s));
        RC(cuEventSynchronize(t->events[o->ev]));
        break;
    case 2:
        RC(a->StreamAddCallback(s, callback_fn, host_arg(t, o), 0));
        RC(a->StreamSynchronize(s));
        break;
    default:
        if (legacy_waits)   /* on memory of its own, which no stream's work touches */
            RC(cuMemsetD8_v2(t->scratch_dev, (unsigned char)t->it, 64));
        else
            RC(a->StreamSynchronize(s));
        break;
    }
    fprintf(t->out, "t%d i%d p%d readback %d %016llx\n", t->tid, t->it, t->pos, o->how,
            (unsigned long long)mix_bytes(0, p, BUF_BYTES));
}

/* --- The small ops ----------------------------------------------------------- */

/* An allocation of 1 TiB, which no device holds: CUDA_ERROR_OUT_OF_MEMORY,
** with graphshim too (it gives back what it can and tries again). */
static void run_huge(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    const size_t huge = (size_t)1 << 40;
    CUdeviceptr p = 0;
    void *h = NULL;
    CUresult rc;

    if (o->how == 0)
        rc = RC(cuMemAlloc_v2(&p, huge));
    else if (o->how == 1)
        rc = RC(a->MemAllocAsync(&p, huge, s));
    else if (o->how == 2)
        rc = RC(cuMemAllocHost_v2(&h, huge));
    else
        rc = RC(cuMemAllocManaged(&p, huge, CU_MEM_ATTACH_GLOBAL));
    if (rc == CUDA_SUCCESS)
        RC(h ? cuMemFreeHost(h) : o->how == 1 ? a->MemFreeAsync(p, s) : cuMemFree_v2(p));
}

/* A copy from host to host by cuMemcpyAsync (how bit 0: from pageable memory,
** staged at the call; bit 1: into pageable memory, complete at the call). */
static void run_h2h(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    unsigned char *src = o->how & 1 ? t->page[0] : t->pin[o->src_r];
    unsigned char *dst = o->how & 2 ? t->page[1] : t->pin[o->dst_r];

    if (o->how & 1)
        fill_page(t, 0, (uint64_t)t->it * 43 + (uint64_t)t->pos + (uint64_t)t->rep * 1000003);
    if (o->how & 2)
        memset(t->page[1], 0, BUF_BYTES);
    RC(a->MemcpyAsync((CUdeviceptr)(uintptr_t)(dst + o->doff), (CUdeviceptr)(uintptr_t)(src + o->soff),
                      (size_t)o->n, s));
    if (o->how & 1)
        memset(t->page[0], 0xEE, BUF_BYTES);   /* allowed: the copy has its bytes */
    if (o->how & 2)
        fprintf(t->out, "t%d i%d p%d h2h %016llx\n", t->tid, t->it, t->pos,
                (unsigned long long)mix_bytes(0, t->page[1], BUF_BYTES));
}

/* A capture's end on s, which began none (CUDA_ERROR_ILLEGAL_STATE), or (how
** 1) the default stream s destroyed, which has no handle to destroy: as 0 for
** the legacy stream (the fake driver's handle table marks a freed slot with
** CU_STREAM_LEGACY's value, and crashes looking that handle up). */
static void run_caperr(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    CUgraph g = NULL;

    if (o->how)
        RC(cuStreamDestroy_v2(s == CU_STREAM_LEGACY ? NULL : s));
    else if (RC(a->StreamEndCapture(s, &g)) == CUDA_SUCCESS && g)
        RC(cuGraphDestroy(g));
}

/* graphshim's own pause (include/graphshim.h; looked up, as a program that
** runs without graphshim too does) around a memset on s: what graphshim holds
** goes out first, the memset runs eagerly.  how bit 0: paused twice (calls
** nest); bit 1, in a program of one thread: a resume with nothing paused
** first, which undoes nothing. */
static void run_pause(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    void (*pause)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_pause");
    void (*resume)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gs_resume");
    int times = 1 + (o->how & 1);

    if (resume && (o->how & 2) && g_nthreads == 1)
        resume();
    for (int i = 0; pause && i < times; i++)
        pause();
    RC(a->MemsetD32Async(dptr(t, o->dst_r, o->doff), o->value + (unsigned)t->it, (size_t)o->n, s));
    for (int i = 0; resume && i < times; i++)
        resume();
}

/* --- A second context ------------------------------------------------------ */

/* The thread's second context, and a buffer of its own there. */
void ctx2_make(struct thr *t)
{
    if (RC(cuCtxCreate_v2(&t->ctx2, 0, 0)) != CUDA_SUCCESS) {
        t->ctx2 = NULL;
    } else {
        RC(cuMemAlloc_v2(&t->ctx2_buf, BUF_BYTES));
        RC(cuMemsetD8_v2(t->ctx2_buf, 0x5a, BUF_BYTES));
    }
    RC(cuCtxSetCurrent(g_ctx));
}

/* Work on the second context's legacy stream, or (o->pt) its per-thread
** stream (stream 0 of the plain or the _ptsz entry points while it is current),
** then the first context current again: the default stream a call of stream 0
** means changes with the current context. */
static void run_ctx2(struct thr *t, const struct op *o)
{
    CUcontext c;
    if (RC(o->how ? cuCtxPushCurrent_v2(t->ctx2) : cuCtxSetCurrent(t->ctx2)) != CUDA_SUCCESS)
        return;
    for (int i = 0; i < o->n; i++) {
        CUdeviceptr p = t->ctx2_buf + 64 * (CUdeviceptr)i;
        unsigned v = o->value + (unsigned)(t->it * 7 + i);
        RC(o->pt ? cuMemsetD32Async_ptsz(p, v, 16, NULL) : cuMemsetD32Async(p, v, 16, NULL));
    }
    RC(o->pt ? cuMemcpyDtoDAsync_v2_ptsz(t->ctx2_buf + 2048, t->ctx2_buf, 256, NULL)
             : cuMemcpyDtoDAsync_v2(t->ctx2_buf + 2048, t->ctx2_buf, 256, NULL));
    RC(o->how ? cuCtxPopCurrent_v2(&c) : cuCtxSetCurrent(g_ctx));
}

/* The second context's buffer read back there, and the context destroyed. */
void ctx2_final(struct thr *t)
{
    unsigned char tmp[BUF_BYTES];
    RC(cuCtxSetCurrent(t->ctx2));
    RC(cuCtxSynchronize());
    RC(cuMemcpyDtoH_v2(tmp, t->ctx2_buf, BUF_BYTES));
    fprintf(t->out, "t%d final second context %016llx\n", t->tid, (unsigned long long)mix_bytes(0, tmp, BUF_BYTES));
    RC(cuMemFree_v2(t->ctx2_buf));
    RC(cuCtxSetCurrent(g_ctx));
    RC(cuCtxDestroy_v2(t->ctx2));
}

void run_xop(struct thr *t, const struct op *o, const struct api *a, CUstream s)
{
    CUcontext c;

    switch (o->kind) {
    case OP_SYNCMEM:
        run_syncmem(t, o, a);
        break;
    case OP_GENCOPY:
        run_gencopy(t, o, a, s);
        break;
    case OP_CALLBACK:
        RC(a->StreamAddCallback(s, callback_fn, host_arg(t, o), 0));
        break;
    case OP_ASYNCALLOC:
        run_asyncalloc(t, o, a, s);
        break;
    case OP_OWNGRAPH:
        run_owngraph(t, o, a, s);
        break;
    case OP_ATTR:
        run_attr(t, o);
        break;
    case OP_RENEW:
        run_renew(t, o, a, s);
        break;
    case OP_CTXREF:
        if (o->how == 2) {   /* the current context pushed again and popped */
            RC(cuCtxPushCurrent_v2(g_ctx));
            RC(cuCtxPopCurrent_v2(&c));
            break;
        }
        RC(cuDevicePrimaryCtxRetain(&c, 0));
        RC(o->how ? cuDevicePrimaryCtxRelease_v2(0) : cuDevicePrimaryCtxRelease(0));
        break;
    case OP_CTX2:
        run_ctx2(t, o);
        break;
    case OP_READBACK:
        run_readback(t, o, a, s);
        break;
    case OP_WRITEVALUE:
        RC(a->StreamWriteValue32(s, dptr(t, o->dst_r, o->doff), o->value + (unsigned)t->it, 0));
        break;
    case OP_VMM:
        run_vmm(t, o, a, s);
        break;
    case OP_HUGE:
        run_huge(t, o, a, s);
        break;
    case OP_H2H:
        run_h2h(t, o, a, s);
        break;
    case OP_CAPERR:
        run_caperr(t, o, a, s);
        break;
    case OP_PAUSE:
        run_pause(t, o, a, s);
        break;
    default:   /* OP_ALLOCKIND */
        run_allockind(t, o);
        break;
    }
}
