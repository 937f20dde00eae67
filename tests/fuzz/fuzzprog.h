/*
** fuzzprog.h: what the parts of the fuzz program share (tests/fuzz/README.md):
** its limits, random numbers and digests, the body's ops, a thread's state, the
** entry points it calls, and the functions of its other files.
**
**   fuzzprog.c   entry points, kernels, threads and main
**   fuzz_gen.c   generating a thread's body
**   fuzz_ops.c   running it
**   fuzz_sched.c a deterministic interleaving of the threads (FUZZ_SCHEDULE)
**   fuzz_loop.c  the loop and step programs (fuzzprog loop|steps SEED)
**   fuzz_period.c the period programs (fuzzprog periods SEED)
**   fuzz_xops.c  the entry points of the extra ops: synchronous copies and
**                memsets, the generic copy, callbacks, stream-ordered
**                allocations, the program's own graphs, attributes, streams
**                destroyed and created, context references
*/
#ifndef GS_FUZZPROG_H
#define GS_FUZZPROG_H

#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <sys/mman.h>
#include <cuda.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"

#define MAX_THREADS 8
#define NDEV 6           /* device buffers per thread */
#define NKS 4            /* kernel slots per thread, each with a global */
#define NPIN 2           /* pinned buffers per thread */
#define NRES (NDEV + NKS + NPIN)
#define RES_GLOB(k) (NDEV + (k))
#define RES_PIN(p) (NDEV + NKS + (p))
#define BUF_BYTES 4096   /* every buffer; globals use their first 8 bytes */
#define MAX_CREATED 4    /* created streams per thread */
#define NSTREAMS (MAX_CREATED + 2)
#define MAX_EVENTS 48
#define MAX_OPS 256
#define MAX_PARAMS 96      /* a kernel's parameters (64 at most but in wide kernels) */
#define PARAM_BYTES_MAX 32764
#define MAX_KDEFS 128    /* kernel definitions of the whole program */
#ifndef MAX_RELOADS
#define MAX_RELOADS 6    /* module reloads per thread */
#endif
/* --- Random numbers and digests ------------------------------------------ */

static inline uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A number in [0, n). */
static inline unsigned rnd(uint64_t *s, unsigned n)
{
    return n ? (unsigned)(splitmix(s) % n) : 0;
}

