// copy_node_probe.cu: what the real driver lets an instantiated graph's
// device-to-device copy and memset nodes change in place
// (cuGraphExecMemcpyNodeSetParams, cuGraphExecMemsetNodeSetParams), and what it
// costs, beside setting a kernel node and issuing the copy eagerly.
//
// The graph is made as graphshim makes it: by capturing cuMemcpyDtoDAsync and
// cuMemsetD32Async on a stream.  Each case moves the node to other memory (a
// new allocation, an offset into one, a pool allocation, managed memory, a
// virtual-memory mapping), or changes its size, value or element size; sets it;
// launches the graph; and checks every byte of the result.  One line per case:
// what the set returned, what the launch returned, and whether the bytes are
// right.  A case runs in a child process: a crash inside the driver must not end
// the probe.
//
//   nvcc -O2 -arch=sm_90 -o copy_node_probe copy_node_probe.cu -lcuda && ./copy_node_probe
#include <cuda.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 4096 /* 4-byte elements */
#define BYTES (N * 4)

#define CK(x)                                                                  \
    do {                                                                       \
        CUresult e_ = (x);                                                     \
        if (e_ != CUDA_SUCCESS) {                                              \
            printf("    %s: error %d\n", #x, (int)e_);                         \
            exit(3);                                                           \
        }                                                                      \
    } while (0)

enum mem { DEV, DEV_OFFSET, POOL, MANAGED, VMM };
static const char *mem_name[] = {"cuMemAlloc", "cuMemAlloc + 256 B", "cuMemAllocAsync", "cuMemAllocManaged", "cuMemMap"};

static CUcontext ctx;
static CUstream st;

static CUdeviceptr alloc(enum mem m)
{
    CUdeviceptr p = 0;
    switch (m) {
    case DEV:
        CK(cuMemAlloc(&p, BYTES));
        break;
    case DEV_OFFSET:
        CK(cuMemAlloc(&p, BYTES + 256));
        p += 256;
        break;
    case POOL:
        CK(cuMemAllocAsync(&p, BYTES, st));
        CK(cuStreamSynchronize(st));
        break;
    case MANAGED:
        CK(cuMemAllocManaged(&p, BYTES, CU_MEM_ATTACH_GLOBAL));
        break;
    case VMM: {
        CUmemAllocationProp prop = {};
        size_t g = 0;
        CUmemGenericAllocationHandle h;
        CUmemAccessDesc a = {};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        size_t sz = (BYTES + g - 1) / g * g;
        CK(cuMemAddressReserve(&p, sz, 0, 0, 0));
        CK(cuMemCreate(&h, sz, &prop, 0));
        CK(cuMemMap(p, sz, 0, h, 0));
        a.location = prop.location;
        a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CK(cuMemSetAccess(p, sz, &a, 1));
        break;
    }
    }
    return p;
}

static void fill(CUdeviceptr p, unsigned v) { CK(cuMemsetD32(p, v, N)); }

/* Do the first n 4-byte words of p hold v, and the rest w? */
static int holds(CUdeviceptr p, size_t n, unsigned v, unsigned w)
{
    static unsigned h[N];
    CK(cuMemcpyDtoH(h, p, BYTES));
    for (size_t i = 0; i < N; i++)
        if (h[i] != (i < n ? v : w))
            return 0;
    return 1;
}

/* A graph of one op captured on st: a D2D copy (set == 0) or a memset. */
static CUgraphExec capture_one(int set, CUdeviceptr dst, CUdeviceptr src, CUgraphNode *node)
{
    CUgraph g;
    CUgraphExec x;
    size_t n = 1;
    CK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_RELAXED));
    if (set)
        CK(cuMemsetD32Async(dst, 7, N, st));
    else
        CK(cuMemcpyDtoDAsync(dst, src, BYTES, st));
    CK(cuStreamEndCapture(st, &g));
    CK(cuGraphGetNodes(g, node, &n));
    CK(cuGraphInstantiate(&x, g, 0));
    return x;
}

