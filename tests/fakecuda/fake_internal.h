/* Internal declarations shared by the files of the CUDA driver fake.
 * Nothing here is exported; exported ABI entry points live in fake_exports.c
 * and only call the internal functions declared here. */
#ifndef FAKE_INTERNAL_H
#define FAKE_INTERNAL_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fakecuda.h"

#define FAKE_DRIVER_VERSION_DEFAULT 13000
#define POISON_BYTE 0xDB

/* ---- handle registry ---------------------------------------------------- */
enum kind { K_NONE, K_CTX, K_STREAM, K_EVENT, K_MODULE, K_LIBRARY, K_FUNC,
            K_KERNEL, K_GRAPH, K_NODE, K_EXEC, K_COUNT };

struct hdr { uint32_t kind; uint32_t id; };

void reg_add(void *obj, int kind);          /* assigns hdr.kind and a sequential id */
void reg_del(void *obj);
void *reg_get(const void *p, int kind);     /* live object of that kind, or NULL */
/* Calls fn on every live object of that kind (fn may reg_del it).  Called locked. */
void reg_each(int kind, void (*fn)(void *obj, void *arg), void *arg);
struct ctx;
/* cuDevicePrimaryCtxReset: the modules (fake_kernel.c) and executables
** (fake_graph.c) of context c go.  Called locked. */
void modules_reset(struct ctx *c);
void execs_reset(struct ctx *c);

extern pthread_mutex_t g_lock;              /* recursive */
#define LOCK() pthread_mutex_lock(&g_lock)
#define UNLOCK() pthread_mutex_unlock(&g_lock)

/* ---- global / thread state ---------------------------------------------- */
int fake_driver_version(void);
long fake_graph_launch_us(void); /* FAKECUDA_GRAPH_LAUNCH_US: host time a graph launch takes */
void fake_gpu_kernel(void);       /* FAKECUDA_KERNEL_US: a kernel keeps the GPU busy that long */
void fake_spend_us(long us);      /* host time a call takes (the FAKECUDA_*_US knobs); none if us <= 0 */
void fake_once(void);                       /* reads env, maps arenas */
/* What the driver ran, for fakecuda_count (fake_exports.c): an op of type
** (kernel, copy, memset) enqueued, into a capture or to run; a graph launched
** to run, and its nodes; an executable made or destroyed. */
struct graph;
void fake_count_op(int type, bool captured);
void fake_count_graph(const struct graph *g);
void fake_count_exec(int delta);
CUresult api_enter(bool need_ctx);          /* init / callback / context / sticky checks */
extern __thread int t_in_callback;

struct stream;
struct ctx { struct hdr h; int primary; int refcount; unsigned flags; struct stream *legacy; };
struct ctx *cur_ctx(void);

/* ---- memory -------------------------------------------------------------- */
/* size: rounded, req: requested; pool: made by cuMemAllocAsync (stream-ordered);
** vmm: a reservation of cuMemAddressReserve, addresses without memory (fake_vmm.c) */
struct block { uintptr_t addr; size_t size, req; int graph_owned, pool, vmm; uint64_t serial; };
struct arena {
    const char *name;
    char *base; size_t size, used;
    struct block *b; size_t n, cap;
};
extern struct arena g_dev, g_host;
struct block *arena_find(struct arena *a, uintptr_t p);
bool in_arena(const struct arena *a, uintptr_t p);
bool dev_range_ok(uintptr_t p, size_t n);   /* live device allocation or pinned host range */
bool pinned_find(uintptr_t p, uintptr_t *start, size_t *size, int *registered);
/* The allocation (device, pinned or registered host) holding p: its serial
** number, unique for the life of the process, or 0 where there is none. */
uint64_t alloc_serial(uintptr_t p);
/* Whether p lies in a live device allocation made by cuMemAllocAsync. */
bool alloc_pool(uintptr_t p);
/* Whether p lies in a reservation of cuMemAddressReserve (fake_vmm.c). */
bool alloc_vmm(uintptr_t p);
CUresult mem_alloc_raw(CUdeviceptr *dptr, size_t size, int graph_owned, int pool);
CUresult mem_free_raw(CUdeviceptr p);
/* Virtual memory management (fake_vmm.c): a reservation made and freed (called
** locked for the free), a range valid inside one accessible mapping, the
** mapping's serial number and extent.  Called locked. */
CUresult vmm_reserve(CUdeviceptr *ptr, size_t size, size_t align);
CUresult vmm_unreserve(CUdeviceptr ptr);
uint64_t vmm_next_serial(void);
bool vmm_range_ok(uintptr_t p, size_t n);
uint64_t vmm_serial(uintptr_t p);
bool vmm_mapping(uintptr_t p, uintptr_t *start, size_t *size);
/* Device memory an executable of that many nodes takes (FAKECUDA_EXEC_KB KiB,
** and 1 KiB a node); taking it fails (-1) where the device has no such room. */
size_t exec_mem_size(size_t nodes);
int exec_mem_take(size_t n);
void exec_mem_give(size_t n);
/* The device memory the first instantiation takes and never gives back
** (FAKECUDA_GRAPH_KB); 0, or -1 where it finds no room. */
int graph_mem_take(void);