/* True with probability pct percent. */
static inline int chance(uint64_t *s, unsigned pct)
{
    return rnd(s, 100) < pct;
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

static inline uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
/* --- Per-thread state ------------------------------------------------------ */

struct kdesc;

/* What one launch, copy, memset or boundary of the body does. */
enum op_kind {
    OP_LAUNCH, OP_H2D, OP_D2H, OP_D2D, OP_MEMSET, OP_HANDOFF, OP_HOSTFN, OP_SSYNC,
    OP_CSYNC, OP_ESYNC, OP_SQUERY, OP_OBSERVE, OP_REALLOC, OP_SCRATCH, OP_BAD,
    OP_PINREALLOC, OP_PAGEREALLOC,  /* threads with memory ops only */
    OP_EQUERY, OP_SSPIN, OP_NCCL,   /* threads with event ops only */
    /* threads with extra ops only (fuzz_xops.c) */
    OP_SYNCMEM, OP_GENCOPY, OP_CALLBACK, OP_ASYNCALLOC, OP_OWNGRAPH, OP_ATTR, OP_RENEW, OP_CTXREF, OP_ALLOCKIND, OP_CTX2, OP_READBACK, OP_WRITEVALUE, OP_VMM,
    OP_HUGE, OP_H2H, OP_CAPERR, OP_PAUSE,
    OP_XFIRST = OP_SYNCMEM
};

/* How a pinned slot's memory was allocated (memory ops change it). */
enum pin_kind { PIN_ALLOCHOST, PIN_HOSTALLOC, PIN_REGISTERED, PIN_PAGEABLE };

struct op {
    enum op_kind kind;
    int s;              /* stream index (see struct thr.streams) */
    int pt;             /* call the _ptsz variant */
    int zero;           /* pass stream 0 for a default stream */
    /* launches */
    int ks, how, nattr, attr_kind[4], every_iter;
    unsigned grid[3], block[3], shmem;
    uint64_t argseed;
    int out_r, out_off, in_r, in_off, alt_off;
    /* copies and memsets (pageable: host side is a pageable buffer) */
    int src_r, dst_r, soff, doff, n, pageable, width;
    unsigned value;
    /* handoffs: from stream s to stream s2 through event ev; event queries:
    ** ev recorded on s2 (s itself, or the legacy stream after the blocking
    ** stream s), how 1: with cuEventRecordWithFlags */
    int s2, ev;
    uint32_t owned;     /* resources owned by s here (observations, host functions) */
    /* an inner loop: this op and the loop_len - 1 after it run loop_reps times
    ** back to back (as a loop body inside one segment) */
    int loop_len, loop_reps;
};

struct thr {
    int tid;
    uint64_t gen, var;            /* generation and variation random states */
    FILE *out;
    char *text;
    size_t text_len;
    int it, pos;                  /* where the run is: iteration, op index */
    uint64_t rcdig;               /* digest of every driver call's return code */
    unsigned long ncalls;
    int ncreated;
    CUstream streams[NSTREAMS];   /* created ones, then legacy, then per-thread */
    CUevent events[MAX_EVENTS];
    int nevents;
    _Atomic uintptr_t base[NRES]; /* device address of each resource */
    unsigned char *pin[NPIN];
    int pin_kind[NPIN];           /* enum pin_kind */
    unsigned char *page[2];       /* pageable buffers */
    int page_mmap[2];             /* page[i] from mmap (else malloc) */
    size_t page_size[2];
    int memops;                   /* frees and reallocations of every kind, large parameters */
    int evops;                    /* event and stream query spins, kernels writing pinned memory, collectives */
    int xops;                     /* the extra ops of fuzz_xops.c, copies in inner loops */
    int rep;                      /* the repetition of an inner loop being run (0 outside) */
    CUcontext ctx2;               /* a second context of the thread's (extra ops), or NULL */
    CUdeviceptr ctx2_buf;         /* a buffer of the second context's */
    CUdeviceptr scratch_dev;      /* device memory no stream's work touches (extra ops) */
    int rotate;                   /* 0, or launches write their output at one of two offsets in
                                  ** turn, period 2 or 3 iterations (buffers in rotation) */
    int focus;                    /* nearly every op on the main stream, which owns everything:
                                  ** long segments, few handoffs (threads with extra ops) */
    unsigned sflags[MAX_CREATED]; /* flags of the created streams */
    CUmodule nccl_mod;
    CUfunction nccl;              /* the collective (evops) */
    _Atomic uint64_t hostdig[NSTREAMS];
    atomic_int bad_ptr;           /* a kernel met a pointer into no buffer of ours */
    struct kdesc *kd[NKS];        /* current definition of each kernel slot */
    int lib[NKS];                 /* slot is a library (CUkernel), not a module */
    CUmodule mod[NKS];
    CUlibrary libh[NKS];
    CUfunction fn[NKS];
    int version[NKS], nreloads;
    struct op body[MAX_OPS];
    int nbody, iters;
    int use_proc;                 /* entry points from cuGetProcAddress */
    int main_stream;              /* the stream most ops go to */
    int site;                     /* the frames its stream synchronizes come from (fuzz_sync_via), or 0 */
};


/* One kernel definition: a layout and which of its 8-byte parameters are the
** output and input pointers (-1: none; without an output pointer the kernel
** updates its slot's global, as a kernel may update a __device__ variable). */
struct kdesc {
    struct thr *t;
    int slot, n, out_idx, in_idx;
    size_t sizes[MAX_PARAMS + 1], offs[MAX_PARAMS], total;
    uint64_t k, salt;
};

/* Generation state: which stream owns each resource at this point of the body. */
struct gen {
    int owner[NRES], init_owner[NRES];
};


static inline int nstreams_used(const struct thr *t)
{
    return t->ncreated + 2;
}

static inline int stream_legacy(const struct thr *t) { return t->ncreated; }
static inline int stream_pt(const struct thr *t) { return t->ncreated + 1; }
/* Does stream s synchronize with the legacy stream (a created one without
** CU_STREAM_NON_BLOCKING, or the per-thread stream)? */
static inline int blocking(const struct thr *t, int s)
{
    return s == stream_pt(t) || (s < t->ncreated && !(t->sflags[s] & CU_STREAM_NON_BLOCKING));
}

/* The collective: a kernel under NCCL's mangled name (fuzzprog.c). */
#define NCCL_NAME "_Z24ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE"
#define NCCL_ARGS 4096

/* --- Entry points ---------------------------------------------------------- */

/* The stream-ordered entry points, in their legacy and _ptsz forms, taken
** directly or through cuGetProcAddress as a runtime would. */
struct api {
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*MemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
    CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*StreamQuery)(CUstream);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventRecordWithFlags)(CUevent, CUstream, unsigned);
    CUresult (*LaunchHostFunc)(CUstream, CUhostFn, void *);
    /* extra ops: the generic copy, callbacks, stream-ordered memory, the
    ** program's own graphs, and the synchronous copies and memsets (_ptds) */
    CUresult (*MemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*StreamAddCallback)(CUstream, CUstreamCallback, void *, unsigned);
    CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
    CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
    CUresult (*MemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*StreamWriteValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);   /* not in hooks.def */
    CUresult (*StreamBeginCapture)(CUstream, CUstreamCaptureMode);
    CUresult (*StreamEndCapture)(CUstream, CUgraph *);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*Memcpy)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*MemsetD16)(CUdeviceptr, unsigned short, size_t);
    CUresult (*MemsetD32)(CUdeviceptr, unsigned, size_t);
};

