// device_update_cost.cu: what it costs to change N kernel nodes of a graph
// before each replay (issue 40, item 3): one host cudaGraphExecKernelNodeSetParams
// per node (what graphshim does now) against device-updatable kernel nodes whose
// new parameters one small "applier" kernel, launched on the stream just before
// the graph, writes with cudaGraphKernelNodeUpdatesApply.  Beside them: eager
// launches of the same N kernels, and the graph launched unchanged.  Needs a
// CUDA 12.4 or later toolkit and driver.
//
//   nvcc -O2 -arch=sm_90 -rdc=true -o device_update_cost device_update_cost.cu -lcudadevrt
//   ./device_update_cost
//
// make bench-node-update builds it so into build/bench/ (NODE_UPDATE_ARCH for
// another GPU) and runs it after node_update_cost.  The update functions are the
// device runtime's (cuda_device_runtime_api.h): relocatable device code and
// libcudadevrt, its usual build (CUDA 13's nvcc also builds it without them).
// It stops itself after 55 s; a few seconds are expected.
//
// The graph: N nodes of node_k(float *p, float a, int i) { p[i] += a; } in a
// chain, N = 1, 10, 100, 1,000.  Every replay changes every node: its pointer
// (one of two buffers, alternating) and its scalar (a value per replay and
// node), so a replay that ran a stale node lands on the wrong buffer or adds the
// wrong amount.  Each way runs its replays from zeroed buffers, the host keeps
// what they should hold, and the buffers are read back and compared exactly
// (small integers in floats): a mismatch prints CHECK FAILED on the row and the
// program ends with status 1.
//
// The ways, one replay each, then a cudaStreamSynchronize:
//   a   N eager launches
//   b   the graph launched, nothing changed (plain nodes)
//   c   N cudaGraphExecKernelNodeSetParams (from parameters read once and kept,
//       as graphshim does), then the graph launch
//   b2  the device-updatable graph launched, nothing changed
//   d   the host writes N cudaGraphKernelNodeUpdate (40 B each) and N new
//       parameter values (16 B each) into pinned memory, one cudaMemcpyAsync to
//       the device, an applier <<<1,1>>> whose one thread makes one
//       cudaGraphKernelNodeUpdatesApply of all N, then the graph launch
//   e   the same, the applier one thread per node, one update each (as
//       PyTorch's dynamic-graph prototype does)
//   f   no copy: the applier, one thread per node, reads the host's array from
//       mapped pinned memory, each value staged in shared memory
// Output: a first line (GPU, driver, runtime); the rows a, b, c for every N,
// then per N a setup line (capture, instantiate, upload of the device-updatable
// graph, per node) and the rows b2, d, e, f; then the table.  A row:
//   N=100  c  host set-params x N + graph launch   host  X us (min, max)  wall  Y us (min, max)  check ok
// "host": microseconds until the replay's last call returned (writing the
// update array included); "wall": until the synchronize returned; the median of
// 61 replays (after 5 warm-up), with min and max.  The table divides c by each
// device way, host and wall (above 1.00: the device way is cheaper), and gives
// the host cost per changed node: (c - b) / N against (d - b2) / N.
//
// Node updates on the device.  The host column is what graphshim's thread
// would pay before a replay: c's grows by one driver call a node, d-f's by a
// 56-byte write a node plus a fixed two calls (the copy and the applier's
// launch; f one).  The wall column adds the GPU: the applier runs before the
// graph, on the critical path, so a device way that saves host time may still
// lose wall time where the GPU, not the host, is the limit (compare b2 - b with
// the d rows' wall - host).  Here one replay is synchronized at a time and the
// staging buffer reused; graphshim would need a ring of them.  Where the driver
// refuses device-updatable nodes the program says "device updates not
// supported: <error>" and prints the host rows only; a device way that fails
// otherwise says "device update failed: <error>" (status 1).
//
// Restrictions that matter for graphshim.  Sources: CUDA 13.0's headers, cuda.h
// and driver_types.h at CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE /
// cudaLaunchAttributeDeviceUpdatableKernelNode, cuGraphInstantiateWithFlags,
// cuGraphExecKernelNodeSetParams, cuGraphExecUpdate, cuGraphNodeGetEnabled;
// cuda_device_runtime_api.h at cudaGraphKernelNodeSetParam, SetEnabled,
// SetGridDim, UpdatesApply; driver_types.h at cudaGraphKernelNodeUpdate.
//  - Opt-in per kernel node, before instantiation: the launch attribute on a
//    captured launch (the handle, devNode, comes back in the attribute's value)
//    or set on the graph node.  Graphs only: the attribute on a launch into a
//    stream that is not capturing is an error.  Once set it cannot be cleared.
//  - A graph with such a node can have one executable at a time (a second
//    instantiation before the first is destroyed fails, as with memory
//    allocation nodes), and neither it nor its executable may be passed to
//    cudaGraphExecUpdate: no whole-graph update, only node sets in place.
//  - Such nodes cannot be removed (cudaGraphDestroyNode) nor have attributes
//    copied to or from them (cudaGraphKernelNodeCopyAttributes).
//  - The device may change three things: parameter bytes (offset, size, value,
//    offsets in the device-side layout: cudaFuncGetParamInfo), the grid
//    dimensions, enabled or not.  The function, block dimensions, shared
//    memory and other attributes stay host updates.
//  - The updating kernel must be on the node's device.  (Where pValue may point
//    is not said; here device memory, or shared memory as in PyTorch's prototype.)
//  - A host set of a device-updatable node overwrites its device-side updates at
//    the executable's next upload or launch; a host set while the device updates
//    the same node is undefined.  A graph whose own nodes update it must be
//    uploaded (cudaGraphUpload) before it is launched, and again after host
//    sets.  Here the applier runs outside the graph, which is uploaded once
//    after instantiation, before the first device-side update.
//  - A kernel node whose function made no device-side update calls cannot be set
//    (or whole-graph updated) to one that does: an applier inside a graph must
//    be there from the capture.
//  - Host queries do not see device-side changes (cuGraphNodeGetEnabled).
//  - A dependent started by programmatic dependent launch needs a
//    __threadfence() before the trigger to see the update (not used here).
//  - Not mentioned anywhere: graph clones, device-launched graphs, conditional
//    or child graphs with such nodes.
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "check.cuh"

