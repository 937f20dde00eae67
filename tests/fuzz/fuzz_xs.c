/*
** fuzz_xs.c: the fuzz program's programs across streams (fuzzprog xs SEED):
** work handed between 2 to 4 streams by events inside repeating steps, for
** groups across streams (GRAPHSHIM_XSTREAM=1, policy/stream/xs.h).
**
** One thread, streams 0 (the origin) to S-1 (non-blocking, now and then
** blocking), 6 buffers and 8 event slots (untimed, now and then timed).  A
** buffer is owned by one stream at a time; a kernel runs on a stream that owns
** what it reads and writes, and a buffer changes owner by an event recorded on
** its old owner and waited on by the new one (a fork where the origin hands
** over, a join where it takes back).  The step, generated once: kernels on any
** stream, the handoffs they need, and now and then (each on every k-th step
** only) a stream synchronized (the host then reads a buffer it owns), a stream
** or an event queried (the answer not printed: it depends on the schedule), an
** event synchronized or polled until ready (the host then reads a buffer its
** record follows, unwritten since), an event slot destroyed and created
** again, a handoff by an event made for it and destroyed after its wait (as
** PyTorch's Stream.wait_stream); at its end every buffer goes back to the
** owner it had at the start, so steps repeat.  The step may also hold what meets a group from outside
** its narrow case: an event recorded again on another stream (no wait), a
** host function, a stream destroyed and created again (its work handed on by
** an event), a kernel or a handoff issued from another thread, a
** kernel on the legacy or the per-thread stream, the program's own capture
** around the next op, the context pushed and popped, a module loaded and
** unloaded, a fan-out (up to 10 events recorded on one stream, every other
** stream waiting on one), records with flags 0 (cuEventRecordWithFlags) and
** interprocess events.  Now and then a relay (a blocking stream that runs no
** op of its own) hands the legacy stream's work on: its record orders after
** that work by the implicit synchronization alone.  With up to 6 streams and 12 event slots, a group may find no
** room for a member or an event.  Kernels take a fixed value
** or the step's number.  The host synchronizes every M steps (each stream in
** turn, or the context), and at the end prints a digest of every buffer and of
** what it read.  Race-free by the driver's rules (no order but the events), so
** any legal order gives the same output; the runner runs it with the fake's
** dependency order (FAKECUDA_ORDER=deps) without and with graphshim.
*/
#include "fuzzprog.h"

#include <pthread.h>

#define XS_W 8
#define XS_BUFS 6
#define XS_EVENTS 12
#define XS_STREAMS 6 /* created; then the legacy and the per-thread stream, and the relay */
#define XS_MAX_OPS 160
/* The flag of the events the program makes after its set-up, by which the
** call log tells them from graphshim's (fuzz_xinject.c): a destroy of a
** group's event waits for the group's end, and is not in the log where the
** program made it. */
#define XS_MARK CU_EVENT_BLOCKING_SYNC

enum {
    X_KERNEL, X_HANDOFF, X_SSYNC, X_SQUERY, X_EQUERY, X_ESYNC, X_EDESTROY,
    X_RECORD, X_HOSTFN, X_SDESTROY, X_CAPTURE, X_CTX, X_MODULE, X_FANOUT,
};

struct xop {
    int kind, s, s2, out, in, ev, every, by_step, thread;
    uint64_t v;
};

struct xs {
    uint64_t rng, frng; /* frng: handoffs by events made for them (a draw of its own: the
                        ** programs of the other draws stay as they were) */
    uint64_t rrng;      /* the relay's draws, of their own too */
    int ns, steps, every, ctxsync, specials, wide, last_ev;
    int pair; /* stream 1 blocking, the origin not (a group must not take 1's ops) */
    int implicit; /* the next handoff that may go by the legacy stream's implicit synchronization does */
    int relay;    /* stream ns + 2: blocking, no op of its own, records that hand on the legacy stream's work */
    unsigned sflags[XS_STREAMS], evflags[XS_EVENTS];
    CUstream s[XS_STREAMS + 3], cs; /* cs: the program's own capture's */
    CUevent ev[XS_EVENTS];
    CUdeviceptr buf[XS_BUFS], cbuf;
    CUcontext ctx, ctx2;
    CUdeviceptr c2buf;
    CUfunction k;
    int owner[XS_BUFS], init_owner[XS_BUFS];
    /* generating: the buffers each event slot's last record in the step
    ** follows, unwritten since (the host may read them once it completed) */
    uint32_t evmask[XS_EVENTS];
    struct xop body[XS_MAX_OPS];
    int n;
    uint64_t host;
    long errors;
};