/* ---- kernels -------------------------------------------------------------- */
struct kdef {
    char *name;
    unsigned long captured;   /* launches of it captured into graphs (fakecuda_captured) */
    fakecuda_kernel_fn fn;
    size_t n, total;
    size_t *sizes, *offs;
};
struct func {    /* CUfunction */
    struct hdr h;
    struct kdef *kd;
    struct ctx *ctx;       /* of its module; NULL: from a library's CUkernel */
    int max_dyn_smem;
    int carveout;          /* PREFERRED_SHARED_MEMORY_CARVEOUT, -1 until set */
    int cluster[5];        /* the settable cluster attributes, 0 until set */
    struct kernel *from_kernel;
};
struct kernel {  /* CUkernel */
    struct hdr h;
    struct kdef *kd;
    struct func *fn;          /* created by cuKernelGetFunction */
    int max_dyn_smem;
};
/* Accepts a CUfunction or a CUkernel cast to CUfunction. */
struct kdef *launchable_kdef(CUfunction f, int *max_dyn_smem);

/* ---- graphs ------------------------------------------------------------- */
struct graph;
struct event;
struct knode {
    struct kdef *kd;
    CUfunction handle;        /* as given (may be a CUkernel cast) */
    unsigned grid[3], block[3], shmem;
    unsigned char *buf;       /* packed parameter bytes (kd->total) */
    void **ptrs;              /* ptrs[i] = buf + offs[i] */
};
struct node {
    struct hdr h;
    struct graph *g;
    CUgraphNodeType type;
    struct node **deps; size_t ndeps;
    size_t idx;
    struct node *orig, *upd;  /* exec copies: the graph node(s) this one stands for */
    /* An executable's copy node with a host side: the allocations (serials) of
    ** its source and destination when it was made, 0 for none.  It faults once
    ** either was freed, even where another came back at the same address. */
    uint64_t bound[2]; int binds;
    /* An executable's copy node: whether its source and destination were pool
    ** memory (cuMemAllocAsync, 1) or cuMemMap memory (2) when it was made; a
    ** set may not change that. */
    int pool[2];
    union {
        struct knode k;
        CUDA_MEMCPY3D cp;
        CUDA_MEMSET_NODE_PARAMS ms;
        CUDA_HOST_NODE_PARAMS host;
        struct event *ev;
        struct { CUdeviceptr p; size_t size; } ma;
        CUdeviceptr mf;
        struct graph *child;
    } u;
};
struct graph {
    struct hdr h;
    struct node **nodes; size_t n, cap;
    int registered;
    uint64_t launch_seq;  /* an executable's: its last queued launch (FAKECUDA_PENDING) */
};
struct exec {
    struct hdr h;
    struct graph *g;          /* private deep copy */
    struct ctx *ctx;          /* current at instantiation: it runs only there */
    unsigned long long flags;
    size_t mem;               /* device memory it takes (exec_mem_take) */
};

struct graph *graph_new(int registered);
void graph_free(struct graph *g);
struct node *graph_append(struct graph *g, const struct node *tmpl,
                          struct node *const *deps, size_t ndeps);
struct graph *graph_clone(const struct graph *src, int keep_orig);
void node_payload_free(struct node *n);
CUresult node_payload_copy(struct node *dst, const struct node *src);
CUresult node_run(struct node *n);
CUresult graph_run(struct graph *g);
CUresult knode_build(struct knode *k, CUfunction f, const unsigned grid[3],
                     const unsigned block[3], unsigned shmem,
                     void **kernelParams, void **extra);