static const int NS[] = {1, 10, 100, 1000};
static const int NN = 4;
static const int WARMUP = 5;
static const int SAMPLES = 61;
static const int APPLY_BLOCK = 128;
static const unsigned TIME_LIMIT_S = 55;   // the whole run: a few seconds expected on an H100

__global__ void node_k(float *p, float a, int i)
{
    if (threadIdx.x == 0)
        p[i] += a;
}

// The bytes a replay writes into a node's parameters: p and a (offset 0, 12 bytes).
struct Val {
    float *p;
    float a;
    int pad;
};

// The first device-side error of an applier, 0 if none.
__device__ static void note_error(int *err, cudaError_t e)
{
    if (e != cudaSuccess)
        atomicCAS(err, 0, (int)e);
}

__global__ void apply_one(const cudaGraphKernelNodeUpdate *u, int n, int *err)
{
    note_error(err, cudaGraphKernelNodeUpdatesApply(u, (size_t)n));
}

__global__ void apply_par(const cudaGraphKernelNodeUpdate *u, int n, int *err)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        note_error(err, cudaGraphKernelNodeUpdatesApply(&u[i], 1));
}

// u and v in mapped host memory: each thread stages its value in shared memory.
__global__ void apply_mapped(const cudaGraphKernelNodeUpdate *u, const Val *v, int n, int *err)
{
    __shared__ Val sv[APPLY_BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    sv[threadIdx.x] = v[i];
    cudaGraphKernelNodeUpdate up = u[i];
    up.updateData.param.pValue = &sv[threadIdx.x];
    note_error(err, cudaGraphKernelNodeUpdatesApply(&up, 1));
}

static double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void on_alarm(int)
{
    static const char msg[] = "device_update_cost: over the time limit, stopped\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(3);
}

// The value node i adds in replay r (r = 0: the captured one).  Consecutive
// replays differ for every node (31 mod 17 is not 0).
static float val_of(int r, int i) { return (float)(1 + (r * 31 + i * 7) % 17); }

struct Stat {
    double med = 0, lo = 0, hi = 0;
    bool ok = false;
};

static Stat stat_of(std::vector<double> v)
{
    Stat s;
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    s.med = v[v.size() / 2];
    s.lo = v.front();
    s.hi = v.back();
    s.ok = true;
    return s;
}

struct Result {
    Stat host, wall;
};

static int failures = 0;

// One graph size's buffers and the host's copy of what they should hold.
struct Bench {
    int n;
    cudaStream_t s;
    float *buf[2];
    std::vector<double> want[2];
    int replay = 1;   // replay numbers go on across the ways: every replay changes every node

    float *ptr_of(int r) { return buf[r & 1]; }
    void reset()
    {
        for (int b = 0; b < 2; b++) {
            CK(cudaMemset(buf[b], 0, n * sizeof(float)));
            want[b].assign(n, 0.0);
        }
        CK(cudaDeviceSynchronize());
    }
    // After a replay r whose nodes had the parameters of replay pr.
    void expect(int pr)
    {
        for (int i = 0; i < n; i++)
            want[pr & 1][i] += val_of(pr, i);
    }
    bool check(const char *what)
    {
        std::vector<float> got(n);
        for (int b = 0; b < 2; b++) {
            CK(cudaMemcpy(got.data(), buf[b], n * sizeof(float), cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i++)
                if ((double)got[i] != want[b][i]) {
                    printf("N=%d %s: CHECK FAILED: buffer %d node %d holds %.1f, should hold %.1f\n", n, what, b, i,
                           got[i], want[b][i]);
                    failures++;
                    return false;
                }
        }
        return true;
    }
};

// Runs WARMUP + SAMPLES replays of one way.  issue(r) makes replay r's calls and
// returns the first error; pr(r) is the replay whose parameters the nodes then
// hold (r, or 0 for an unchanged graph).  devcheck is given for the device ways
// (b2 included): it returns the appliers' device-side error.  An error of a
// host way ends the program; of a device way, it says so in the row (not
// supported, or failed: then the program ends with status 1).  Prints the row.
enum { WAY_OK, WAY_CHECK_FAILED, WAY_ERROR };
static int measure(Bench &B, const char *tag, const char *what, const std::function<cudaError_t(int)> &issue,
                   const std::function<int(int)> &pr, const std::function<cudaError_t()> &devcheck, Result &res)
{
    B.reset();
    std::vector<double> host, wall;
    for (int k = 0; k < WARMUP + SAMPLES; k++) {
        int r = B.replay++;
        double t0 = now_us();
        cudaError_t e = issue(r);
        double t1 = now_us();
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(B.s);
        double t2 = now_us();
        if (e == cudaSuccess && devcheck)
            e = devcheck();
        if (e != cudaSuccess) {
            if (!devcheck) {
                fprintf(stderr, "device_update_cost: N=%d %s: %s\n", B.n, what, cudaGetErrorString(e));
                exit(1);
            }
            if (e == cudaErrorNotSupported) {
                printf("N=%-4d %-2s %-50s device updates not supported: %s\n", B.n, tag, what, cudaGetErrorString(e));
            } else {
                printf("N=%-4d %-2s %-50s device update failed: %s\n", B.n, tag, what, cudaGetErrorString(e));
                failures++;
            }
            cudaGetLastError();
            CK(cudaStreamSynchronize(B.s));   // a sticky error ends the program here
            return WAY_ERROR;
        }
        B.expect(pr(r));
        if (k >= WARMUP) {
            host.push_back(t1 - t0);
            wall.push_back(t2 - t0);
        }
    }
    res.host = stat_of(host);
    res.wall = stat_of(wall);
    bool ok = B.check(what);
    printf("N=%-4d %-2s %-50s host %9.2f us (min %.2f, max %.2f)  wall %9.2f us (min %.2f, max %.2f)  %s\n", B.n,
           tag, what, res.host.med, res.host.lo, res.host.hi, res.wall.med, res.wall.lo, res.wall.hi,
           ok ? "check ok" : "CHECK FAILED");
    fflush(stdout);
    return ok ? WAY_OK : WAY_CHECK_FAILED;
}

enum Way { A, BG, C, B2, D, E, F, NWAYS };
static Result results[NN][NWAYS];

// The graph's N nodes in order of their index parameter i, and their
// parameters as read (exits where the graph is not the N nodes captured).
static void nodes_by_index(cudaGraph_t g, int n, std::vector<cudaGraphNode_t> &by_i,
                           std::vector<cudaKernelNodeParams> &params)
{
    size_t cnt = n;
    std::vector<cudaGraphNode_t> nodes(n);
    by_i.assign(n, nullptr);
    params.resize(n);
    CK(cudaGraphGetNodes(g, nodes.data(), &cnt));
    if ((int)cnt != n) {
        fprintf(stderr, "device_update_cost: the graph has %zu nodes, not %d\n", cnt, n);
        exit(1);
    }
    for (int k = 0; k < n; k++) {
        cudaKernelNodeParams kp;
        CK(cudaGraphKernelNodeGetParams(nodes[k], &kp));
        int i = kp.kernelParams ? *(int *)kp.kernelParams[2] : k;   // no array: capture order assumed
        if (i < 0 || i >= n || by_i[i]) {
            fprintf(stderr, "device_update_cost: node %d has index %d\n", k, i);
            exit(1);
        }
        by_i[i] = nodes[k];
        params[i] = kp;
    }
}

// Where the device-updatable graphs' handles came from: the launch attribute's
// value after each captured launch (as documented), else the node's attribute
// read after the capture.
static const char *handles_from = "-";

// Captures node_k N times on the stream, every node with the device-updatable
// attribute where du (handles into dev).  Returns the error of the first call
// that failed, the capture ended either way.
static cudaError_t capture(Bench &B, bool du, cudaGraph_t *g, std::vector<cudaGraphDeviceNode_t> *dev)
{
    *g = nullptr;
    cudaError_t e = cudaStreamBeginCapture(B.s, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess)
        return e;
    int missing = 0;
    for (int i = 0; i < B.n && e == cudaSuccess; i++) {
        cudaLaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = cudaLaunchAttributeDeviceUpdatableKernelNode;
        at.val.deviceUpdatableKernelNode.deviceUpdatable = 1;
        at.val.deviceUpdatableKernelNode.devNode = nullptr;
        cudaLaunchConfig_t cf = {};
        cf.gridDim = dim3(1);
        cf.blockDim = dim3(32);
        cf.stream = B.s;
        cf.attrs = du ? &at : nullptr;
        cf.numAttrs = du ? 1 : 0;
        e = cudaLaunchKernelEx(&cf, node_k, B.buf[0], val_of(0, i), i);
        if (e == cudaSuccess && du) {
            (*dev)[i] = at.val.deviceUpdatableKernelNode.devNode;
            missing += !(*dev)[i];
        }
    }
    cudaError_t e2 = cudaStreamEndCapture(B.s, g);
    if (e == cudaSuccess)
        e = e2;
    if (e == cudaSuccess && du) {
        handles_from = "the launch attribute";
        if (missing) {
            // No handle came back in the launch attribute: ask the nodes.
            std::vector<cudaGraphNode_t> by_i;
            std::vector<cudaKernelNodeParams> kp;
            nodes_by_index(*g, B.n, by_i, kp);
            for (int i = 0; i < B.n && e == cudaSuccess; i++) {
                cudaKernelNodeAttrValue v;
                memset(&v, 0, sizeof v);
                e = cudaGraphKernelNodeGetAttribute(by_i[i], cudaLaunchAttributeDeviceUpdatableKernelNode, &v);
                if (e == cudaSuccess && !v.deviceUpdatableKernelNode.devNode)
                    e = cudaErrorNotSupported;   // no handle either way
                if (e == cudaSuccess)
                    (*dev)[i] = v.deviceUpdatableKernelNode.devNode;
            }
            handles_from = "the nodes' attribute after capture";
        }
    }
    if (e != cudaSuccess) {
        if (*g)
            cudaGraphDestroy(*g);
        *g = nullptr;
        cudaGetLastError();
    }
    return e;
}

// The host-side ways for one N: a, b, c.
static void host_ways(Bench &B, int ni)
{
    int n = B.n;
    Result *R = results[ni];
    measure(
        B, "a", "eager launches",
        [&](int r) {
            for (int i = 0; i < n; i++)
                node_k<<<1, 32, 0, B.s>>>(B.ptr_of(r), val_of(r, i), i);
            return cudaGetLastError();
        },
        [](int r) { return r; }, nullptr, R[A]);

    cudaGraph_t g;
    CK(capture(B, false, &g, nullptr));
    cudaGraphExec_t x;
    CK(cudaGraphInstantiate(&x, g, 0));
    CK(cudaGraphUpload(x, B.s));
    CK(cudaStreamSynchronize(B.s));
    measure(
        B, "b", "graph launch, nothing changed",
        [&](int) { return cudaGraphLaunch(x, B.s); }, [](int) { return 0; }, nullptr, R[BG]);

    // The nodes in order of their i, and their parameters read once.
    std::vector<cudaGraphNode_t> by_i;
    std::vector<cudaKernelNodeParams> kept;
    nodes_by_index(g, n, by_i, kept);
    struct Slot {
        float *p;
        float a;
        int i;
        void *args[3];
    };
    std::vector<Slot> slot(n);
    for (int i = 0; i < n; i++) {
        slot[i].i = i;
        slot[i].args[0] = &slot[i].p;
        slot[i].args[1] = &slot[i].a;
        slot[i].args[2] = &slot[i].i;
    }
    measure(
        B, "c", "host set-params x N + graph launch",
        [&](int r) {
            for (int i = 0; i < n; i++) {
                cudaKernelNodeParams kp = kept[i];
                slot[i].p = B.ptr_of(r);
                slot[i].a = val_of(r, i);
                kp.kernelParams = slot[i].args;
                kp.extra = nullptr;
                cudaError_t e = cudaGraphExecKernelNodeSetParams(x, by_i[i], &kp);
                if (e != cudaSuccess)
                    return e;
            }
            return cudaGraphLaunch(x, B.s);
        },
        [](int r) { return r; }, nullptr, R[C]);
    CK(cudaGraphExecDestroy(x));
    CK(cudaGraphDestroy(g));
}

// The device-side ways for one N: b2, d, e, f.  False where one of them gave an
// error (not supported, or failed: said in its row), and then no larger N runs.
static bool device_ways(Bench &B, int ni, size_t psz)
{
    int n = B.n;
    Result *R = results[ni];
    std::vector<cudaGraphDeviceNode_t> dev(n, nullptr);
    cudaGraph_t g;
    cudaGraphExec_t x;
    double t0 = now_us();
    cudaError_t e = capture(B, true, &g, &dev);
    double t1 = now_us();
    if (e != cudaSuccess) {
        printf("N=%-4d device updates not supported: %s (capturing device-updatable nodes)\n", n,
               cudaGetErrorString(e));
        return false;
    }
    e = cudaGraphInstantiate(&x, g, 0);
    double t2 = now_us();
    if (e == cudaSuccess)
        e = cudaGraphUpload(x, B.s);   // before any device-side update: the handles' device copy
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(B.s);
    double t3 = now_us();
    if (e != cudaSuccess) {
        printf("N=%-4d device updates not supported: %s (instantiating or uploading)\n", n, cudaGetErrorString(e));
        cudaGetLastError();
        cudaGraphDestroy(g);
        return false;
    }
    printf("N=%-4d    setup of the device-updatable graph, per node: capture %.2f us, instantiate %.2f us, "
           "upload %.2f us (handles from %s)\n",
           n, (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n, handles_from);

    // Staging: N updates then N values, in pinned host memory and on the device;
    // the same layout in mapped pinned memory for f.
    size_t ubytes = (size_t)n * sizeof(cudaGraphKernelNodeUpdate), total = ubytes + (size_t)n * sizeof(Val);
    char *h = nullptr, *d = nullptr, *m = nullptr, *md = nullptr;
    int *err = nullptr;
    CK(cudaMallocHost((void **)&h, total));
    CK(cudaMalloc((void **)&d, total));
    CK(cudaHostAlloc((void **)&m, total, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&md, m, 0));
    CK(cudaMalloc((void **)&err, sizeof(int)));
    CK(cudaMemset(err, 0, sizeof(int)));
    // Host side of a replay: the N updates (pValue pointing at the value's slot
    // in vbase, device memory) and the N values, written into hbase.
    auto fill = [&](char *hbase, const char *vbase, int r) {
        cudaGraphKernelNodeUpdate *u = (cudaGraphKernelNodeUpdate *)hbase;
        Val *v = (Val *)(hbase + ubytes);
        const Val *dv = (const Val *)(vbase + ubytes);
        float *p = B.ptr_of(r);
        for (int i = 0; i < n; i++) {
            v[i].p = p;
            v[i].a = val_of(r, i);
            v[i].pad = 0;
            u[i].node = dev[i];
            u[i].field = cudaGraphKernelNodeFieldParam;
            u[i].updateData.param.pValue = &dv[i];
            u[i].updateData.param.offset = 0;
            u[i].updateData.param.size = psz;
        }
    };
    auto noerr = [&]() {
        cudaError_t e = cudaMemset(err, 0, sizeof(int));
        return e == cudaSuccess ? cudaDeviceSynchronize() : e;
    };
    auto devcheck = [&]() -> cudaError_t {
        int code = 0;
        cudaError_t e = cudaMemcpy(&code, err, sizeof code, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess)
            return e;
        return (cudaError_t)code;
    };
    int blocks = (n + APPLY_BLOCK - 1) / APPLY_BLOCK;
    auto copied = [&](int r, bool par) {
        fill(h, d, r);
        cudaError_t e = cudaMemcpyAsync(d, h, total, cudaMemcpyHostToDevice, B.s);
        if (e != cudaSuccess)
            return e;
        if (par)
            apply_par<<<blocks, APPLY_BLOCK, 0, B.s>>>((const cudaGraphKernelNodeUpdate *)d, n, err);
        else
            apply_one<<<1, 1, 0, B.s>>>((const cudaGraphKernelNodeUpdate *)d, n, err);
        e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
        return cudaGraphLaunch(x, B.s);
    };
    bool ok = true;
    auto run = [&](const char *tag, const char *what, const std::function<cudaError_t(int)> &issue, bool same,
                   Result &res) {
        CK(noerr());
        if (measure(B, tag, what, issue, same ? +[](int) { return 0; } : +[](int r) { return r; }, devcheck, res) ==
            WAY_ERROR)
            ok = false;
    };
    run("b2", "graph launch, device-updatable, nothing changed", [&](int) { return cudaGraphLaunch(x, B.s); }, true, R[B2]);
    run("d", "device apply, 1 thread: copy+applier+graph", [&](int r) { return copied(r, false); }, false, R[D]);
    run("e", "device apply, thread a node: copy+applier+graph", [&](int r) { return copied(r, true); }, false, R[E]);
    run(
        "f", "device apply, mapped, thread a node: applier+graph",
        [&](int r) {
            fill(m, md, r);
            apply_mapped<<<blocks, APPLY_BLOCK, 0, B.s>>>((const cudaGraphKernelNodeUpdate *)md,
                                                          (const Val *)(md + ubytes), n, err);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess)
                return e;
            return cudaGraphLaunch(x, B.s);
        },
        false, R[F]);
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    CK(cudaFreeHost(m));
    CK(cudaFree(err));
    CK(cudaGraphExecDestroy(x));
    CK(cudaGraphDestroy(g));
    return ok;
}

static void ratio(const Stat &num, const Stat &den)
{
    if (num.ok && den.ok && den.med > 0)
        printf(" %7.2f", num.med / den.med);
    else
        printf(" %7s", "-");
}

int main()
{
    signal(SIGALRM, on_alarm);
    alarm(TIME_LIMIT_S);
    setvbuf(stdout, nullptr, _IOLBF, 0);

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    printf("device_update_cost on %s (sm_%d%d), driver %d, runtime %d: %d replays a row after %d warm-up, "
           "each replay synchronized; us per replay, median (min, max)\n",
           prop.name, prop.major, prop.minor, drv, rt, SAMPLES, WARMUP);
    CK(cudaFree(0));

    // Where a replay's 12 bytes (p and a) go in node_k's parameters.
    size_t off0 = 0, sz0 = 8, off1 = 8, sz1 = 4;
    if (cudaFuncGetParamInfo((const void *)node_k, 0, &off0, &sz0) != cudaSuccess ||
        cudaFuncGetParamInfo((const void *)node_k, 1, &off1, &sz1) != cudaSuccess) {
        cudaGetLastError();
        off0 = 0, sz0 = 8, off1 = 8, sz1 = 4;
        printf("cudaFuncGetParamInfo failed: the usual layout assumed (p at 0, a at 8)\n");
    }
    bool layout = off0 == 0 && sz0 == 8 && off1 == 8 && sz1 == 4;
    if (!layout)
        printf("device updates not supported: node_k's parameters p at %zu (%zu B), a at %zu (%zu B), not 0 and 8\n",
               off0, sz0, off1, sz1);

    bool dev_ok = layout;
    std::vector<Bench> benches(NN);
    for (int ni = 0; ni < NN; ni++) {
        Bench &B = benches[ni];
        B.n = NS[ni];
        CK(cudaStreamCreateWithFlags(&B.s, cudaStreamNonBlocking));
        for (int b = 0; b < 2; b++)
            CK(cudaMalloc(&B.buf[b], B.n * sizeof(float)));
    }
    // Host ways first for every N: a device-side fault, should one come, cannot take them along.
    for (int ni = 0; ni < NN; ni++)
        host_ways(benches[ni], ni);
    for (int ni = 0; ni < NN && dev_ok; ni++)
        dev_ok = device_ways(benches[ni], ni, sz0 + sz1);

    printf("\nc (host set-params x N + graph launch) over each device way, medians: above 1.00 the device way is "
           "cheaper\n");
    printf("%6s %7s %7s %7s %7s %7s %7s   %-26s %s\n", "N", "host", "wall", "host", "wall", "host", "wall",
           "per changed node, host us:", "");
    printf("%6s %7s %7s %7s %7s %7s %7s   %12s %12s\n", "", "c/d", "c/d", "c/e", "c/e", "c/f", "c/f", "(c-b)/N",
           "(d-b2)/N");
    for (int ni = 0; ni < NN; ni++) {
        Result *R = results[ni];
        int n = NS[ni];
        printf("%6d", n);
        for (Way w : {D, E, F}) {
            ratio(R[C].host, R[w].host);
            ratio(R[C].wall, R[w].wall);
        }
        printf("   %12.3f", R[C].host.ok && R[BG].host.ok ? (R[C].host.med - R[BG].host.med) / n : 0.0);
        if (R[D].host.ok && R[B2].host.ok)
            printf(" %12.3f\n", (R[D].host.med - R[B2].host.med) / n);
        else
            printf(" %12s\n", "-");
    }
    for (Bench &B : benches) {
        for (int b = 0; b < 2; b++)
            CK(cudaFree(B.buf[b]));
        CK(cudaStreamDestroy(B.s));
    }
    if (failures) {
        printf("%d check(s) FAILED\n", failures);
        return 1;
    }
    return 0;
}