/* out = mix(out, in, v): every word depends on both and on the order. */
static void xs_kernel(void **params, const struct fakecuda_dims *d)
{
    uint64_t *x = (uint64_t *)(uintptr_t)FAKECUDA_ARG(CUdeviceptr, 0);
    const uint64_t *y = (const uint64_t *)(uintptr_t)FAKECUDA_ARG(CUdeviceptr, 1);
    uint64_t v = FAKECUDA_ARG(uint64_t, 2), t[XS_W];
    (void)d;
    for (int i = 0; i < XS_W; i++)
        t[i] = x[i] * 0x100000001b3ull + y[(i + 1) % XS_W] + v * 0x9e3779b97f4a7c15ull + (uint64_t)i;
    for (int i = 0; i < XS_W; i++)
        x[i] = t[i] ^ (t[(i + 3) % XS_W] >> 7);
}

static struct xop *xs_add(struct xs *X, int kind, int s)
{
    if (X->n == XS_MAX_OPS)
        return NULL;
    struct xop *o = &X->body[X->n++];
    *o = (struct xop){.kind = kind, .s = s, .every = 1};
    return o;
}

/* Is stream i (an index of X->s) blocking: a created one without
** CU_STREAM_NON_BLOCKING, or the per-thread stream? */
static int xs_blocking(const struct xs *X, int i)
{
    return i == X->ns + 1 || (i < X->ns && !(X->sflags[i] & CU_STREAM_NON_BLOCKING));
}

/* Makes stream s the owner of buffer b: a handoff by an event slot, or now and
** then none where the legacy stream's implicit synchronization orders them
** (one of the two the legacy stream, the other a blocking stream). */
static int xs_need(struct xs *X, int s, int b)
{
    int o_ = X->owner[b];

    if (o_ == s)
        return 0;
    if (((s == X->ns && xs_blocking(X, o_)) || (o_ == X->ns && xs_blocking(X, s))) &&
        (X->implicit || chance(&X->rng, 50))) {
        X->implicit = 0;
        X->owner[b] = s;
        return 0;
    }
    if (o_ == X->ns && X->relay && chance(&X->rrng, 50)) {
        /* through the relay: its record orders after the legacy stream's
        ** earlier work by the implicit synchronization alone, and s waits for it */
        struct xop *r = xs_add(X, X_HANDOFF, X->ns + 2);
        if (!r)
            return -1;
        r->s2 = s;
        r->ev = (int)rnd(&X->rrng, XS_EVENTS);
        X->evmask[r->ev] = 0;
        X->owner[b] = s;
        return 0;
    }
    struct xop *o = xs_add(X, X_HANDOFF, X->owner[b]);
    if (!o)
        return -1;
    o->s2 = s;
    /* the handoff from another thread: neither side the per-thread stream, which is another there */
    o->thread = X->specials && s != X->ns + 1 && chance(&X->rng, 4) && o->s != X->ns + 1;
    o->ev = (int)rnd(&X->rng, XS_EVENTS);
    X->evmask[o->ev] = 0;
    for (int i = 0; i < XS_BUFS; i++)
        if (X->owner[i] == o->s)
            X->evmask[o->ev] |= 1u << i;
    /* an event made for the handoff, destroyed after its wait (PyTorch's
    ** Stream.wait_stream); its slot then holds one never recorded */
    if ((o->by_step = chance(&X->frng, 20)) != 0)
        X->evmask[o->ev] = 0;
    X->owner[b] = s;
    X->last_ev = o->ev;
    return 0;
}

/* A stream: the origin half of the time; now and then (X->specials) the
** legacy or the per-thread stream. */
static int xs_stream(struct xs *X)
{
    if (X->specials && chance(&X->rng, 12))
        return X->ns + (int)rnd(&X->rng, 2);
    return chance(&X->rng, 50) ? 0 : 1 + (int)rnd(&X->rng, (unsigned)X->ns - 1);
}

