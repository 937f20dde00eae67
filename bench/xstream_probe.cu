// xstream_probe.cu: the rules of a stream capture that spans streams (a fork to a
// second stream by an event, a join back by an event), as a real driver applies
// them, each beside what the fake driver (tests/fakecuda) does.
//
// Every check runs on streams of its own and prints one line:
//   xstream: <fact>: <what the driver returned> | fake: <what tests/fakecuda returns> <same|DIFFERS>
// Codes are CUresult numbers (0 success, 1 invalid value, 401 illegal state,
// 600 not ready, 900 capture unsupported, 901 invalidated, 902 merge, 903
// unmatched, 904 unjoined, 905 isolation, 906 implicit, 907 captured event);
// status: 0 none, 1 active, 2 invalidated.  A fact about concurrency (the fake
// runs every op in issue order) prints "fake: n/a" and is not compared.  Last
// line: how many facts, how many differ from the fake.  Exits 0 unless the
// probe itself could not run (a setup call failed).
//
//   nvcc -O2 -arch=sm_90 -o xstream_probe bench/xstream_probe.cu -lcuda -lpthread && ./xstream_probe
//   (make xstream-probe builds and runs it, its log under OUT; make
//   xstream-probe-fake runs it against the fake driver, no GPU: bench/xstream_probe_fake.sh)
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "check.cuh"

#define SPIN_NS 200000000LL // 200 ms: a kernel still running when the host looks

__global__ void xs_add(int *p, int v) { *p += v; }

// Waits ns nanoseconds of the GPU's global timer, then sets *flag.
__global__ void xs_spin_set(volatile int *flag, long long ns)
{
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
    *flag = 1;
}

__global__ void xs_read(const volatile int *flag, int *out) { *out = *flag; }

static CUcontext ctx;
static CUfunction f_add, f_spin, f_read;
static CUdeviceptr d_cell, d_flag, d_out; // an int each
static int facts, differ;

static CUfunction fn_of(const void *sym)
{
    cudaFunction_t f;
    CK(cudaGetFuncBySymbol(&f, sym));
    return (CUfunction)f;
}

// One tiny kernel on s: its return code (the checks look at launches' codes).
static CUresult add(CUstream s)
{
    int v = 1;
    void *args[] = {&d_cell, &v};
    return cuLaunchKernel(f_add, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

static int status(CUstream s)
{
    CUstreamCaptureStatus st;
    CUresult rc = cuStreamIsCapturing(s, &st);
    return rc ? -(int)rc : (int)st;
}

static CUstream stream(unsigned flags)
{
    CUstream s;
    CU(cuStreamCreate(&s, flags));
    return s;
}

static CUevent event()
{
    CUevent e;
    CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    return e;
}

// Ends whatever capture the streams still hold (a check that left one open),
// destroys them and the events given, and waits for the device.  Codes are
// ignored here: a driver that leaves a stream in a state the fake does not has
// said so in the check's own line.
static void drop(CUstream s, CUstream t, CUevent a, CUevent b)
{
    for (CUstream x : {s, t}) {
        CUgraph g = NULL;
        if (x && status(x) > 0 && cuStreamEndCapture(x, &g) == CUDA_SUCCESS && g)
            (void)cuGraphDestroy(g);
    }
    for (CUstream x : {s, t})
        if (x)
            (void)cuStreamDestroy(x);
    for (CUevent x : {a, b})
        if (x)
            (void)cuEventDestroy(x);
    (void)cuCtxSynchronize();
}

// An executable of g, or NULL where the capture gave no graph or it cannot be
// instantiated.
static CUgraphExec inst(CUgraph g)
{
    CUgraphExec x = NULL;
    if (!g || cuGraphInstantiate(&x, g, 0) != CUDA_SUCCESS)
        return NULL;
    return x;
}

// Counts the nodes of g of a type (or all, type < 0); -1 where g is NULL.
static int nodes(CUgraph g, int type)
{
    if (!g)
        return -1;
    size_t n = 0;
    CU(cuGraphGetNodes(g, NULL, &n));
    CUgraphNode *v = (CUgraphNode *)calloc(n + 1, sizeof *v);
    CU(cuGraphGetNodes(g, v, &n));
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        CU(cuGraphNodeGetType(v[i], &t));
        k += type < 0 || (int)t == type;
    }
    free(v);
    return k;
}

static void fact(const char *name, const std::string &seen, const char *fake)
{
    bool cmp = strcmp(fake, "n/a") != 0, same = seen == fake;
    printf("xstream: %-34s %s | fake: %s%s\n", name, seen.c_str(), fake,
           !cmp ? "" : same ? " same" : " DIFFERS");
    facts++;
    differ += cmp && !same;
}

static std::string fmt(const char *f, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, sizeof b, f, ap);
    va_end(ap);
    return b;
}