/* ---- streams / events / capture ----------------------------------------- */
enum { S_NORMAL = 0, S_LEGACY = 1, S_PERTHREAD = 2 };
struct capture {
    uint64_t id;
    CUstreamCaptureMode mode;
    int status;               /* CUstreamCaptureStatus; NONE once ended */
    int invalidated;          /* it was invalidated (kept once it ended) */
    struct graph *graph;
    int to_graph;             /* the program's graph (cuStreamBeginCaptureToGraph): never freed here */
    struct stream *origin;
    pthread_t thread;
    struct stream **streams; size_t nstreams, capstreams;
    struct capture *next;
};
struct stream {
    struct hdr h;
    unsigned flags;
    int prio;
    int special;
    struct ctx *ctx;
    struct capture *cap;
    struct node **deps; size_t ndeps, capdeps;
    /* FAKECUDA_PENDING: its last queued operation, and its queries' count */
    uint64_t last_seq, q_seq; unsigned q_count;
};
struct event {
    struct hdr h;
    unsigned flags;
    int recorded;
    double t_ms;
    unsigned long long done_ns; /* the fake's clock when its last record completed (event_mark) */
    /* its last record, when in capture cap: a captured record (deps: the
    ** nodes it stands for), or ext: a record node (CU_EVENT_RECORD_EXTERNAL) */
    struct capture *cap; uint64_t cap_id; int ext;
    struct node **deps; size_t ndeps;
    /* FAKECUDA_PENDING: its last queued record, and its queries' count */
    uint64_t seq, q_seq; unsigned q_count;
    int graphed;           /* a graph node of its own names it: never made again */
    struct event *next_free;
};

CUresult stream_resolve(CUstream h, int pt, struct stream **out);
/* resolve + legacy-implicit (906) + invalidated-capture (901) checks */
CUresult stream_prep(CUstream h, int pt, struct stream **out);
/* run now, or record into the stream's capture; takes ownership of tmpl payload */
CUresult stream_submit(struct stream *s, struct node *tmpl);
CUresult unsafe_check(void);
void capture_invalidate(struct capture *c);
bool stream_capturing(const struct stream *s);
/* Created without CU_STREAM_NON_BLOCKING, or a per-thread stream (the legacy
** stream itself too): it synchronizes with the legacy stream. */
bool stream_blocking(const struct stream *s);

double fake_now_ms(void);
CUresult fake_sticky(void);      /* the sticky error, CUDA_SUCCESS if none */

/* ---- pending work (fake_queue.c, FAKECUDA_PENDING) ---------------------- */
int fake_pending(void);          /* N; 0: every operation runs when enqueued */
int fake_order_deps(void);       /* FAKECUDA_ORDER=deps */
/* Which of the n ready nodes of a graph (their indices) runs next under
 * FAKECUDA_ORDER=deps: the latest added, or FAKECUDA_ORDER_SEED's choice. */
size_t fake_order_choose(const size_t *ready, size_t n);
void queue_node(struct stream *s, const struct node *n, void *owned);
/* The same, for an op that also waits for ev's record as it is now (a wait). */
void queue_wait(struct stream *s, const struct node *n, void *owned, const struct event *ev);
void queue_record(struct stream *s, struct event *ev);
CUresult queue_copy(struct stream *s, struct node *t);
void queue_graph(struct stream *s, struct graph *g);
void queue_callback(struct stream *s, CUstreamCallback cb, CUstream h, void *ud);
CUresult queue_complete(uint64_t upto); /* runs the FIFO up to upto; the sticky error */
CUresult queue_drain(void);      /* runs all of it (no-op when off) */
bool queue_done(uint64_t seq);   /* whether the FIFO ran up to seq */
CUresult queue_query(uint64_t target, uint64_t *qseq, unsigned *qcount);

/* ---- API implementations (pt = per-thread default stream variant) ------- */
#include "fake_impl.h"

/* ---- logging ------------------------------------------------------------ */
struct lb { char *buf; size_t n, cap; int on; };
void lb_begin(struct lb *l, const char *abi);
void lb_end(struct lb *l, CUresult rc);
void lb_raw(struct lb *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lb_stream(struct lb *l, const char *key, CUstream s);
void lb_handle(struct lb *l, const char *key, const void *h, int kind);
void lb_dptr(struct lb *l, const char *key, CUdeviceptr p);
void lb_hptr(struct lb *l, const char *key, const void *p);
void lb_launch(struct lb *l, CUfunction f, const unsigned grid[3], const unsigned block[3],
               unsigned shmem, CUstream s, void **kernelParams, void **extra);
void lb_bytes(struct lb *l, const char *key, const void *p, size_t n);
#endif