/* The buffers stream s owns, as a mask. */
static uint32_t xs_owned(const struct xs *X, int s)
{
    uint32_t m = 0;
    for (int i = 0; i < XS_BUFS; i++)
        if (X->owner[i] == s)
            m |= 1u << i;
    return m;
}

/* A kernel on s writing buffer b, reading in (-1: one drawn), with the
** handoffs they need. */
static void xs_gen_kernel(struct xs *X, int s, int b, int in)
{
    struct xop *o;

    if (in < 0)
        in = chance(&X->rng, 30) ? b : (int)rnd(&X->rng, XS_BUFS);
    if (xs_need(X, s, b) || xs_need(X, s, in) || !(o = xs_add(X, X_KERNEL, s)))
        return;
    o->out = b;
    o->in = in;
    for (int e = 0; e < XS_EVENTS; e++)
        X->evmask[e] &= ~(1u << b);
    o->v = rnd(&X->rng, 1000);
    o->by_step = chance(&X->rng, 20);
    /* from another thread (made and joined around the call): not the
    ** per-thread stream, which is another stream there */
    o->thread = X->specials && s != X->ns + 1 && chance(&X->rng, 4);
}

/* The kind of a step's op other than a kernel, by r (75..99) and a second
** draw for the kinds that meet a group from outside its narrow case. */
static int xs_kind(struct xs *X, unsigned r)
{
    static const int outside[] = {X_RECORD, X_RECORD, X_HOSTFN, X_HOSTFN, X_SDESTROY,
                                  X_CAPTURE, X_CTX,    X_MODULE, X_FANOUT, X_FANOUT};
    if (X->specials && chance(&X->rng, 35))
        return outside[rnd(&X->rng, 10)];
    return r < 82 ? X_SSYNC : r < 86 ? X_SQUERY : r < 90 ? X_EQUERY : r < 96 ? X_ESYNC : X_EDESTROY;
}

/* One op of the step, with the handoffs it needs. */
static void xs_gen_op(struct xs *X)
{
    static const int everies[] = {1, 2, 3, 5};
    unsigned r = rnd(&X->rng, 100);
    int s = xs_stream(X), b = (int)rnd(&X->rng, XS_BUFS), kind;
    struct xop *o;

    if (r < 75)
        return xs_gen_kernel(X, s, b, -1);
    kind = xs_kind(X, r);
    if ((kind == X_SDESTROY && s >= X->ns) || (kind == X_FANOUT && X->wide))
        s = 0; /* only a created stream is destroyed; a wide program's fan-outs leave its origin */
    if (!(o = xs_add(X, kind, s)))
        return;
    o->every = kind == X_CAPTURE || kind == X_SDESTROY ? 1 : everies[rnd(&X->rng, 4)];
    o->ev = (int)rnd(&X->rng, XS_EVENTS);
    o->out = -1; /* the host reads a buffer s owns (X_SSYNC), or one the event follows (X_ESYNC) */
    o->by_step = chance(&X->rng, 50); /* X_ESYNC: a query spin, not a synchronize; X_CAPTURE: relaxed */
    for (int i = 0; i < XS_BUFS; i++) {
        int c = (b + i) % XS_BUFS;
        if (kind == X_ESYNC ? (X->evmask[o->ev] >> c) & 1 : X->owner[c] == s)
            o->out = c;
    }
    if (kind == X_EDESTROY)
        X->evmask[o->ev] = 0;
    if (kind == X_RECORD || kind == X_SDESTROY) /* the event now follows s's work */
        X->evmask[o->ev] = xs_owned(X, s);
    if (kind == X_FANOUT) { /* o->in events recorded on s, every other created stream waiting on one */
        o->in = X->wide ? 9 + (int)rnd(&X->rng, 2) : 1 + (int)rnd(&X->rng, 10);
        for (int j = 0; j < o->in; j++)
            X->evmask[(o->ev + j) % XS_EVENTS] = xs_owned(X, s);
    }
    /* a record from another thread: the thread that issues the origin's ops
    ** no longer makes it */
    o->thread = kind == X_RECORD && s != X->ns + 1 && chance(&X->rng, 20);
    if (kind == X_HOSTFN && chance(&X->rng, 50) && X->evmask[X->last_ev]) {
        /* the host then waits for the last handoff's event (a group's end
        ** that waits for nothing, then its event) and reads what it follows */
        struct xop *w = xs_add(X, X_ESYNC, s);
        if (w) {
            w->every = o->every;
            w->ev = X->last_ev;
            w->by_step = chance(&X->rng, 50);
            for (w->out = 0; !((X->evmask[w->ev] >> w->out) & 1); w->out++)
                ;
        }
    }
}