/* The copy cases: move dst and src to memory of kind to (from memory of kind
** from), or change the size to bytes. */
static void copy_case(enum mem from, enum mem to, size_t bytes)
{
    CUgraphNode node;
    CUDA_MEMCPY3D p;
    CUdeviceptr d0 = alloc(from), s0 = alloc(from), d1 = alloc(to), s1 = alloc(to);
    fill(d0, 0), fill(s0, 1), fill(d1, 0), fill(s1, 2);
    CUgraphExec x = capture_one(0, d0, s0, &node);
    CK(cuGraphMemcpyNodeGetParams(node, &p));
    p.srcDevice = s1, p.dstDevice = d1, p.WidthInBytes = bytes;
    CUresult rs = cuGraphExecMemcpyNodeSetParams(x, node, &p, ctx);
    CUresult rl = cuGraphLaunch(x, st);
    CUresult rq = cuStreamSynchronize(st);
    int ok = rs == CUDA_SUCCESS ? holds(d1, bytes / 4, 2, 0) && holds(d0, 0, 0, 0)
                                : holds(d0, N, 1, 1) && holds(d1, 0, 0, 0);
    printf("copy   %-18s -> %-18s %5zu B: set %3d, launch %d, sync %d, bytes %s\n", mem_name[from], mem_name[to],
           bytes, rs, rl, rq, ok ? "right" : "WRONG");
}

static void set_case(enum mem from, enum mem to, unsigned value, unsigned elem, size_t n)
{
    CUgraphNode node;
    CUDA_MEMSET_NODE_PARAMS p;
    CUdeviceptr d0 = alloc(from), d1 = alloc(to);
    fill(d0, 0), fill(d1, 0);
    CUgraphExec x = capture_one(1, d0, 0, &node);
    CK(cuGraphMemsetNodeGetParams(node, &p));
    p.dst = d1, p.value = value, p.elementSize = elem, p.width = n;
    CUresult rs = cuGraphExecMemsetNodeSetParams(x, node, &p, ctx);
    CUresult rl = cuGraphLaunch(x, st);
    CUresult rq = cuStreamSynchronize(st);
    unsigned word = elem == 4 ? value : elem == 2 ? (value & 0xffff) * 0x10001u : (value & 0xff) * 0x1010101u;
    int ok = rs == CUDA_SUCCESS ? holds(d1, n * elem / 4, word, 0) && holds(d0, 0, 0, 0)
                                : holds(d0, N, 7, 7) && holds(d1, 0, 0, 0);
    printf("memset %-18s -> %-18s value %u, %u-byte x %5zu: set %3d, launch %d, sync %d, bytes %s\n", mem_name[from],
           mem_name[to], value, elem, n, rs, rl, rq, ok ? "right" : "WRONG");
}

static void child(void (*f)(int), int arg)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        CUdevice dev;
        CK(cuInit(0));
        CK(cuDeviceGet(&dev, 0));
        CK(cuDevicePrimaryCtxRetain(&ctx, dev));
        CK(cuCtxSetCurrent(ctx));
        CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
        f(arg);
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        printf("    case %d: killed by signal %d\n", arg, WTERMSIG(status));
    else if (WEXITSTATUS(status))
        printf("    case %d: exit %d\n", arg, WEXITSTATUS(status));
}

static void copy_cases(int i)
{
    static const struct {
        enum mem from, to;
        size_t bytes;
    } c[] = {{DEV, DEV, BYTES},        {DEV, DEV_OFFSET, BYTES}, {DEV, POOL, BYTES},     {DEV, MANAGED, BYTES},
             {DEV, VMM, BYTES},        {POOL, DEV, BYTES},       {POOL, POOL, BYTES},    {MANAGED, DEV, BYTES},
             {MANAGED, MANAGED, BYTES}, {VMM, DEV, BYTES},       {VMM, VMM, BYTES},      {DEV, DEV, BYTES / 2},
             {DEV, DEV, 4}};
    copy_case(c[i].from, c[i].to, c[i].bytes);
}
#define NCOPY 13

