/*
** threads.c: guardprog's scenarios of threads, contexts and default streams: two
** contexts, four threads, per-thread and legacy streams, a context synchronize
** racing a capture.
*/
#include "guardprog.h"

/* Two contexts, each launching on its own default stream d (the legacy stream,
** passed as 0, or the per-thread stream): a function of the second context's
** module is valid only there, so its launches must never go out in the first's,
** and both contexts' sequences are graphed, each in its own context (graphshim
** keeps a default stream's state per context). */
static void two_ctx_on(int iters, CUstream d)
{
    CUcontext b;
    CUmodule mb;
    CUfunction fill_b, axpb_b, copy_b;
    CUdeviceptr xa = dev(), xb;
    float *out_a = pinned(), *out_b = pinned();
    float two = 2.0f, one = 1.0f;

    CHECK(cuCtxCreate_v2(&b, 0, 0)); /* current from here */
    CHECK(cuModuleLoadData(&mb, "image"));
    CHECK(cuModuleGetFunction(&fill_b, mb, "fill"));
    CHECK(cuModuleGetFunction(&axpb_b, mb, "axpb"));
    CHECK(cuModuleGetFunction(&copy_b, mb, "copy"));
    xb = dev();
    for (int it = 0; it < iters; it++) {
        float va = (float)it, vb = (float)(100 + it);
        CUdeviceptr pa = P(out_a), pb = P(out_b);
        CHECK(cuCtxSetCurrent(ctx));
        fill(d, xa, va);
        axpb(d, xa);
        copy(d, pa, xa);
        CHECK(cuCtxSetCurrent(b));
        launch(fill_b, d, (void *[]){&xb, &vb, &n});
        launch(axpb_b, d, (void *[]){&xb, &two, &one, &n});
        launch(axpb_b, d, (void *[]){&xb, &two, &one, &n});
        launch(copy_b, d, (void *[]){&pb, &xb, &n});
        CHECK(cuCtxSynchronize());
        CHECK(cuCtxSetCurrent(ctx));
        CHECK(cuCtxSynchronize());
        show(it, "a", out_a);
        show(it, "b", out_b);
    }
    CHECK(cuCtxSetCurrent(ctx));
}

static void two_ctx(int iters) { two_ctx_on(iters, 0); }
static void two_ctx_pt(int iters) { two_ctx_on(iters, CU_STREAM_PER_THREAD); }

/* Four threads, each its own stream and sequence.  Memory is allocated before the
** threads start: an allocation resolves every stream's held work, which would
** cut the other threads' sequences at random places. */
struct worker {
    int id, iters;
    CUdeviceptr x;
    float *out;
    float result[64];
};
static void *thread_main(void *arg)
{
    struct worker *w = arg;
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < w->iters && it < 64; it++) {
        fill(s, w->x, (float)(w->id * 1000 + it % 3));
        axpb(s, w->x);
        copy(s, P(w->out), w->x);
        CHECK(cuStreamSynchronize(s));
        w->result[it] = w->out[N - 1];
    }
    CHECK(cuStreamDestroy_v2(s));
    return NULL;
}

static void *thread_entry(void *arg)
{
    CHECK(cuCtxSetCurrent(ctx));
    return thread_main(arg);
}

static void threads(int iters)
{
    pthread_t th[4];
    struct worker w[4];
    for (int t = 0; t < 4; t++) {
        w[t].id = t;
        w[t].iters = iters;
        w[t].x = dev();
        w[t].out = pinned();
    }
    for (int t = 0; t < 4; t++) {
        pthread_create(&th[t], NULL, thread_entry, &w[t]);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++)
        for (int it = 0; it < iters && it < 64; it++)
            printf("thread %d %d %g\n", t, it, w[t].result[it]);
}

/* Waits for e as a host that polls does: no synchronize, only queries. */
static void spin_on(CUevent e)
{
    CUresult rc;
    while ((rc = cuEventQuery(e)) == CUDA_ERROR_NOT_READY)
        ;
    CHECK(rc);
}

/* event on the per-thread default stream, as a program built with
** --default-stream per-thread records it: cuEventRecord_ptsz (cuda.h declares
** it only for such builds), stream 0 naming the calling thread's stream.  The
** host spins on the event, then reads what the work before it wrote. */
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
static void event_pt(int iters)
{
    CUevent e;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        input(CU_STREAM_PER_THREAD, x, it);
        axpb(CU_STREAM_PER_THREAD, x);
        copy(CU_STREAM_PER_THREAD, P(out), x);
        CHECK(cuEventRecord_ptsz(e, 0));
        spin_on(e);
        show(it, "out", out);
        CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD)); /* ends the sequence where the record does not */
    }
}