static void xs_gen(struct xs *X)
{
    int len = 3 + (int)rnd(&X->rng, 22);

    for (int b = 0; b < XS_BUFS; b++)
        X->owner[b] = X->init_owner[b] = chance(&X->rng, 75) ? 0 : (int)rnd(&X->rng, (unsigned)X->ns);
    for (int i = 0; i < len; i++) {
        xs_gen_op(X);
        /* blocking stream 1 writes a buffer (handed from the origin where the
        ** origin owns it: a fork) that the legacy stream then takes by the
        ** implicit synchronization alone (xs_need), and the host reads it
        ** once it synchronized the legacy stream */
        if (X->pair && i == len / 2 && chance(&X->frng, 60)) {
            int b = (int)rnd(&X->frng, XS_BUFS);
            struct xop *w;
            xs_gen_kernel(X, 1, b, b);
            X->implicit = 1;
            xs_gen_kernel(X, X->ns, b, b);
            X->implicit = 0;
            if (X->owner[b] == X->ns && (w = xs_add(X, X_SSYNC, X->ns)) != NULL)
                w->out = b; /* the host reads it: the legacy stream's work is out */
        }
    }
    for (int b = 0; b < XS_BUFS; b++) /* back to the owners of the step's start */
        if (xs_need(X, X->init_owner[b], b))
            X->n = XS_MAX_OPS + 1; /* no room: xs_main makes a shorter step */
}

static void xs_note(struct xs *X, CUresult rc, int ok2)
{
    if (rc != CUDA_SUCCESS && (int)rc != ok2) {
        X->errors++;
        X->host = mix(X->host, 0xE000u + (unsigned)rc);
    }
}

static void xs_hostfn(void *p) { (void)p; }

/* The host reads buffer b (the fake's device memory is the host's). */
static void xs_read(struct xs *X, int b)
{
    if (b >= 0)
        X->host = mix(X->host, *(const uint64_t *)(uintptr_t)X->buf[b]);
}

/* The program's own graph, around the next op: a kernel on its own buffer
** captured on its own stream (relaxed or thread-local), launched, destroyed. */
static void xs_capture(struct xs *X, const struct xop *o, long n, int end)
{
    CUgraph g = NULL;
    CUgraphExec x = NULL;
    uint64_t v = o->v + (uint64_t)n;

    if (!end) {
        xs_note(X, cuStreamBeginCapture_v2(X->cs, o->by_step ? CU_STREAM_CAPTURE_MODE_RELAXED
                                                            : CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), 0);
        xs_note(X, cuLaunchKernel(X->k, 1, 1, 1, 32, 1, 1, 0, X->cs, (void *[]){&X->cbuf, &X->cbuf, &v}, NULL), 0);
        return;
    }
    xs_note(X, cuStreamEndCapture(X->cs, &g), 0);
    if (!g)
        return;
    xs_note(X, cuGraphInstantiateWithFlags(&x, g, 0), 0);
    if (x) {
        xs_note(X, cuGraphLaunch(x, X->cs), 0);
        xs_note(X, cuGraphExecDestroy(x), 0);
    }
    xs_note(X, cuGraphDestroy(g), 0);
}