static void set_cases(int i)
{
    static const struct {
        enum mem from, to;
        unsigned value, elem;
        size_t n;
    } c[] = {{DEV, DEV, 7, 4, N},         {DEV, DEV, 9, 4, N},     {DEV, DEV_OFFSET, 9, 4, N}, {DEV, POOL, 9, 4, N},
             {DEV, MANAGED, 9, 4, N},     {DEV, VMM, 9, 4, N},     {POOL, DEV, 9, 4, N},       {MANAGED, DEV, 9, 4, N},
             {DEV, DEV, 9, 4, N / 2},     {DEV, DEV, 0x35, 1, N * 4}, {DEV, DEV, 0x1234, 2, N * 2}};
    set_case(c[i].from, c[i].to, c[i].value, c[i].elem, c[i].n);
}
#define NSET 11

static double now_us()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Host cost: 100 copies (or memsets) captured in one graph; each rep sets all
** 100 nodes to the other of two buffer sets, then launches.  Beside: issuing the
** 100 eagerly.  Microseconds per node, median of 9. */
static void costs(int)
{
    enum { K = 100, R = 9 };
    CUdeviceptr a[K], b[K];
    CUgraph g;
    CUgraphExec x[2];
    CUgraphNode nodes[2][K];
    double t[3][R];
    for (int i = 0; i < K; i++)
        a[i] = alloc(DEV), b[i] = alloc(DEV);
    for (int set = 0; set < 2; set++) {
        size_t n = K;
        CK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_RELAXED));
        for (int i = 0; i < K; i++)
            if (set)
                CK(cuMemsetD32Async(a[i], i, N, st));
            else
                CK(cuMemcpyDtoDAsync(a[i], b[i], BYTES, st));
        CK(cuStreamEndCapture(st, &g));
        CK(cuGraphGetNodes(g, nodes[set], &n));
        CK(cuGraphInstantiate(&x[set], g, 0));
    }
    for (int r = 0; r < R; r++) {
        CK(cuStreamSynchronize(st));
        double t0 = now_us();
        for (int i = 0; i < K; i++)
            CK(cuMemcpyDtoDAsync(r & 1 ? a[i] : b[i], r & 1 ? b[i] : a[i], BYTES, st));
        t[0][r] = (now_us() - t0) / K;
        CK(cuStreamSynchronize(st));
        t0 = now_us();
        for (int i = 0; i < K; i++) {
            CUDA_MEMCPY3D p;
            CK(cuGraphMemcpyNodeGetParams(nodes[0][i], &p));
            p.dstDevice = r & 1 ? a[i] : b[i], p.srcDevice = r & 1 ? b[i] : a[i];
            CK(cuGraphExecMemcpyNodeSetParams(x[0], nodes[0][i], &p, ctx));
        }
        t[1][r] = (now_us() - t0) / K;
        CK(cuGraphLaunch(x[0], st));
        CK(cuStreamSynchronize(st));
        t0 = now_us();
        for (int i = 0; i < K; i++) {
            CUDA_MEMSET_NODE_PARAMS p;
            CK(cuGraphMemsetNodeGetParams(nodes[1][i], &p));
            p.dst = r & 1 ? a[i] : b[i];
            CK(cuGraphExecMemsetNodeSetParams(x[1], nodes[1][i], &p, ctx));
        }
        t[2][r] = (now_us() - t0) / K;
        CK(cuGraphLaunch(x[1], st));
        CK(cuStreamSynchronize(st));
    }
    const char *what[3] = {"eager cuMemcpyDtoDAsync (per copy)", "exec memcpy node set-params (per node)",
                           "exec memset node set-params (per node)"};
    for (int k = 0; k < 3; k++) {
        double *v = t[k];
        for (int i = 0; i < R; i++)
            for (int j = i + 1; j < R; j++)
                if (v[j] < v[i]) {
                    double tmp = v[i];
                    v[i] = v[j], v[j] = tmp;
                }
        printf("cost   %-44s %6.2f us (min %.2f, max %.2f)\n", what[k], v[R / 2], v[0], v[R - 1]);
    }
}

int main()
{
    for (int i = 0; i < NCOPY; i++)
        child(copy_cases, i);
    for (int i = 0; i < NSET; i++)
        child(set_cases, i);
    child(costs, 0);
    return 0;
}
