/* fake_kernel.c - modules, libraries, CUfunction / CUkernel, kernel launch.
 * Kernels are host functions `fakekernel_<name>` found with dlsym, or defined at
 * run time with fakecuda_define_kernel (see fakecuda.h). */
#define _GNU_SOURCE
#include "fake_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct module { struct hdr h; struct func **fns; size_t n; struct ctx *ctx; };
struct library { struct hdr h; struct kernel **ks; size_t n; };

static struct kdef **g_kdefs;
static size_t g_nkdefs;

static size_t align_of(size_t size)
{
    size_t a = size < 8 ? size : 8, p = 1;
    while (p < a) p <<= 1;
    return p;
}

/* The real driver's limit on a kernel's parameter bytes (CUDA 12.1 and later). */
#define PARAM_BYTES_MAX 32764

/* A kernel definition for the 0-terminated parameter sizes, laid out per
 * fakecuda.h; NULL when the layout exceeds PARAM_BYTES_MAX. */
static struct kdef *kdef_new(const char *name, fakecuda_kernel_fn fn, const size_t *sizes)
{
    size_t n = 0, off = 0;
    while (sizes[n]) {
        size_t a = align_of(sizes[n]);
        if (sizes[n] > PARAM_BYTES_MAX) return NULL;
        off = ((off + a - 1) & ~(a - 1)) + sizes[n];
        if (off > PARAM_BYTES_MAX) return NULL;
        n++;
    }
    struct kdef *k = calloc(1, sizeof *k);
    k->name = strdup(name);
    k->fn = fn;
    k->n = n;
    k->total = off;
    k->sizes = calloc(n + 1, sizeof *k->sizes);
    k->offs = calloc(n + 1, sizeof *k->offs);
    off = 0;
    for (size_t i = 0; i < n; i++) {
        size_t a = align_of(sizes[i]);
        off = (off + a - 1) & ~(a - 1);
        k->sizes[i] = sizes[i];
        k->offs[i] = off;
        off += sizes[i];
    }
    return k;
}

/* Adds k to the table of known kernels, in place of an earlier kernel of the
 * same name (functions already resolved keep the earlier one).  Under LOCK. */
static void kdef_put(struct kdef *k)
{
    for (size_t i = 0; i < g_nkdefs; i++)
        if (!strcmp(g_kdefs[i]->name, k->name)) { g_kdefs[i] = k; return; }
    g_kdefs = realloc(g_kdefs, (g_nkdefs + 1) * sizeof *g_kdefs);
    g_kdefs[g_nkdefs++] = k;
}

/* The kernel called name: defined at run time, or the executable's
 * fakekernel_<name> symbols; NULL if neither (or its layout is too large).
 * Under LOCK. */
static struct kdef *kdef_lookup(const char *name)
{
    for (size_t i = 0; i < g_nkdefs; i++)
        if (!strcmp(g_kdefs[i]->name, name)) return g_kdefs[i];
    char sym[512];
    snprintf(sym, sizeof sym, "fakekernel_%s", name);
    void *fn = dlsym(RTLD_DEFAULT, sym);
    snprintf(sym, sizeof sym, "fakekernel_%s_params", name);
    const size_t *sizes = dlsym(RTLD_DEFAULT, sym);
    if (!fn || !sizes) return NULL;
    fakecuda_kernel_fn kfn;
    *(void **)&kfn = fn;
    struct kdef *k = kdef_new(name, kfn, sizes);
    if (k) kdef_put(k);
    return k;
}

__attribute__((visibility("default")))
int fakecuda_define_kernel(const char *name, fakecuda_kernel_fn fn, const size_t *sizes)
{
    if (!name || !*name || !fn || !sizes) return -1;
    struct kdef *k = kdef_new(name, fn, sizes);
    if (!k) return -1;
    LOCK();
    kdef_put(k);
    UNLOCK();
    return 0;
}

__attribute__((visibility("default")))
unsigned long fakecuda_captured(const char *part)
{
    unsigned long n = 0;
    LOCK();
    for (size_t i = 0; i < g_nkdefs; i++)
        if (part && strstr(g_kdefs[i]->name, part))
            n += g_kdefs[i]->captured;
    UNLOCK();
    return n;
}