/* The ops that meet a group from outside its narrow case. */
static void xs_run_outside(struct xs *X, const struct xop *o, CUstream s)
{
    CUcontext c;
    CUmodule m;

    switch (o->kind) {
    case X_RECORD:
        xs_note(X, o->by_step ? cuEventRecordWithFlags(X->ev[o->ev], s, 0) : cuEventRecord(X->ev[o->ev], s), 0);
        break;
    case X_HOSTFN: xs_note(X, cuLaunchHostFunc(s, xs_hostfn, NULL), 0); break;
    case X_SDESTROY: /* its work handed on to its next self by the event */
        xs_note(X, cuEventRecord(X->ev[o->ev], s), 0);
        xs_note(X, cuStreamDestroy_v2(s), 0);
        xs_note(X, cuStreamCreate(&X->s[o->s], X->sflags[o->s]), 0);
        xs_note(X, cuStreamWaitEvent(X->s[o->s], X->ev[o->ev], 0), 0);
        break;
    case X_CTX: /* the primary context pushed again, or the second one made current and used */
        if (o->by_step) {
            xs_note(X, cuCtxPushCurrent_v2(X->ctx), 0);
        } else {
            xs_note(X, cuCtxPushCurrent_v2(X->ctx2), 0);
            xs_note(X, cuMemsetD32Async(X->c2buf, (unsigned)o->v, 4, NULL), 0);
        }
        xs_note(X, cuCtxPopCurrent_v2(&c), 0);
        break;
    case X_MODULE:
        xs_note(X, cuModuleLoadData(&m, "xs side"), 0);
        xs_note(X, cuModuleUnload(m), 0);
        break;
    case X_FANOUT: /* waits order, and hand nothing over: a group's members, or no room for them */
        for (int j = 0; j < o->in; j++)
            xs_note(X, cuEventRecord(X->ev[(o->ev + j) % XS_EVENTS], s), 0);
        for (int t = 0; t < X->ns; t++)
            if (X->s[t] != s)
                xs_note(X, cuStreamWaitEvent(X->s[t], X->ev[(o->ev + t % o->in) % XS_EVENTS], 0), 0);
        break;
    }
}

/* Op o of step n. */
static void xs_run_op(struct xs *X, const struct xop *o, long n)
{
    CUstream s = X->s[o->s];

    switch (o->kind) {
    case X_KERNEL: {
        CUdeviceptr out = X->buf[o->out], in = X->buf[o->in];
        uint64_t v = o->by_step ? o->v + (uint64_t)n : o->v;
        xs_note(X, cuLaunchKernel(X->k, 1, 1, 1, 32, 1, 1, 0, s, (void *[]){&out, &in, &v}, NULL), 0);
        break;
    }
    case X_HANDOFF:
        if (o->by_step) {
            xs_note(X, cuEventDestroy_v2(X->ev[o->ev]), 0);
            xs_note(X, cuEventCreate(&X->ev[o->ev], CU_EVENT_DISABLE_TIMING | XS_MARK), 0);
        }
        xs_note(X, cuEventRecord(X->ev[o->ev], s), 0);
        xs_note(X, cuStreamWaitEvent(X->s[o->s2], X->ev[o->ev], 0), 0);
        if (o->by_step) {
            xs_note(X, cuEventDestroy_v2(X->ev[o->ev]), 0);
            xs_note(X, cuEventCreate(&X->ev[o->ev], X->evflags[o->ev] | XS_MARK), 0);
        }
        break;
    case X_SSYNC:
        xs_note(X, cuStreamSynchronize(s), 0);
        xs_read(X, o->out);
        break;
    case X_SQUERY: xs_note(X, cuStreamQuery(s), CUDA_ERROR_NOT_READY); break;
    case X_EQUERY: xs_note(X, cuEventQuery(X->ev[o->ev]), CUDA_ERROR_NOT_READY); break;
    case X_ESYNC:
        if (o->by_step) {
            CUresult q;
            while ((q = cuEventQuery(X->ev[o->ev])) == CUDA_ERROR_NOT_READY)
                ;
            xs_note(X, q, 0);
        } else {
            xs_note(X, cuEventSynchronize(X->ev[o->ev]), 0);
        }
        xs_read(X, o->out);
        break;
    case X_EDESTROY:
        xs_note(X, cuEventDestroy_v2(X->ev[o->ev]), 0);
        xs_note(X, cuEventCreate(&X->ev[o->ev], X->evflags[o->ev] | XS_MARK), 0);
        break;
    default: xs_run_outside(X, o, s); break;
    }
}