extern CUcontext g_ctx;
extern int g_nthreads;

/* fuzzprog.c */
const struct api *api(const struct thr *t, int pt);
CUresult note(struct thr *t, CUresult rc, int line);
#define RC(call) note(t, (call), __LINE__)
int kernel_new(struct thr *t, int ks);

/* fuzz_gen.c */
void gen_body(struct thr *t);
struct op *op_add(struct thr *t, enum op_kind kind, int s);
/* Makes stream s the owner of resource r, through a handoff if needed. */
void need(struct thr *t, struct gen *g, int s, int r);
/* A resource in [lo, hi), mostly one that stream s owns already. */
int pick(struct thr *t, const struct gen *g, int s, int lo, int hi);
uint32_t owned_by(const struct gen *g, int s);
/* The size and offsets of a copy. */
void copy_extent(struct thr *t, struct op *o);
void memset_extent(struct thr *t, struct op *o);

/* fuzz_sched.c: a deterministic interleaving of the threads (FUZZ_SCHEDULE) */
/* fuzz_end.c: how the program ends (FUZZ_END) */
void fuzz_end_begin(uint64_t seed);
int fuzz_end_finish(void);

void sched_init(int threads);
void sched_enter(const struct thr *t);
void sched_turn(const struct thr *t);
void sched_leave(const struct thr *t);

/* fuzz_sites.c: the frames and names graphshim's bail sites see */
void fuzz_sites_begin(uint64_t seed, char **argv);
void fuzz_kernel_name(char *name, size_t len, const char *plain, uint64_t salt);
CUresult fuzz_sync_via(int how, CUresult (*fn)(CUstream), CUstream s);

/* fuzz_xops.c */
void gen_xop(struct thr *t, struct gen *g, int s);
void ctx2_make(struct thr *t);
void ctx2_final(struct thr *t);
void run_xop(struct thr *t, const struct op *o, const struct api *a, CUstream s);

/* fuzz_ops.c */
/* Argument of a host function: the thread, a stream and what it may read. */
struct hostarg {
    struct thr *t;
    int s;
    uint32_t owned;
    uint64_t tag;
};
CUstream sh(const struct thr *t, const struct op *o, int s);
struct hostarg *host_arg(struct thr *t, const struct op *o);
void host_fn(void *p);
void observe_host(struct thr *t, int s, uint32_t owned, const char *what);
void fill_page(struct thr *t, int i, uint64_t seed);
CUresult ready(CUresult rc);
void run_loop(struct thr *t);
/* The device address of resource r at offset off (pinned memory as mapped). */
CUdeviceptr dptr(struct thr *t, int r, int off);

#endif