// A wait on an event recorded in the capture pulls the waiting stream in: it
// reports the capture's id, its work becomes nodes, and a join lets the capture end.
static void fork_join()
{
    CUstream o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING);
    CUevent f = event(), j = event();
    cuuint64_t ido = 0, ids = 0;
    CUstreamCaptureStatus st;
    CUgraph g = NULL;
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    CU(cuEventRecord(f, o));
    CUresult w = cuStreamWaitEvent(s, f, 0);
    CU(cuStreamGetCaptureInfo(o, &st, &ido, NULL, NULL, NULL, NULL));
    CU(cuStreamGetCaptureInfo(s, &st, &ids, NULL, NULL, NULL, NULL));
    CUresult k = add(s);
    CU(cuEventRecord(j, s));
    CU(cuStreamWaitEvent(o, j, 0));
    CUresult e = cuStreamEndCapture(o, &g);
    fact("fork pulls the waiting stream in", fmt("wait=%d side=%d same_id=%d launch=%d end=%d nodes=%d side_after=%d",
         w, (int)st, ido == ids, k, e, nodes(g, -1), status(s)),
         "wait=0 side=1 same_id=1 launch=0 end=0 nodes=2 side_after=0");
    if (g)
        cuGraphDestroy(g);
    drop(o, s, f, j);
}

// A fork with work that is never joined: the end fails (first on the fork, then
// on the origin alone); where the streams are left.
static void unjoined()
{
    CUstream o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING);
    CUevent f = event();
    CUgraph g = (CUgraph)0x1;
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    CU(cuEventRecord(f, o));
    CU(cuStreamWaitEvent(s, f, 0));
    CU(add(s));
    CUresult side_end = cuStreamEndCapture(s, &g);
    int mid = status(o);
    CUresult e = cuStreamEndCapture(o, &g);
    int so = status(o), ss = status(s);
    CUresult lo = add(o), ls = add(s);
    fact("unjoined fork at the end", fmt("end_on_side=%d origin=%d end=%d graph=%s origin_after=%d side_after=%d "
         "launch_origin=%d launch_side=%d", side_end, mid, e, g ? "set" : "null", so, ss, lo, ls),
         "end_on_side=903 origin=2 end=901 graph=null origin_after=0 side_after=0 launch_origin=0 launch_side=0");
    drop(o, s, f, NULL);

    o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING), f = event();
    g = (CUgraph)0x1;
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    CU(cuEventRecord(f, o));
    CU(cuStreamWaitEvent(s, f, 0));
    CU(add(s));
    e = cuStreamEndCapture(o, &g);
    so = status(o), ss = status(s);
    lo = add(o), ls = add(s);
    fact("unjoined fork, ended on the origin", fmt("end=%d graph=%s origin_after=%d side_after=%d launch_origin=%d "
         "launch_side=%d", e, g ? "set" : "null", so, ss, lo, ls),
         "end=904 graph=null origin_after=0 side_after=0 launch_origin=0 launch_side=0");
    drop(o, s, f, NULL);

    // A fork that did nothing after its wait.
    o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING), f = event();
    g = NULL;
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    CU(cuEventRecord(f, o));
    CU(cuStreamWaitEvent(s, f, 0));
    CU(add(o));
    e = cuStreamEndCapture(o, &g);
    fact("fork without work, not joined", fmt("end=%d nodes=%d side_after=%d", e, nodes(g, -1), status(s)),
         "end=0 nodes=2 side_after=0");
    if (g)
        cuGraphDestroy(g);
    drop(o, s, f, NULL);
}

// A capturing stream's wait on an event recorded outside the capture.
static void isolation()
{
    CUstream o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING);
    CUevent x = event(), never = event();
    CUgraph g = NULL;
    CU(add(s));
    CU(cuEventRecord(x, s));
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUresult w = cuStreamWaitEvent(o, x, 0);
    int st = status(o);
    CUresult e = cuStreamEndCapture(o, &g);
    fact("wait on an outside event", fmt("wait=%d status=%d end=%d", w, st, e), "wait=905 status=2 end=901");

    g = NULL;
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    w = cuStreamWaitEvent(o, x, CU_EVENT_WAIT_EXTERNAL);
    CU(add(o));
    e = cuStreamEndCapture(o, &g);
    fact("... with CU_EVENT_WAIT_EXTERNAL", fmt("wait=%d end=%d wait_nodes=%d", w, e,
         nodes(g, CU_GRAPH_NODE_TYPE_WAIT_EVENT)), "wait=0 end=0 wait_nodes=1");
    if (g)
        cuGraphDestroy(g);

    g = NULL;
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    w = cuStreamWaitEvent(o, never, 0);
    st = status(o);
    e = cuStreamEndCapture(o, &g);
    fact("wait on a never-recorded event", fmt("wait=%d status=%d end=%d nodes=%d", w, st, e, nodes(g, -1)),
         "wait=0 status=1 end=0 nodes=1");
    if (g)
        cuGraphDestroy(g);
    drop(o, s, x, never);
}

