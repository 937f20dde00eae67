/*
** fuzz_gen.c: a thread's loop body, generated from its seed (tests/fuzz/README.md).
*/
#include "fuzzprog.h"

/* --- Generating the body -------------------------------------------------- */



struct op *op_add(struct thr *t, enum op_kind kind, int s)
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
void need(struct thr *t, struct gen *g, int s, int r)
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
int pick(struct thr *t, const struct gen *g, int s, int lo, int hi)
{
    int mine[NRES], n = 0;
    for (int r = lo; r < hi; r++)
        if (g->owner[r] == s)
            mine[n++] = r;
    if (n && chance(&t->gen, 85))
        return mine[rnd(&t->gen, (unsigned)n)];
    return lo + (int)rnd(&t->gen, (unsigned)(hi - lo));
}

uint32_t owned_by(const struct gen *g, int s)
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
    for (int i = 0; t->xops && i < o->nattr; i++)   /* attributes graphshim keys, in their values */
        if (chance(r, 25))
            o->attr_kind[i] = 5 + (int)rnd(r, 5);
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

/* The count and offset of a memset of o->width bytes an element into o->dst_r
** (a device buffer, or a kernel slot's 8-byte global). */
void memset_extent(struct thr *t, struct op *o)
{
    int units = (o->dst_r >= NDEV ? 8 : BUF_BYTES) / o->width;
    o->n = 1 + (int)rnd(&t->gen, (unsigned)units);
    o->doff = o->width * (int)rnd(&t->gen, (unsigned)(units - o->n + 1));
}

/* The size and offsets of a copy. */
void copy_extent(struct thr *t, struct op *o)
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
    for (int i = 0; i <= stream_pt(t); i++)
        if (blocking(t, i))
            c[n++] = i;
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

/* A copy of gen_op's draw c (45 to 62): host to device from pinned or pageable
** memory, device to pinned or pageable host memory, device to device. */
static struct op *gen_copy(struct thr *t, struct gen *g, int s, unsigned c)
{
    uint64_t *r = &t->gen;
    struct op *o;

    if (c < 52) {
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
    } else {
        int src = pick(t, g, s, 0, NDEV), dst = pick(t, g, s, 0, NDEV);
        need(t, g, s, src);
        need(t, g, s, dst);
        o = op_add(t, OP_D2D, s);
        o->src_r = src;
        o->dst_r = dst;
    }
    return o;
}

/* Appends one random op (with the handoffs it needs) on a random stream. */
static void gen_op(struct thr *t, struct gen *g)
{
    uint64_t *r = &t->gen;
    int ns = nstreams_used(t), s = chance(r, t->focus ? 95 : 55) ? t->main_stream : (int)rnd(r, (unsigned)ns);
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
    if (t->xops && chance(r, 14)) {
        gen_xop(t, g, s);
        return;
    }
    if (c < 45) {
        int ks = pick(t, g, s, RES_GLOB(0), RES_GLOB(NKS)) - RES_GLOB(0);
        int out = pick(t, g, s, 0, NDEV), in = pick(t, g, s, 0, NDEV);
        o = gen_launch(t, g, s, ks, out, in);
    } else if (c < 63) {
        o = gen_copy(t, g, s, c);
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
        if (t->xops)
            o->how = (int)rnd(r, 3);   /* cuCtxSynchronize_v2 of the context (1) or of NULL (2) */
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
    if (o->kind == OP_MEMSET)
        memset_extent(t, o);
    o->owned = owned_by(g, o->s);
}

/* A copy that threads with extra ops put in inner loops: host to device from
** pinned or pageable memory, device to pinned host memory, cuMemcpyAsync. */
static int loop_copy(const struct op *o)
{
    return o->kind == OP_H2D || (o->kind == OP_D2H && !o->pageable) || o->kind == OP_GENCOPY;
}

/* An op an inner loop of stream s may repeat: a launch, a memset, a device
** copy, and for threads with extra ops host copies too. */
static int loop_op(const struct thr *t, const struct op *o, int s)
{
    return (o->kind == OP_LAUNCH || o->kind == OP_MEMSET || o->kind == OP_D2D || (t->xops && loop_copy(o))) &&
           o->s == s;
}

/* A step that repeats with no synchronize between (focused threads): 5 to 40
** launches and memsets appended on the main stream, which owns every buffer
** by then, repeated 2 to 24 times back to back, as a training loop that reads
** its loss every 10 or 100 steps runs its step. */
static void long_loop(struct thr *t, struct gen *g)
{
    int s = t->main_stream, start = t->nbody, k = 5 + (int)rnd(&t->gen, 36);

    for (int i = 0; i < k && t->nbody < MAX_OPS - 8; i++) {
        if (chance(&t->gen, 85)) {
            gen_launch(t, g, s, (int)rnd(&t->gen, NKS), pick(t, g, s, 0, NDEV), pick(t, g, s, 0, NDEV));
        } else {
            struct op *o = op_add(t, OP_MEMSET, s);
            o->dst_r = pick(t, g, s, 0, NDEV);
            o->width = 4;
            o->value = (unsigned)splitmix(&t->gen);
            memset_extent(t, o);
        }
        t->body[t->nbody - 1].owned = owned_by(g, s);
    }
    for (int i = start; i < t->nbody; i++)
        if (!loop_op(t, &t->body[i], s))
            return;   /* a handoff came in: no loop */
    if (t->nbody - start >= 2) {
        t->body[start].loop_len = t->nbody - start;
        t->body[start].loop_reps = 2 + (int)rnd(&t->gen, 23);
    }
}

/* A copy to the device from pageable memory repeated alone, 8 to 39 times (a
** loop body, which must not hold it: its source changes at every call and is
** rewritten once the call returns): the first such copy of the body that no
** inner loop holds. */
static void pageable_loop(struct thr *t)
{
    for (int i = 0, covered = 0; i < t->nbody; i++) {
        struct op *o = &t->body[i];
        if (o->kind == OP_H2D && o->pageable && !o->loop_len && !covered) {
            o->loop_len = 1;
            o->loop_reps = 8 + (int)rnd(&t->gen, 32);
            return;
        }
        covered = covered > 0 ? covered - 1 : 0;
        if (o->loop_len)
            covered = o->loop_len - 1;
    }
}

/* Generates the thread's body: random ops, then handoffs that give every
** resource back to its owner at the start, so that iterations are alike. */
void gen_body(struct thr *t)
{
    struct gen g;
    int ns = nstreams_used(t), nops = 4 + (int)rnd(&t->gen, 20);

    t->main_stream = (int)rnd(&t->gen, (unsigned)ns);
    for (int r = 0; r < NRES; r++)
        g.owner[r] = g.init_owner[r] = t->focus || chance(&t->gen, 50) ? t->main_stream : (int)rnd(&t->gen, (unsigned)ns);
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
        for (int i = start; i < start + len && ok; i++)
            ok = loop_op(t, &t->body[i], t->body[start].s);
        if (ok) {
            t->body[start].loop_len = len;
            t->body[start].loop_reps = 2 + (int)rnd(&t->gen, 80);
        }
    }
    if (t->focus && chance(&t->gen, 50))
        long_loop(t, &g);
    if (t->xops && chance(&t->gen, 60)) /* drawn last: the rest of the body is its seed's as before */
        pageable_loop(t);
}