struct kdef *launchable_kdef(CUfunction f, int *max_dyn)
{
    struct func *fn = reg_get(f, K_FUNC);
    if (fn) { if (max_dyn) *max_dyn = fn->max_dyn_smem; return fn->kd; }
    struct kernel *k = reg_get(f, K_KERNEL);
    if (k) { if (max_dyn) *max_dyn = k->max_dyn_smem; return k->kd; }
    return NULL;
}

/* Handles of unloaded functions and kernels come back for new ones, most recently
 * freed first, as the real driver's handles (pointers into its heap) can: a
 * handle is only valid for the life of its module or library. */
static void *free_funcs, *free_kernels;

static void handle_free(void **list, void *obj)
{
    *(void **)obj = *list;
    *list = obj;
}

static void *handle_alloc(void **list, size_t size)
{
    void *obj = *list;
    if (!obj) return calloc(1, size);
    *list = *(void **)obj;
    memset(obj, 0, size);
    return obj;
}

static struct func *func_new(struct kdef *kd, struct kernel *from)
{
    struct func *f = handle_alloc(&free_funcs, sizeof *f);
    f->kd = kd;
    f->max_dyn_smem = 49152;
    f->carveout = -1;
    f->from_kernel = from;
    reg_add(f, K_FUNC);
    return f;
}

CUresult x_ModuleLoadData(CUmodule *pm, const void *image)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pm || !image) return CUDA_ERROR_INVALID_VALUE;
    struct module *m = calloc(1, sizeof *m);
    m->ctx = cur_ctx(); /* its functions are that context's */
    reg_add(m, K_MODULE);
    *pm = (CUmodule)m;
    return CUDA_SUCCESS;
}

CUresult x_ModuleGetFunction(CUfunction *pf, CUmodule hm, const char *name)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pf || !name) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct module *m = reg_get(hm, K_MODULE);
    if (!m) { rc = CUDA_ERROR_INVALID_HANDLE; goto out; }
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->fns[i]->kd->name, name)) { *pf = (CUfunction)m->fns[i]; goto out; }
    struct kdef *kd = kdef_lookup(name);
    if (!kd) { rc = CUDA_ERROR_NOT_FOUND; goto out; }
    m->fns = realloc(m->fns, (m->n + 1) * sizeof *m->fns);
    m->fns[m->n++] = func_new(kd, NULL);
    m->fns[m->n - 1]->ctx = m->ctx;
    *pf = (CUfunction)m->fns[m->n - 1];
out:
    UNLOCK();
    return rc;
}

/* A module's functions and the module itself leave the registry.  Locked. */
static void module_free(struct module *m)
{
    for (size_t i = 0; i < m->n; i++) {
        reg_del(m->fns[i]);
        handle_free(&free_funcs, m->fns[i]);
    }
    reg_del(m);
    free(m->fns);
    free(m);
}

CUresult x_ModuleUnload(CUmodule hm)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    LOCK();
    struct module *m = reg_get(hm, K_MODULE);
    if (!m) rc = CUDA_ERROR_INVALID_HANDLE;
    else {
        queue_drain(); /* launches of its functions finish first */
        module_free(m);
    }
    UNLOCK();
    return rc;
}

static void reset_module(void *obj, void *arg)
{
    struct module *m = obj;
    if (m->ctx != arg) return;
    module_free(m);
}

void modules_reset(struct ctx *c)
{
    reg_each(K_MODULE, reset_module, c);
}

CUresult x_LibraryLoadData(CUlibrary *pl, const void *code)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!pl || !code) return CUDA_ERROR_INVALID_VALUE;
    struct library *l = calloc(1, sizeof *l);
    reg_add(l, K_LIBRARY);
    *pl = (CUlibrary)l;
    return CUDA_SUCCESS;
}

CUresult x_LibraryGetKernel(CUkernel *pk, CUlibrary hl, const char *name)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!pk || !name) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct library *l = reg_get(hl, K_LIBRARY);
    if (!l) { rc = CUDA_ERROR_INVALID_HANDLE; goto out; }
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->ks[i]->kd->name, name)) { *pk = (CUkernel)l->ks[i]; goto out; }
    struct kdef *kd = kdef_lookup(name);
    if (!kd) { rc = CUDA_ERROR_NOT_FOUND; goto out; }
    struct kernel *k = handle_alloc(&free_kernels, sizeof *k);
    k->kd = kd;
    k->max_dyn_smem = 49152;
    reg_add(k, K_KERNEL);
    l->ks = realloc(l->ks, (l->n + 1) * sizeof *l->ks);
    l->ks[l->n++] = k;
    *pk = (CUkernel)k;