// An event whose last record was in a capture: a query during it (which spoils
// the capture), the event after that and once recorded again; then, of a
// capture left alone, the event after its end and a later capture's wait on it.
static void captured_event()
{
    CUstream o = stream(CU_STREAM_NON_BLOCKING), o2 = stream(CU_STREAM_NON_BLOCKING);
    CUevent e = event();
    CUgraph g = NULL, g2 = NULL;
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    CU(cuEventRecord(e, o));
    CUresult q = cuEventQuery(e), sy = cuEventSynchronize(e);
    int st = status(o);
    CUresult end = cuStreamEndCapture(o, &g);
    CUresult qa = cuEventQuery(e), sa = cuEventSynchronize(e);
    fact("query/sync of a captured event", fmt("query=%d sync=%d status=%d end=%d query_after_end=%d sync_after_end=%d",
         q, sy, st, end, qa, sa), "query=907 sync=1 status=2 end=901 query_after_end=1 sync_after_end=1");
    if (g)
        cuGraphDestroy(g);
    g = NULL;
    CUresult rr = cuEventRecord(e, o), rs = cuStreamSynchronize(o);
    qa = cuEventQuery(e), sa = cuEventSynchronize(e);
    fact("... recorded again outside", fmt("record=%d sync=%d query=%d event_sync=%d", rr, rs, qa, sa),
         "record=0 sync=0 query=0 event_sync=0");

    CU(cuEventDestroy(e));
    e = event();
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    CU(cuEventRecord(e, o));
    end = cuStreamEndCapture(o, &g);
    qa = cuEventQuery(e);
    CUgraphExec x = inst(g);
    if (!x) {
        fact("... after a launch; a new capture waits", fmt("end=%d, no graph to launch", end),
             "after_end=1 query=1 wait=1 status=2 end=901");
        if (g)
            cuGraphDestroy(g);
        drop(o, o2, e, NULL);
        return;
    }
    CU(cuGraphLaunch(x, o));
    CU(cuStreamSynchronize(o));
    CUresult ql = cuEventQuery(e);
    CU(cuStreamBeginCapture(o2, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o2));
    CUresult w = cuStreamWaitEvent(o2, e, 0);
    st = status(o2);
    CUresult end2 = cuStreamEndCapture(o2, &g2);
    fact("... after a launch; a new capture waits", fmt("after_end=%d query=%d wait=%d status=%d end=%d", qa, ql, w,
         st, end2), "after_end=1 query=1 wait=1 status=2 end=901");
    if (g2)
        cuGraphDestroy(g2);
    CU(cuGraphExecDestroy(x));
    CU(cuGraphDestroy(g));
    drop(o, o2, e, NULL);
}

// cuEventRecordWithFlags(CU_EVENT_RECORD_EXTERNAL) in a capture: a record node;
// what a query says during the capture (it spoils the capture) and, of a
// capture left alone, around the graph's launch; whether a default wait on it
// joins a stream; the flags outside a capture.
static void external_record()
{
    CUstream o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING);
    CUevent e = event();
    CUgraph g = NULL;
    long long ns = SPIN_NS;
    void *args[] = {&d_flag, &ns};
    CU(cuMemsetD32(d_flag, 0, 1));
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(cuLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, o, args, NULL));
    CUresult r = cuEventRecordWithFlags(e, o, CU_EVENT_RECORD_EXTERNAL);
    CUresult q = cuEventQuery(e);
    CUresult w = cuStreamWaitEvent(s, e, 0);
    int ss = status(s);
    CUresult end = cuStreamEndCapture(o, &g);
    int rec = nodes(g, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    fact("external record in a capture", fmt("record=%d query=%d side_wait=%d side=%d end=%d record_nodes=%d",
         r, q, w, ss, end, rec), "record=0 query=900 side_wait=0 side=0 end=901 record_nodes=-1");
    if (g)
        CU(cuGraphDestroy(g));

    g = NULL;
    CU(cuMemsetD32(d_flag, 0, 1));
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(cuLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, o, args, NULL));
    CU(cuEventRecordWithFlags(e, o, CU_EVENT_RECORD_EXTERNAL));
    CU(cuStreamEndCapture(o, &g));
    CUgraphExec x = inst(g);
    if (x) {
        CU(cuGraphLaunch(x, o));
        CUresult ql = cuEventQuery(e);
        CU(cuStreamSynchronize(o));
        CUresult qs = cuEventQuery(e);
        fact("... its query at launch, after sync", fmt("at_launch=%d after_sync=%d", ql, qs), "n/a");
        CU(cuGraphExecDestroy(x));
    }
    if (g)
        CU(cuGraphDestroy(g));

    CUresult ro = cuEventRecordWithFlags(e, o, CU_EVENT_RECORD_EXTERNAL);
    CUresult wo = cuStreamWaitEvent(s, e, CU_EVENT_WAIT_EXTERNAL);
    fact("external flags outside a capture", fmt("record=%d wait=%d", ro, wo), "record=401 wait=401");
    drop(o, s, e, NULL);
}