/* Work on one stream, an event recorded on another that orders after it, the
** host spinning on the event and then reading what the work wrote, in pinned
** memory.  A record on the legacy stream orders after the blocking streams'
** earlier work (a created blocking stream's, the per-thread stream's), and a
** record on a blocking stream after the legacy stream's; a non-blocking stream
** records its own.  Each record must issue the work held before it on those
** streams: the event is complete only once that work is done. */
static void event_legacy(int iters)
{
    CUstream blocking, nonblocking;
    CUevent e;
    CUdeviceptr x = dev();
    float *out[4] = {pinned(), pinned(), pinned(), pinned()};
    CHECK(cuStreamCreate(&blocking, 0));
    CHECK(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        struct {
            CUstream work, record;
        } pair[4] = {{blocking, CU_STREAM_LEGACY},
                     {CU_STREAM_PER_THREAD, CU_STREAM_LEGACY},
                     {nonblocking, nonblocking},
                     {CU_STREAM_LEGACY, blocking}};
        for (int p = 0; p < 4; p++) {
            input(pair[p].work, x, it + p);
            axpb(pair[p].work, x);
            copy(pair[p].work, P(out[p]), x);
            if (p % 2)
                CHECK(cuEventRecordWithFlags(e, pair[p].record, 0));
            else
                CHECK(cuEventRecord(e, pair[p].record));
            spin_on(e);
            show(it, "out", out[p]);
        }
    }
}

/* A blocking stream that runs no op of its own, only records: its record
** still orders after the legacy stream's earlier work, so it issues what the
** legacy stream holds (graphshim learns a stream's flags at its first op or
** boundary, whichever comes first; learned at ops alone, such a stream was
** taken for a non-blocking one and its record went out before the work).  The
** legacy stream's iteration is learned where it synchronizes (the first
** half), and held whole where the record ends it (the second). */
static void legacy_records(int iters)
{
    CUstream blocking;
    CUevent e;
    CUdeviceptr x = dev();
    float *out = pinned();
    CHECK(cuStreamCreate(&blocking, 0));
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        input(CU_STREAM_LEGACY, x, it);
        axpb(CU_STREAM_LEGACY, x);
        copy(CU_STREAM_LEGACY, P(out), x);
        if (it < iters / 2) {
            CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
        } else {
            CHECK(cuEventRecord(e, blocking));
            spin_on(e);
        }
        show(it, "out", out);
    }
    CHECK(cuCtxSynchronize());
}

/* Another thread's launch on the legacy stream, with the primary context. */
static void *legacy_nudge(void *arg)
{
    CUdeviceptr y = *(CUdeviceptr *)arg;
    CHECK(cuCtxSetCurrent(ctx));
    fill(CU_STREAM_LEGACY, y, 1.0f);
    return NULL;
}

/* The main thread's work on its per-thread stream, held; another thread then
** launches on the legacy stream, which first issues what blocking streams hold
** (the per-thread stream's work, which that thread can only issue on the
** legacy stream); then the main thread synchronizes its per-thread stream and
** reads the result.  On a GPU that synchronize does not wait for legacy work
** issued after the stream's last op (bench/ptds_legacy_probe.cu): run with
** FAKECUDA_PENDING, it shows stale values unless the stream was made to wait
** for the work issued for it. */
static void ptds_legacy(int iters)
{
    CUdeviceptr x = dev(), y = dev();
    float *out = pinned();
    for (int it = 0; it < iters; it++) {
        pthread_t t;
        input(CU_STREAM_PER_THREAD, x, it);
        axpb(CU_STREAM_PER_THREAD, x);
        copy(CU_STREAM_PER_THREAD, P(out), x);
        pthread_create(&t, NULL, legacy_nudge, &y);
        pthread_join(t, NULL);
        CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
        show(it, "out", out);
        CHECK(cuCtxSynchronize());
    }
}

/* A context synchronize of another thread while the engine captures a graph: it
** must neither fail (900) nor invalidate the capture.  The main thread runs two
** sequences in turn (with GRAPHSHIM_MAX_GRAPHS=1, a capture every time) while a
** second thread synchronizes the context every 0.2 ms and counts its failures. */
struct racer {
    atomic_int done;
    long failed;
};

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    struct timespec nap = {0, 200000};
    CHECK(cuCtxSetCurrent(ctx));
    while (!atomic_load(&r->done)) {
        CUresult rc = cuCtxSynchronize();
        if (rc != CUDA_SUCCESS) {
            fprintf(stderr, "cuCtxSynchronize: %d\n", (int)rc);
            r->failed++;
        }
        nanosleep(&nap, NULL);
    }
    return NULL;
}

static void race_ctx_sync(int iters)
{
    struct racer r = {0, 0};
    pthread_t th;
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    pthread_create(&th, NULL, racer_main, &r);
    for (int it = 0; it < iters; it++) {
        input(s, x, it % 4);
        axpb(s, x);
        if (it % 2)
            axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
    atomic_store(&r.done, 1);
    pthread_join(th, NULL);
    printf("second thread: %ld failed calls\n", r.failed);
}

const struct gp_scenario gp_threads[] = {
    {"two-ctx", two_ctx},
    {"two-ctx-pt", two_ctx_pt},
    {"threads", threads},
    {"race-ctx-sync", race_ctx_sync},
    {"event-legacy", event_legacy},
    {"legacy-records", legacy_records},
    {"ptds-legacy", ptds_legacy},
    {"event-pt", event_pt},
    {NULL, NULL},
};