/* An op run on a thread of its own, made and joined around it. */
struct xs_call {
    struct xs *X;
    const struct xop *o;
    long n;
};

static void *xs_thread(void *p)
{
    struct xs_call *c = p;
    xs_note(c->X, cuCtxSetCurrent(c->X->ctx), 0);
    xs_run_op(c->X, c->o, c->n);
    return NULL;
}

/* Op i of the step n (where it runs this step); returns the ops it took: a
** capture takes the op after it too where that may run inside it. */
static int xs_run(struct xs *X, int i, long n)
{
    const struct xop *o = &X->body[i], *next = i + 1 < X->n ? &X->body[i + 1] : NULL;

    if (n % o->every)
        return 1;
    if (o->thread) {
        struct xs_call c = {X, o, n};
        pthread_t t;
        if (pthread_create(&t, NULL, xs_thread, &c) == 0)
            pthread_join(t, NULL);
        return 1;
    }
    if (o->kind != X_CAPTURE) {
        xs_run_op(X, o, n);
        return 1;
    }
    xs_capture(X, o, n, 0);
    int inside = next && !next->thread && n % next->every == 0 &&
                 (next->kind == X_KERNEL || next->kind == X_HANDOFF || next->kind == X_RECORD || next->kind == X_HOSTFN);
    if (inside)
        xs_run_op(X, next, n);
    xs_capture(X, o, n, 1);
    return 1 + inside;
}

static int xs_setup(struct xs *X)
{
    CUdevice dev;
    CUmodule mod;
    uint64_t init[XS_W];

    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&X->ctx, dev) || cuCtxSetCurrent(X->ctx) ||
        cuModuleLoadData(&mod, "xs") ||
        fakecuda_define_kernel("fuzz_xs_mix", xs_kernel,
                               (const size_t[]){sizeof(CUdeviceptr), sizeof(CUdeviceptr), sizeof(uint64_t), 0}) ||
        cuModuleGetFunction(&X->k, mod, "fuzz_xs_mix"))
        return 1;
    for (int i = 0; i < X->ns; i++)
        if (cuStreamCreate(&X->s[i], X->sflags[i]))
            return 1;
    X->s[X->ns] = CU_STREAM_LEGACY;
    X->s[X->ns + 1] = CU_STREAM_PER_THREAD;
    if (X->relay && cuStreamCreate(&X->s[X->ns + 2], 0))
        return 1;
    for (int i = 0; i < XS_EVENTS; i++)
        if (cuEventCreate(&X->ev[i], X->evflags[i]))
            return 1;
    for (int b = 0; b < XS_BUFS + 1; b++) { /* the last: the program's own graph's */
        for (int w = 0; w < XS_W; w++)
            init[w] = ((uint64_t)b * XS_W + (uint64_t)w + 1) * 0x9e3779b97f4a7c15ull;
        CUdeviceptr *p = b < XS_BUFS ? &X->buf[b] : &X->cbuf;
        if (cuMemAlloc_v2(p, sizeof init) || cuMemcpyHtoD_v2(*p, init, sizeof init))
            return 1;
    }
    if (X->specials && (cuStreamCreate(&X->cs, CU_STREAM_NON_BLOCKING) || cuCtxCreate_v2(&X->ctx2, 0, dev) ||
                        cuMemAlloc_v2(&X->c2buf, 16) || cuMemsetD32_v2(X->c2buf, 0, 4) || cuCtxSetCurrent(X->ctx)))
        return 1;
    return 0;
}

/* The host's synchronize every M steps: each stream in turn, or the context. */
static void xs_sync(struct xs *X)
{
    if (X->ctxsync) {
        xs_note(X, cuCtxSynchronize(), 0);
        return;
    }
    for (int i = 0; i < X->ns; i++)
        xs_note(X, cuStreamSynchronize(X->s[i]), 0);
}

