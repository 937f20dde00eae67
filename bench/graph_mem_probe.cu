// graph_mem_probe.cu: what the real driver does when an instantiated graph's
// copy or memset node outlives the memory it was built on.
//
// Each case runs in a child process (a crash inside the driver must not end the
// probe): it builds a graph by stream capture, frees (or unregisters) the memory
// one node touches, optionally allocates again (often at the same address), and
// launches the executable.  It prints what the launch returned, whether the data
// came out right, or the signal that killed the child.  A last variant sets the
// node's parameters again on the executable before the launch (does that re-bind
// the memory?).
//
//   nvcc -O2 -arch=sm_90 -o graph_mem_probe graph_mem_probe.cu && ./graph_mem_probe
#include <cuda.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 20)

__global__ void add1(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

#define CK(x)                                                                       \
    do {                                                                            \
        cudaError_t e_ = (x);                                                       \
        if (e_ != cudaSuccess) {                                                    \
            printf("    %s: %s\n", #x, cudaGetErrorString(e_));                     \
            exit(3);                                                                \
        }                                                                           \
    } while (0)

enum realloc_kind { NONE, SAME_PINNED, PAGEABLE_MMAP, OTHER_SIZE_PINNED };
enum copy_kind { H2D_PINNED, D2H_PINNED, H2D_REGISTERED, D2D, MEMSET, H2D_DEVFREE, KERNEL_ONLY };

static const char *copy_name[] = {"H2D from pinned", "D2H into pinned", "H2D from registered", "D2D",
                                  "memset", "H2D from pinned, device side freed", "kernel only"};
static const char *realloc_name[] = {"freed", "freed, pinned again (same size)", "freed, pageable mmap there",
                                     "freed, pinned again (other size)"};

// One case: returns in the child's exit status; prints its own line.
static void run_case(copy_kind ck, realloc_kind rk, int reset_node)
{
    cudaStream_t s;
    int *d, *d2;
    void *h = NULL;
    size_t bytes = N * sizeof(int);
    CK(cudaFree(0));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d, bytes));
    CK(cudaMalloc(&d2, bytes));
    CK(cudaMemset(d, 0, bytes));
    if (ck == H2D_REGISTERED) {
        h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CK(cudaHostRegister(h, bytes, 0));
    } else {
        CK(cudaMallocHost(&h, bytes));
    }
    for (int i = 0; i < N; i++)
        ((int *)h)[i] = i;

    cudaGraph_t g;
    cudaGraphExec_t x;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    switch (ck) {
    case H2D_PINNED:
    case H2D_REGISTERED: CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s)); break;
    case H2D_DEVFREE: CK(cudaMemcpyAsync(d2, h, bytes, cudaMemcpyHostToDevice, s)); break;
    case D2H_PINNED: CK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s)); break;
    case D2D: CK(cudaMemcpyAsync(d, d2, bytes, cudaMemcpyDeviceToDevice, s)); break;
    case MEMSET: CK(cudaMemsetAsync(d2, 7, bytes, s)); break;
    case KERNEL_ONLY: break;
    }
    add1<<<N / 256, 256, 0, s>>>(ck == MEMSET || ck == D2D || ck == H2D_DEVFREE ? d2 : d, N);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&x, g, 0));
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));

    // Free what the copy or memset node touches.
    void *old = h;
    if (ck == D2D || ck == MEMSET || ck == H2D_DEVFREE) {
        old = d2;
        CK(cudaFree(d2));
    } else if (ck == H2D_REGISTERED) {
        CK(cudaHostUnregister(h));
        munmap(h, bytes);
    } else {
        CK(cudaFreeHost(h));
    }
    void *again = NULL;
    if (ck == D2D || ck == MEMSET || ck == H2D_DEVFREE) {
        if (rk != NONE)
            CK(cudaMalloc(&again, rk == OTHER_SIZE_PINNED ? bytes / 2 : bytes));
    } else if (rk == SAME_PINNED || rk == OTHER_SIZE_PINNED) {
        if (ck == H2D_REGISTERED) {
            again = mmap(old, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            CK(cudaHostRegister(again, rk == OTHER_SIZE_PINNED ? bytes / 2 : bytes, 0));
        } else {
            CK(cudaMallocHost(&again, rk == OTHER_SIZE_PINNED ? bytes / 2 : bytes));
        }
    } else if (rk == PAGEABLE_MMAP) {
        again = mmap(old, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (again != MAP_FAILED)
            memset(again, 0, bytes);
    }
    if (again && again != MAP_FAILED && (ck == H2D_PINNED || ck == H2D_REGISTERED || ck == D2H_PINNED)) {
        for (int i = 0; i < N / 2; i++)
            ((int *)again)[i] = 2 * i;
    }
    if (reset_node) {
        size_t n = 0;
        CK(cudaGraphGetNodes(g, NULL, &n));
        cudaGraphNode_t *nodes = (cudaGraphNode_t *)calloc(n, sizeof *nodes);
        CK(cudaGraphGetNodes(g, nodes, &n));
        for (size_t i = 0; i < n; i++) {
            cudaGraphNodeType t;
            CK(cudaGraphNodeGetType(nodes[i], &t));
            if (t == cudaGraphNodeTypeMemcpy) {
                cudaMemcpy3DParms p;
                CK(cudaGraphMemcpyNodeGetParams(nodes[i], &p));
                printf("    exec memcpy node set-params: %s\n",
                       cudaGetErrorString(cudaGraphExecMemcpyNodeSetParams(x, nodes[i], &p)));
            } else if (t == cudaGraphNodeTypeMemset) {
                cudaMemsetParams p;
                CK(cudaGraphMemsetNodeGetParams(nodes[i], &p));
                printf("    exec memset node set-params: %s\n",
                       cudaGetErrorString(cudaGraphExecMemsetNodeSetParams(x, nodes[i], &p)));
            }
        }
    }
    printf("    new allocation %s the old address\n", again == old ? "at" : "not at");
    fflush(stdout);
    cudaError_t e = cudaGraphLaunch(x, s);
    cudaError_t e2 = cudaStreamSynchronize(s);
    printf("    launch: %s, synchronize: %s\n", cudaGetErrorString(e), cudaGetErrorString(e2));
    fflush(stdout);
    exit(0);
}

int main(void)
{
    for (int ck = H2D_PINNED; ck <= KERNEL_ONLY; ck++)
        for (int rk = NONE; rk <= OTHER_SIZE_PINNED; rk++)
            for (int reset = 0; reset < 2; reset++) {
                if (reset && (ck == KERNEL_ONLY || rk == NONE))
                    continue;
                if ((ck == D2D || ck == MEMSET || ck == H2D_DEVFREE || ck == KERNEL_ONLY) && rk == PAGEABLE_MMAP)
                    continue;
                printf("%s, %s%s:\n", copy_name[ck], realloc_name[rk], reset ? ", node set again" : "");
                fflush(stdout);
                pid_t p = fork();
                if (p == 0) {
                    alarm(20);
                    run_case((copy_kind)ck, (realloc_kind)rk, reset);
                }
                int st = 0;
                waitpid(p, &st, 0);
                if (WIFSIGNALED(st))
                    printf("    KILLED by signal %d (%s)\n", WTERMSIG(st), strsignal(WTERMSIG(st)));
                else if (WEXITSTATUS(st))
                    printf("    exit %d\n", WEXITSTATUS(st));
            }
    return 0;
}