struct other {
    CUresult rc;
};

static void *legacy_from_thread(void *p)
{
    CU(cuCtxSetCurrent(ctx));
    ((other *)p)->rc = add(CU_STREAM_LEGACY);
    return NULL;
}

// The legacy stream while streams of a capture run: ob, sb say whether the
// origin and the forked stream are blocking; thread: the legacy launch comes
// from another thread.
static void legacy_case(CUstreamCaptureMode mode, bool ob, bool sb, bool thread, const char *name, const char *fake)
{
    CUstream o = stream(ob ? 0 : CU_STREAM_NON_BLOCKING), s = stream(sb ? 0 : CU_STREAM_NON_BLOCKING);
    CUevent f = event(), j = event();
    CUgraph g = NULL;
    CU(cuStreamBeginCapture(o, mode));
    CU(add(o));
    CU(cuEventRecord(f, o));
    CU(cuStreamWaitEvent(s, f, 0));
    CU(add(s));
    other t = {CUDA_SUCCESS};
    if (thread) {
        pthread_t th;
        pthread_create(&th, NULL, legacy_from_thread, &t);
        pthread_join(th, NULL);
    } else {
        t.rc = add(CU_STREAM_LEGACY);
    }
    int so = status(o), ss = status(s);
    CUresult r1 = cuEventRecord(j, s), r2 = cuStreamWaitEvent(o, j, 0);
    CUresult end = cuStreamEndCapture(o, &g);
    (void)r1, (void)r2;
    fact(name, fmt("legacy=%d origin=%d side=%d end=%d", t.rc, so, ss, end), fake);
    if (g)
        cuGraphDestroy(g);
    drop(o, s, f, j);
}

static void legacy()
{
    const char *inval = "legacy=906 origin=2 side=2 end=901";
    legacy_case(CU_STREAM_CAPTURE_MODE_GLOBAL, true, true, false, "legacy, blocking streams, global", inval);
    legacy_case(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, true, false, "legacy, blocking, thread-local", inval);
    legacy_case(CU_STREAM_CAPTURE_MODE_RELAXED, true, true, false, "legacy, blocking, relaxed", inval);
    legacy_case(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, true, true, true, "legacy from a thread, thread-local", inval);
    legacy_case(CU_STREAM_CAPTURE_MODE_RELAXED, true, true, true, "legacy from a thread, relaxed", inval);
    legacy_case(CU_STREAM_CAPTURE_MODE_GLOBAL, false, true, false, "legacy, only the fork blocking", inval);
    legacy_case(CU_STREAM_CAPTURE_MODE_GLOBAL, false, false, false, "legacy, non-blocking streams",
                "legacy=0 origin=1 side=1 end=0");
}