out:
    UNLOCK();
    return rc;
}

CUresult x_KernelGetFunction(CUfunction *pf, CUkernel hk)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pf) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct kernel *k = reg_get(hk, K_KERNEL);
    if (!k) rc = CUDA_ERROR_INVALID_HANDLE;
    else {
        if (!k->fn) k->fn = func_new(k->kd, k);
        *pf = (CUfunction)k->fn;
    }
    UNLOCK();
    return rc;
}

CUresult x_LibraryUnload(CUlibrary hl)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    LOCK();
    struct library *l = reg_get(hl, K_LIBRARY);
    if (!l) rc = CUDA_ERROR_INVALID_HANDLE;
    else {
        queue_drain(); /* launches of its kernels finish first */
        for (size_t i = 0; i < l->n; i++) {
            reg_del(l->ks[i]);
            if (l->ks[i]->fn) {
                reg_del(l->ks[i]->fn);
                handle_free(&free_funcs, l->ks[i]->fn);
            }
            handle_free(&free_kernels, l->ks[i]);
        }
        reg_del(l);
        free(l->ks);
        free(l);
    }
    UNLOCK();
    return rc;
}

static CUresult param_info(struct kdef *kd, size_t idx, size_t *off, size_t *size)
{
    if (!off && !size) return CUDA_ERROR_INVALID_VALUE;
    if (idx >= kd->n) return CUDA_ERROR_INVALID_VALUE;
    if (off) *off = kd->offs[idx];
    if (size) *size = kd->sizes[idx];
    return CUDA_SUCCESS;
}

CUresult x_FuncGetParamInfo(CUfunction hf, size_t idx, size_t *off, size_t *size)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct func *f = reg_get(hf, K_FUNC);   /* a CUkernel is rejected (measured: 400) */
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    return param_info(f->kd, idx, off, size);
}

CUresult x_KernelGetParamInfo(CUkernel hk, size_t idx, size_t *off, size_t *size)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    struct kernel *k = reg_get(hk, K_KERNEL);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    return param_info(k->kd, idx, off, size);
}

CUresult x_FuncGetName(const char **name, CUfunction hf)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    struct func *f = reg_get(hf, K_FUNC);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    *name = f->kd->name;
    return CUDA_SUCCESS;
}

/* Blocks of f that fit on one multiprocessor: 2048 threads, at most 32 blocks. */
CUresult x_OccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction hf, int block, size_t dyn_smem)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!n || block <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!reg_get(hf, K_FUNC)) return CUDA_ERROR_INVALID_HANDLE;
    *n = block > 1024 || dyn_smem > 48 * 1024 ? 0 : (2048 / block > 32 ? 32 : 2048 / block);
    return CUDA_SUCCESS;
}

CUresult x_FuncIsLoaded(CUfunctionLoadingState *state, CUfunction hf)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!state) return CUDA_ERROR_INVALID_VALUE;
    if (!reg_get(hf, K_FUNC)) return CUDA_ERROR_INVALID_HANDLE;
    *state = CU_FUNCTION_LOADING_STATE_LOADED;
    return CUDA_SUCCESS;
}

CUresult x_KernelGetName(const char **name, CUkernel hk)
{
    CUresult rc = api_enter(false);
    if (rc) return rc;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    struct kernel *k = reg_get(hk, K_KERNEL);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *name = k->kd->name;
    return CUDA_SUCCESS;
}

CUresult x_FuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction hf)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    if (!pi || (unsigned)a >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    struct func *f = reg_get(hf, K_FUNC);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    int v = 0;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: v = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: v = 90; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: v = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: v = f->max_dyn_smem; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: v = f->carveout; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: v = f->cluster[0]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: v = f->cluster[1]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: v = f->cluster[2]; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: v = f->cluster[3]; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: v = f->cluster[4]; break;
    default: v = 0; break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

CUresult x_FuncSetAttribute(CUfunction hf, CUfunction_attribute a, int value)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct func *f = reg_get(hf, K_FUNC);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || value > 232448) return CUDA_ERROR_INVALID_VALUE;
        f->max_dyn_smem = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
        f->carveout = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: f->cluster[0] = value; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: f->cluster[1] = value; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: f->cluster[2] = value; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: f->cluster[3] = value; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: f->cluster[4] = value; return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* Validates a launch and packs its arguments (a copy, as the driver makes). */