/* The digest of every buffer, the second context's too, once the work is done. */
static uint64_t xs_digest(struct xs *X)
{
    uint64_t dig = 0, word[XS_W];
    CUcontext c;

    xs_note(X, cuCtxSynchronize(), 0);
    for (int b = 0; b < XS_BUFS + 1; b++) {
        xs_note(X, cuMemcpyDtoH_v2(word, b < XS_BUFS ? X->buf[b] : X->cbuf, sizeof word), 0);
        dig = mix_bytes(dig, word, sizeof word);
    }
    if (X->specials) {
        xs_note(X, cuCtxPushCurrent_v2(X->ctx2), 0);
        xs_note(X, cuMemcpyDtoH_v2(word, X->c2buf, 16), 0);
        dig = mix_bytes(dig, word, 16);
        xs_note(X, cuCtxPopCurrent_v2(&c), 0);
    }
    return dig;
}

int fuzz_xs_main(int argc, char **argv)
{
    static struct xs X;
    static const int everies[] = {1, 5, 20, 0};

    X.rng = strtoull(argc > 2 ? argv[2] : "1", NULL, 0) * 0x9E3779B97F4A7C15ull + 41;
    X.frng = X.rng ^ 0xD1B54A32D192ED03ull;
    X.rrng = X.rng ^ 0x8CB92BA72F3D8DD7ull;
    X.specials = chance(&X.rng, 50);
    /* wide: 6 non-blocking streams, untimed events, fan-outs of 9 or 10
    ** events from the origin: a group finds no room for its fifth member or
    ** its ninth event */
    X.wide = X.specials && chance(&X.rng, 25);
    X.ns = X.wide ? 6 : 2 + (int)rnd(&X.rng, X.specials ? 5 : 3);
    for (int i = 0; i < X.ns; i++)
        X.sflags[i] = X.wide || chance(&X.rng, 75) ? CU_STREAM_NON_BLOCKING : 0;
    if (!X.wide && chance(&X.rng, 30)) { /* a blocking stream beside a non-blocking origin */
        X.sflags[0] = CU_STREAM_NON_BLOCKING;
        X.sflags[1] = 0;
        X.pair = 1;
    }
    for (int i = 0; i < XS_EVENTS; i++)
        X.evflags[i] = X.wide || chance(&X.rng, 85) ? CU_EVENT_DISABLE_TIMING : 0;
    if (X.specials && !X.wide && chance(&X.rng, 20)) /* one interprocess event slot: a record no group takes */
        X.evflags[rnd(&X.rng, XS_EVENTS)] = CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    X.steps = 20 + (int)rnd(&X.rng, 100);
    X.every = everies[rnd(&X.rng, 4)];
    X.ctxsync = chance(&X.rng, 30);
    X.relay = (X.specials || X.pair) && chance(&X.rrng, 30);
    do {
        X.n = 0;
        xs_gen(&X);
    } while (X.n > XS_MAX_OPS);
    if (xs_setup(&X))
        return fprintf(stderr, "fuzzprog xs: driver setup failed\n"), 2;
    if (getenv("FUZZ_XS_LIST")) { /* the step's ops on stderr, for a difference's reader */
        for (int i = 0; i < X.ns; i++)
            fprintf(stderr, "stream %d %s\n", i, X.sflags[i] & CU_STREAM_NON_BLOCKING ? "non-blocking" : "blocking");
        for (int i = 0; i < X.n; i++)
            fprintf(stderr, "op %d kind %d s %d s2 %d out %d in %d ev %d every %d thread %d\n", i, X.body[i].kind,
                    X.body[i].s, X.body[i].s2, X.body[i].out, X.body[i].in, X.body[i].ev, X.body[i].every,
                    X.body[i].thread);
    }
    printf("xs seed %s streams %d ops %d steps %d synchronize every %d (%s)%s\n", argc > 2 ? argv[2] : "1", X.ns,
           X.n, X.steps, X.every, X.ctxsync ? "context" : "streams", X.wide ? " outside ops, wide" : X.specials ? " outside ops" : "");
    for (long n = 0; n < X.steps; n++) {
        for (int i = 0; i < X.n;)
            i += xs_run(&X, i, n);
        if (X.every && n % X.every == X.every - 1)
            xs_sync(&X);
    }
    uint64_t dig = xs_digest(&X);
    printf("digest %016llx host %016llx errors %ld\n", (unsigned long long)dig, (unsigned long long)X.host, X.errors);
    return 0;
}