// A query or synchronize of the forked stream, its destruction, a capture
// begun on it, and a merge of two captures.
static void member_ops()
{
    const char *names[] = {"cuStreamQuery of the fork mid-capture", "cuStreamSynchronize of the fork",
                           "cuStreamDestroy of the fork", "cuStreamBeginCapture on the fork"};
    const char *fakes[] = {"op=900 origin=2 end=901", "op=900 origin=2 end=901", "op=0 origin=1 end=0",
                           "op=401 origin=1 end=0"};
    for (int k = 0; k < 4; k++) {
        CUstream o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING);
        CUevent f = event(), j = event();
        CUgraph g = NULL;
        CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CU(add(o));
        CU(cuEventRecord(f, o));
        CU(cuStreamWaitEvent(s, f, 0));
        CU(add(s));
        CU(cuEventRecord(j, s));
        CUresult op = k == 0 ? cuStreamQuery(s) : k == 1 ? cuStreamSynchronize(s) : k == 2 ? cuStreamDestroy(s)
                    : cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
        if (k == 2 && op == CUDA_SUCCESS)
            s = NULL;
        cuStreamWaitEvent(o, j, 0); // the join (its code is not the fact)
        int so = status(o);
        CUresult end = cuStreamEndCapture(o, &g);
        fact(names[k], fmt("op=%d origin=%d end=%d", op, so, end), fakes[k]);
        if (g)
            cuGraphDestroy(g);
        drop(o, s, f, j);
    }

    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUevent e = event();
    CUgraph g = NULL;
    CU(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(cuStreamBeginCapture(b, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(a));
    CU(cuEventRecord(e, a));
    CUresult w = cuStreamWaitEvent(b, e, 0);
    int sa = status(a), sb = status(b);
    CUresult ea = cuStreamEndCapture(a, &g);
    if (g)
        cuGraphDestroy(g);
    g = NULL;
    CUresult eb = cuStreamEndCapture(b, &g);
    if (g)
        cuGraphDestroy(g);
    fact("wait across two captures (merge)", fmt("wait=%d a=%d b=%d end_a=%d end_b=%d", w, sa, sb, ea, eb),
         "wait=902 a=2 b=2 end_a=901 end_b=901");
    drop(a, b, e, NULL);
}

// After a graph of a fork (the forked stream's branch: a kernel that spins, then
// sets a flag) is launched on the origin, a kernel queued on the forked stream
// reads the flag: bridged, after an event recorded on the origin after the
// launch and waited on by the forked stream.
static void after_launch(bool bridged)
{
    CUstream o = stream(CU_STREAM_NON_BLOCKING), s = stream(CU_STREAM_NON_BLOCKING);
    CUevent f = event(), j = event(), after = event();
    CUgraph g;
    CUgraphExec x;
    long long ns = SPIN_NS;
    void *spin[] = {&d_flag, &ns}, *read[] = {&d_flag, &d_out};
    CU(cuStreamBeginCapture(o, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU(add(o));
    CU(cuEventRecord(f, o));
    CU(cuStreamWaitEvent(s, f, 0));
    CU(cuLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, s, spin, NULL));
    CU(cuEventRecord(j, s));
    CU(cuStreamWaitEvent(o, j, 0));
    CU(cuStreamEndCapture(o, &g));
    CU(cuGraphInstantiate(&x, g, 0));
    CU(cuMemsetD32(d_flag, 0, 1));
    CU(cuMemsetD32(d_out, 0xff, 1));
    CU(cuCtxSynchronize());
    CU(cuGraphLaunch(x, o));
    if (bridged) {
        CU(cuEventRecord(after, o));
        CU(cuStreamWaitEvent(s, after, 0));
    }
    CU(cuLaunchKernel(f_read, 1, 1, 1, 1, 1, 1, 0, s, read, NULL));
    CU(cuCtxSynchronize());
    int seen = -1;
    CU(cuMemcpyDtoH(&seen, d_out, sizeof seen));
    if (bridged)
        fact("fork's stream after launch, bridged", fmt("flag_seen=%d", seen), "flag_seen=1");
    else
        fact("fork's stream after launch, no event", fmt("flag_seen=%d (0: not ordered after the graph)", seen),
             "n/a");
    CU(cuGraphExecDestroy(x));
    CU(cuGraphDestroy(g));
    CU(cuEventDestroy(after));
    drop(o, s, f, j);
}

int main()
{
    cudaDeviceProp p;
    int drv = 0;
    CK(cudaFree(0));
    CK(cudaGetDeviceProperties(&p, 0));
    CU(cuDriverGetVersion(&drv));
    CU(cuCtxGetCurrent(&ctx));
    f_add = fn_of((const void *)xs_add);
    f_spin = fn_of((const void *)xs_spin_set);
    f_read = fn_of((const void *)xs_read);
    CU(cuMemAlloc(&d_cell, 4));
    CU(cuMemAlloc(&d_flag, 4));
    CU(cuMemAlloc(&d_out, 4));
    printf("xstream-probe: %s, driver %d\n", p.name, drv);
    fork_join();
    unjoined();
    isolation();
    captured_event();
    external_record();
    legacy();
    member_ops();
    after_launch(false);
    after_launch(true);
    printf("xstream-probe: %d facts, %d differ from the fake driver (tests/fakecuda)\n", facts, differ);
    return 0;
}