CUresult knode_build(struct knode *k, CUfunction f, const unsigned grid[3],
                     const unsigned block[3], unsigned shmem, void **kp, void **extra)
{
    int maxdyn = 0;
    struct kdef *kd = launchable_kdef(f, &maxdyn);
    struct func *fn = reg_get(f, K_FUNC);
    if (!kd) return CUDA_ERROR_INVALID_HANDLE;
    /* A module's function is valid in the context the module was loaded in (a
    ** library's CUkernel in any). */
    if (fn && fn->ctx && fn->ctx != cur_ctx()) return CUDA_ERROR_INVALID_HANDLE;
    if (!grid[0] || !grid[1] || !grid[2] || grid[0] > 2147483647u || grid[1] > 65535 || grid[2] > 65535)
        return CUDA_ERROR_INVALID_VALUE;
    if (!block[0] || !block[1] || !block[2] || block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
        (unsigned long long)block[0] * block[1] * block[2] > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (shmem > (unsigned)(maxdyn > 49152 ? maxdyn : 49152)) return CUDA_ERROR_INVALID_VALUE;
    if (kp && extra) return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *src = NULL;
    if (extra) {
        void *bp = NULL; size_t *bs = NULL;
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) bp = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) bs = extra[i + 1];
            else return CUDA_ERROR_INVALID_VALUE;
        }
        if (kd->n && (!bp || !bs || *bs < kd->total)) return CUDA_ERROR_INVALID_VALUE;
        src = bp;
    } else if (!kp && kd->n) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (kp)
        for (size_t i = 0; i < kd->n; i++)
            if (!kp[i]) return CUDA_ERROR_INVALID_VALUE;
    memset(k, 0, sizeof *k);
    k->kd = kd;
    k->handle = f;
    memcpy(k->grid, grid, sizeof k->grid);
    memcpy(k->block, block, sizeof k->block);
    k->shmem = shmem;
    k->buf = calloc(1, kd->total ? kd->total : 1);
    k->ptrs = calloc(kd->n + 1, sizeof *k->ptrs);
    for (size_t i = 0; i < kd->n; i++) {
        k->ptrs[i] = k->buf + kd->offs[i];
        if (kp) memcpy(k->ptrs[i], kp[i], kd->sizes[i]);
    }
    if (src) memcpy(k->buf, src, kd->total);
    return CUDA_SUCCESS;
}

CUresult run_kernel(const struct knode *k)
{
    const struct kdef *kd = k->kd;
    unsigned char *copy = malloc(kd->total ? kd->total : 1);
    void **ptrs = calloc(kd->n + 1, sizeof *ptrs);
    memcpy(copy, k->buf, kd->total);
    for (size_t i = 0; i < kd->n; i++) ptrs[i] = copy + kd->offs[i];
    struct fakecuda_dims d;
    memcpy(d.grid, k->grid, sizeof d.grid);
    memcpy(d.block, k->block, sizeof d.block);
    d.shared_mem = k->shmem;
    kd->fn(ptrs, &d);
    free(ptrs);
    free(copy);
    return CUDA_SUCCESS;
}

CUresult x_LaunchKernel(CUfunction f, const unsigned grid[3], const unsigned block[3],
                        unsigned shmem, CUstream h, void **kp, void **extra, int pt)
{
    CUresult rc = api_enter(true);
    if (rc) return rc;
    struct node t = {.type = CU_GRAPH_NODE_TYPE_KERNEL};
    struct stream *s;
    LOCK();
    if (!(rc = knode_build(&t.u.k, f, grid, block, shmem, kp, extra))) {
        if (!(rc = stream_prep(h, pt, &s))) rc = stream_submit(s, &t);
        else node_payload_free(&t);
    }
    UNLOCK();
    return rc;
}

CUresult x_LaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **kp, void **extra, int pt)
{
    if (!cfg) {
        CUresult rc = api_enter(true);
        return rc ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    if (cfg->numAttrs && !cfg->attrs) return CUDA_ERROR_INVALID_VALUE;
    unsigned grid[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
    unsigned block[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
    return x_LaunchKernel(f, grid, block, cfg->sharedMemBytes, cfg->hStream, kp, extra, pt);
}
