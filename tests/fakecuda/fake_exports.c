/* fake_exports.c - the exported ABI entry points of the fake libcuda.so.1 and
 * cuGetProcAddress.  Each export logs itself and calls an internal x_*
 * implementation; no exported name is ever called from inside the fake (a
 * preloaded library exporting the same names would interpose the call). */
#define _GNU_SOURCE
#include "fake_internal.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum {
#define X(abi, base, ver, pt) ID_##abi,
#include "fake_api.def"
#undef X
    ID__COUNT
};

static const int api_version[ID__COUNT] = {
#define X(abi, base, ver, pt) [ID_##abi] = ver,
#include "fake_api.def"
#undef X
};

/* An entry point newer than the emulated driver (FAKECUDA_DRIVER_VERSION)
 * does not exist there; calling the symbol anyway gets CUDA_ERROR_NOT_SUPPORTED. */
static CUresult vcheck(int id)
{
    return api_version[id] > fake_driver_version() ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
}

/* ---- injected faults (FAKECUDA_FAIL) --------------------------------------
 * FAKECUDA_FAIL="ENTRY:N:CODE[,ENTRY:N:CODE...]" makes call N (counted from 1,
 * over all threads) of the exported ABI entry point ENTRY return CODE; "N+"
 * makes every call from the Nth on fail, "N-M" calls N to M.  CODE is a number
 * or a CUresult name.  An injected failure does nothing else, as a call the
 * real driver refuses: the implementation does not run, no output is written
 * (two exceptions below, in the exports concerned), and the call log shows
 * " injected" before the result.  CODE 0 is no driver behaviour but a check
 * of the tests themselves: the call returns CUDA_SUCCESS without running, as
 * if work were lost ("dropped" in the log).  The first injection of each
 * entry of the list is announced on stderr.  A malformed list ends the
 * process (status 2). */
#define MAX_FAULTS 16
static struct fault {
    int id;
    long first, last;           /* calls first .. last fail (last: LONG_MAX for "N+") */
    CUresult code;
    atomic_int told;
} g_faults[MAX_FAULTS];
static int g_nfaults;
static unsigned char g_watched[ID__COUNT];  /* entry points a fault names */
static atomic_long g_calls[ID__COUNT];      /* their calls so far */
static pthread_once_t g_faults_once = PTHREAD_ONCE_INIT;

static const char *const api_name[ID__COUNT] = {
#define X(abi, base, ver, pt) [ID_##abi] = #abi,
#include "fake_api.def"
#undef X
};

static const struct { int code; const char *name, *str; } err_table[] = {
#define ERR(name, val, str) {val, #name, str},
#include "fake_errors.inc"
#undef ERR
};

static CUresult err_lookup(CUresult e, const char **p, int want_name);

static void fault_usage(const char *spec, const char *why)
{
    fprintf(stderr, "fakecuda: FAKECUDA_FAIL=\"%s\": %s\n"
                    "fakecuda: expected ENTRY:N:CODE, ENTRY:N+:CODE or ENTRY:N-M:CODE, separated by commas\n",
            spec, why);
    exit(2);
}

/* Parses one "ENTRY:N:CODE" item of FAKECUDA_FAIL into g_faults. */
static void fault_parse_item(const char *spec, const char *item, size_t len)
{
    char buf[256], *name = buf, *when, *code, *end;
    struct fault *f = &g_faults[g_nfaults];

    if (len >= sizeof buf) fault_usage(spec, "item too long");
    memcpy(buf, item, len);
    buf[len] = 0;
    if (!(when = strchr(name, ':')) || !(code = strchr(when + 1, ':'))) fault_usage(spec, "item without N and CODE");
    *when++ = 0;
    *code++ = 0;
    f->id = -1;
    for (int i = 0; i < ID__COUNT; i++)
        if (!strcmp(api_name[i], name)) f->id = i;
    if (f->id < 0) {
        fprintf(stderr, "fakecuda: FAKECUDA_FAIL: %s is not an entry point of this driver\n", name);
        fault_usage(spec, "unknown entry point");
    }
    f->first = strtol(when, &end, 10);
    if (end == when || f->first < 1) fault_usage(spec, "N must be a call number from 1 on");
    if (*end == '+' && !end[1]) f->last = LONG_MAX;
    else if (*end == '-') {
        char *e2;
        f->last = strtol(end + 1, &e2, 10);
        if (e2 == end + 1 || *e2 || f->last < f->first) fault_usage(spec, "bad range N-M");
    } else if (!*end) f->last = f->first;
    else fault_usage(spec, "bad call number");
    long v = strtol(code, &end, 0);
    if (end != code && !*end && v >= 0) f->code = (CUresult)v;
    else {
        size_t i = 0;
        while (i < sizeof err_table / sizeof *err_table && strcmp(err_table[i].name, code)) i++;
        if (i == sizeof err_table / sizeof *err_table)
            fault_usage(spec, "CODE must be a number or a CUresult name");
        f->code = (CUresult)err_table[i].code;
    }
    g_watched[f->id] = 1;
    g_nfaults++;
}

static void faults_init(void)
{
    const char *spec = getenv("FAKECUDA_FAIL");
    if (!spec) return;
    for (const char *p = spec; *p;) {
        size_t len = strcspn(p, ", ");
        if (len) {
            if (g_nfaults == MAX_FAULTS) fault_usage(spec, "more than 16 items");
            fault_parse_item(spec, p, len);
        }
        p += len;
        p += strspn(p, ", ");
    }
}

/* Counts a call of entry point id; if the call is to fail (or be dropped),
 * sets *rc to the injected code (unless it failed already) and returns 1: the
 * caller then runs nothing. */
static int fault_check(int id, CUresult *rc)
{
    pthread_once(&g_faults_once, faults_init);
    if (!g_nfaults || !g_watched[id]) return 0;
    long n = atomic_fetch_add(&g_calls[id], 1) + 1;
    for (int i = 0; i < g_nfaults; i++) {
        struct fault *f = &g_faults[i];
        if (f->id != id || n < f->first || n > f->last) continue;
        if (*rc) return 0; /* the call fails on its own */
        *rc = f->code;
        if (!atomic_exchange(&f->told, 1)) {
            const char *en = NULL;
            char line[256];
            err_lookup(f->code, &en, 1);
            int k = f->code ? snprintf(line, sizeof line, "fakecuda: injected error %d (%s) into call %ld of %s\n",
                                       (int)f->code, en ? en : "?", n, api_name[id])
                            : snprintf(line, sizeof line, "fakecuda: dropped call %ld of %s (it returns success)\n",
                                       n, api_name[id]);
            ssize_t w = write(2, line, (size_t)k);
            (void)w;
        }
        return 1;
    }
    return 0;
}

#define ENTER(abi) struct lb L; lb_begin(&L, #abi); CUresult rc = vcheck(ID_##abi); \
    const int injected __attribute__((unused)) = fault_check(ID_##abi, &rc)
#define RUN(expr) do { if (!rc && !injected) rc = (expr); } while (0)
#define LEAVE() do { if (injected) lb_raw(&L, rc ? " injected" : " dropped"); lb_end(&L, rc); return rc; } while (0)
void fake_count_refused(CUresult rc, int injected); /* FAKECUDA_STATS' refused_param_info, below */
void fake_count_refused_name(CUresult rc, int injected); /* and refused_names */

/* ---- init / device / context ------------------------------------------- */
EXPORT CUresult cuInit(unsigned int Flags)
{
    ENTER(cuInit); lb_raw(&L, " flags=%u", Flags);
    RUN(x_Init(Flags));
    LEAVE();
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    ENTER(cuDriverGetVersion);
    RUN(x_DriverGetVersion(v));
    if (!rc && !injected) lb_raw(&L, " out=%d", *v);
    LEAVE();
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    ENTER(cuDeviceGet); lb_raw(&L, " ordinal=%d", ordinal);
    RUN(x_DeviceGet(d, ordinal));
    LEAVE();
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    ENTER(cuDeviceGetCount);
    RUN(x_DeviceGetCount(n));
    if (!rc && !injected) lb_raw(&L, " out=%d", *n);
    LEAVE();
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    ENTER(cuDeviceGetName); lb_raw(&L, " len=%d dev=%d", len, d);
    RUN(x_DeviceGetName(name, len, d));
    LEAVE();
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice d)
{
    ENTER(cuDeviceGetAttribute); lb_raw(&L, " attr=%d dev=%d", (int)a, d);
    RUN(x_DeviceGetAttribute(pi, a, d));
    if (!rc && !injected) lb_raw(&L, " out=%d", *pi);
    LEAVE();
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
    ENTER(cuDevicePrimaryCtxRetain); lb_raw(&L, " dev=%d", d);
    RUN(x_DevicePrimaryCtxRetain(pctx, d));
    if (!rc && !injected) lb_handle(&L, "out", *pctx, K_CTX);
    LEAVE();
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    ENTER(cuDevicePrimaryCtxRelease); lb_raw(&L, " dev=%d", d);
    RUN(x_DevicePrimaryCtxRelease(d));
    LEAVE();
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    ENTER(cuDevicePrimaryCtxRelease_v2); lb_raw(&L, " dev=%d", d);
    RUN(x_DevicePrimaryCtxRelease(d));
    LEAVE();
}

EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice d)
{
    ENTER(cuDevicePrimaryCtxReset); lb_raw(&L, " dev=%d", d);
    RUN(x_DevicePrimaryCtxReset(d));
    LEAVE();
}

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice d)
{
    ENTER(cuDevicePrimaryCtxReset_v2); lb_raw(&L, " dev=%d", d);
    RUN(x_DevicePrimaryCtxReset(d));
    LEAVE();
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice d)
{
    ENTER(cuCtxCreate_v2); lb_raw(&L, " flags=0x%x dev=%d", flags, d);
    RUN(x_CtxCreate(pctx, flags, d));
    if (!rc && !injected) lb_handle(&L, "out", *pctx, K_CTX);
    LEAVE();
}

EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice d)
{
    ENTER(cuCtxCreate_v4); lb_raw(&L, " params=%s flags=0x%x dev=%d", params ? "h" : "0", flags, d);
    RUN(x_CtxCreate(pctx, flags, d));
    if (!rc && !injected) lb_handle(&L, "out", *pctx, K_CTX);
    LEAVE();
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    ENTER(cuCtxDestroy_v2); lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_CtxDestroy(ctx));
    LEAVE();
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    ENTER(cuCtxSetCurrent); lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_CtxSetCurrent(ctx));
    LEAVE();
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    ENTER(cuCtxGetCurrent);
    RUN(x_CtxGetCurrent(pctx));
    if (!rc && !injected) lb_handle(&L, "out", *pctx, K_CTX);
    LEAVE();
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    ENTER(cuCtxGetDevice);
    RUN(x_CtxGetDevice(d, NULL, 0));
    LEAVE();
}

EXPORT CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext ctx)
{
    ENTER(cuCtxGetDevice_v2); lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_CtxGetDevice(d, ctx, 1));
    LEAVE();
}

EXPORT CUresult cuCtxSynchronize(void)
{
    ENTER(cuCtxSynchronize);
    RUN(x_CtxSynchronize(NULL, 0));
    LEAVE();
}

EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    ENTER(cuCtxSynchronize_v2); lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_CtxSynchronize(ctx, 1));
    LEAVE();
}

/* ---- errors --------------------------------------------------------------- */
static CUresult err_lookup(CUresult e, const char **p, int want_name)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof err_table / sizeof *err_table; i++)
        if (err_table[i].code == (int)e) {
            *p = want_name ? err_table[i].name : err_table[i].str;
            return CUDA_SUCCESS;
        }
    *p = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult e, const char **p)
{
    ENTER(cuGetErrorName); lb_raw(&L, " error=%d", (int)e);
    RUN(err_lookup(e, p, 1));
    LEAVE();
}

EXPORT CUresult cuGetErrorString(CUresult e, const char **p)
{
    ENTER(cuGetErrorString); lb_raw(&L, " error=%d", (int)e);
    RUN(err_lookup(e, p, 0));
    LEAVE();
}

/* ---- modules, libraries, functions, kernels -------------------------------- */
EXPORT CUresult cuModuleLoadData(CUmodule *pm, const void *image)
{
    ENTER(cuModuleLoadData);
    RUN(x_ModuleLoadData(pm, image));
    if (!rc && !injected) lb_handle(&L, "out", *pm, K_MODULE);
    LEAVE();
}

EXPORT CUresult cuModuleGetFunction(CUfunction *pf, CUmodule m, const char *name)
{
    ENTER(cuModuleGetFunction); lb_handle(&L, "mod", m, K_MODULE);
    lb_raw(&L, " name=%s", name ? name : "(null)");
    RUN(x_ModuleGetFunction(pf, m, name));
    if (!rc && !injected) lb_handle(&L, "out", *pf, K_FUNC);
    LEAVE();
}

EXPORT CUresult cuModuleUnload(CUmodule m)
{
    ENTER(cuModuleUnload); lb_handle(&L, "mod", m, K_MODULE);
    RUN(x_ModuleUnload(m));
    LEAVE();
}

EXPORT CUresult cuLibraryLoadData(CUlibrary *pl, const void *code, CUjit_option *jo, void **jv,
                                  unsigned int njo, CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo; (void)jv; (void)lo; (void)lv;
    ENTER(cuLibraryLoadData); lb_raw(&L, " njit=%u nlib=%u", njo, nlo);
    RUN(x_LibraryLoadData(pl, code));
    if (!rc && !injected) lb_handle(&L, "out", *pl, K_LIBRARY);
    LEAVE();
}

EXPORT CUresult cuLibraryGetKernel(CUkernel *pk, CUlibrary l, const char *name)
{
    ENTER(cuLibraryGetKernel); lb_handle(&L, "lib", l, K_LIBRARY);
    lb_raw(&L, " name=%s", name ? name : "(null)");
    RUN(x_LibraryGetKernel(pk, l, name));
    if (!rc && !injected) lb_handle(&L, "out", *pk, K_KERNEL);
    LEAVE();
}

EXPORT CUresult cuLibraryUnload(CUlibrary l)
{
    ENTER(cuLibraryUnload); lb_handle(&L, "lib", l, K_LIBRARY);
    RUN(x_LibraryUnload(l));
    LEAVE();
}

EXPORT CUresult cuKernelGetFunction(CUfunction *pf, CUkernel k)
{
    ENTER(cuKernelGetFunction); lb_handle(&L, "kernel", k, K_KERNEL);
    RUN(x_KernelGetFunction(pf, k));
    if (!rc && !injected) lb_handle(&L, "out", *pf, K_FUNC);
    LEAVE();
}

EXPORT CUresult cuKernelGetParamInfo(CUkernel k, size_t idx, size_t *off, size_t *size)
{
    ENTER(cuKernelGetParamInfo); lb_handle(&L, "kernel", k, K_KERNEL); lb_raw(&L, " index=%zu", idx);
    RUN(x_KernelGetParamInfo(k, idx, off, size));
    fake_count_refused(rc, injected);
    LEAVE();
}

EXPORT CUresult cuKernelGetName(const char **name, CUkernel k)
{
    ENTER(cuKernelGetName); lb_handle(&L, "kernel", k, K_KERNEL);
    RUN(x_KernelGetName(name, k));
    fake_count_refused_name(rc, injected);
    LEAVE();
}

EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t idx, size_t *off, size_t *size)
{
    ENTER(cuFuncGetParamInfo); lb_handle(&L, "f", f, K_FUNC); lb_raw(&L, " index=%zu", idx);
    RUN(x_FuncGetParamInfo(f, idx, off, size));
    fake_count_refused(rc, injected);
    LEAVE();
}

EXPORT CUresult cuFuncGetName(const char **name, CUfunction f)
{
    ENTER(cuFuncGetName); lb_handle(&L, "f", f, K_FUNC);
    RUN(x_FuncGetName(name, f));
    fake_count_refused_name(rc, injected);
    LEAVE();
}

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t dyn_smem)
{
    ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessor); lb_handle(&L, "f", f, K_FUNC);
    lb_raw(&L, " block=%d smem=%zu", block, dyn_smem);
    RUN(x_OccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, dyn_smem));
    LEAVE();
}

EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction f)
{
    ENTER(cuFuncIsLoaded); lb_handle(&L, "f", f, K_FUNC);
    RUN(x_FuncIsLoaded(state, f));
    LEAVE();
}

EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction f)
{
    ENTER(cuFuncGetAttribute); lb_raw(&L, " attr=%d", (int)a); lb_handle(&L, "f", f, K_FUNC);
    RUN(x_FuncGetAttribute(pi, a, f));
    if (!rc && !injected) lb_raw(&L, " out=%d", *pi);
    LEAVE();
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int value)
{
    ENTER(cuFuncSetAttribute); lb_handle(&L, "f", f, K_FUNC); lb_raw(&L, " attr=%d value=%d", (int)a, value);
    RUN(x_FuncSetAttribute(f, a, value));
    LEAVE();
}

/* ---- launches ------------------------------------------------------------- */
#define LAUNCH_BODY(abi, pt)                                                              \
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};                             \
    ENTER(abi);                                                                           \
    lb_launch(&L, f, grid, block, shmem, s, kp, extra);                                   \
    RUN(x_LaunchKernel(f, grid, block, shmem, s, kp, extra, pt));                         \
    LEAVE()

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                               CUstream s, void **kp, void **extra)
{
    LAUNCH_BODY(cuLaunchKernel, 0);
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                    CUstream s, void **kp, void **extra)
{
    LAUNCH_BODY(cuLaunchKernel_ptsz, 1);
}

#define LAUNCH_EX_BODY(abi, pt)                                                           \
    ENTER(abi);                                                                           \
    if (cfg) {                                                                            \
        unsigned grid[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};                 \
        unsigned block[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};             \
        lb_launch(&L, f, grid, block, cfg->sharedMemBytes, cfg->hStream, kp, extra);      \
        lb_raw(&L, " nattrs=%u", cfg->numAttrs);                                          \
    } else {                                                                              \
        lb_raw(&L, " config=0");                                                          \
    }                                                                                     \
    RUN(x_LaunchKernelEx(cfg, f, kp, extra, pt));                                         \
    LEAVE()

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **kp, void **extra)
{
    LAUNCH_EX_BODY(cuLaunchKernelEx, 0);
}

EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **kp, void **extra)
{
    LAUNCH_EX_BODY(cuLaunchKernelEx_ptsz, 1);
}

/* ---- memory --------------------------------------------------------------- */
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    ENTER(cuMemAlloc_v2); lb_raw(&L, " size=%zu", size);
    RUN(x_MemAlloc(dptr, size));
    if (!rc && !injected) lb_dptr(&L, "out", *dptr);
    LEAVE();
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    ENTER(cuMemFree_v2); lb_dptr(&L, "ptr", p);
    RUN(x_MemFree(p));
    LEAVE();
}

EXPORT CUresult cuMemGetInfo_v2(size_t *fr, size_t *total)
{
    ENTER(cuMemGetInfo_v2);
    RUN(x_MemGetInfo(fr, total));
    LEAVE();
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
    ENTER(cuMemAllocHost_v2); lb_raw(&L, " size=%zu", size);
    RUN(x_MemHostAlloc(pp, size, 0));
    if (!rc && !injected) lb_hptr(&L, "out", *pp);
    LEAVE();
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
    ENTER(cuMemHostAlloc); lb_raw(&L, " size=%zu flags=0x%x", size, flags);
    RUN(x_MemHostAlloc(pp, size, flags));
    if (!rc && !injected) lb_hptr(&L, "out", *pp);
    LEAVE();
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    ENTER(cuMemFreeHost); lb_hptr(&L, "ptr", p);
    RUN(x_MemFreeHost(p));
    LEAVE();
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    ENTER(cuMemHostRegister_v2); lb_hptr(&L, "ptr", p); lb_raw(&L, " size=%zu flags=0x%x", size, flags);
    RUN(x_MemHostRegister(p, size, flags));
    LEAVE();
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    ENTER(cuMemHostUnregister); lb_hptr(&L, "ptr", p);
    RUN(x_MemHostUnregister(p));
    LEAVE();
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pd, void *p, unsigned int flags)
{
    ENTER(cuMemHostGetDevicePointer_v2); lb_hptr(&L, "ptr", p); lb_raw(&L, " flags=0x%x", flags);
    RUN(x_MemHostGetDevicePointer(pd, p, flags));
    if (!rc && !injected) lb_dptr(&L, "out", *pd);
    LEAVE();
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    ENTER(cuPointerGetAttribute); lb_raw(&L, " attr=%d", (int)a); lb_dptr(&L, "ptr", p);
    RUN(x_PointerGetAttribute(data, a, p));
    LEAVE();
}

EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
    ENTER(cuPointerGetAttributes); lb_raw(&L, " n=%u", n); lb_dptr(&L, "ptr", p);
    RUN(x_PointerGetAttributes(n, attrs, data, p));
    LEAVE();
}

#define ALLOC_ASYNC(abi, pt)                                                              \
    EXPORT CUresult abi(CUdeviceptr *dptr, size_t size, CUstream s)                       \
    {                                                                                     \
        ENTER(abi); lb_raw(&L, " size=%zu", size); lb_stream(&L, "stream", s);            \
        RUN(x_MemAllocAsync(dptr, size, s, pt));                                          \
        if (!rc && !injected) lb_dptr(&L, "out", *dptr);                                               \
        LEAVE();                                                                          \
    }
ALLOC_ASYNC(cuMemAllocAsync, 0)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, 1)

#define FREE_ASYNC(abi, pt)                                                               \
    EXPORT CUresult abi(CUdeviceptr p, CUstream s)                                        \
    {                                                                                     \
        ENTER(abi); lb_dptr(&L, "ptr", p); lb_stream(&L, "stream", s);                    \
        RUN(x_MemFreeAsync(p, s, pt));                                                    \
        LEAVE();                                                                          \
    }
FREE_ASYNC(cuMemFreeAsync, 0)
FREE_ASYNC(cuMemFreeAsync_ptsz, 1)

/* ---- copies --------------------------------------------------------------- */
/* sides: 0 host, 1 device, 2 unified */
#define COPY_SYNC(abi, DT, ST, dside, sside, pt)                                          \
    EXPORT CUresult abi(DT dst, ST src, size_t n)                                         \
    {                                                                                     \
        ENTER(abi);                                                                       \
        lb_dptr(&L, "dst", (CUdeviceptr)(uintptr_t)dst);                                  \
        lb_dptr(&L, "src", (CUdeviceptr)(uintptr_t)src);                                  \
        lb_raw(&L, " n=%zu", n);                                                          \
        RUN(x_Memcpy((uintptr_t)dst, dside, (uintptr_t)src, sside, n, 0, NULL, pt));      \
        LEAVE();                                                                          \
    }
#define COPY_ASYNC(abi, DT, ST, dside, sside, pt)                                         \
    EXPORT CUresult abi(DT dst, ST src, size_t n, CUstream s)                             \
    {                                                                                     \
        ENTER(abi);                                                                       \
        lb_dptr(&L, "dst", (CUdeviceptr)(uintptr_t)dst);                                  \
        lb_dptr(&L, "src", (CUdeviceptr)(uintptr_t)src);                                  \
        lb_raw(&L, " n=%zu", n);                                                          \
        lb_stream(&L, "stream", s);                                                       \
        RUN(x_Memcpy((uintptr_t)dst, dside, (uintptr_t)src, sside, n, 1, s, pt));         \
        LEAVE();                                                                          \
    }
COPY_SYNC(cuMemcpyHtoD_v2, CUdeviceptr, const void *, 1, 0, 0)
COPY_SYNC(cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void *, 1, 0, 1)
COPY_SYNC(cuMemcpyDtoH_v2, void *, CUdeviceptr, 0, 1, 0)
COPY_SYNC(cuMemcpyDtoH_v2_ptds, void *, CUdeviceptr, 0, 1, 1)
COPY_SYNC(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr, 1, 1, 0)
COPY_SYNC(cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr, 1, 1, 1)
COPY_SYNC(cuMemcpy, CUdeviceptr, CUdeviceptr, 2, 2, 0)
COPY_SYNC(cuMemcpy_ptds, CUdeviceptr, CUdeviceptr, 2, 2, 1)
COPY_ASYNC(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, 1, 0, 0)
COPY_ASYNC(cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void *, 1, 0, 1)
COPY_ASYNC(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, 0, 1, 0)
COPY_ASYNC(cuMemcpyDtoHAsync_v2_ptsz, void *, CUdeviceptr, 0, 1, 1)
COPY_ASYNC(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, 1, 1, 0)
COPY_ASYNC(cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr, 1, 1, 1)
COPY_ASYNC(cuMemcpyAsync, CUdeviceptr, CUdeviceptr, 2, 2, 0)
COPY_ASYNC(cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr, 2, 2, 1)

#define SET_SYNC(abi, VT, esize, pt)                                                      \
    EXPORT CUresult abi(CUdeviceptr dst, VT v, size_t n)                                  \
    {                                                                                     \
        ENTER(abi); lb_dptr(&L, "dst", dst); lb_raw(&L, " value=0x%x n=%zu", (unsigned)v, n); \
        RUN(x_Memset(dst, v, esize, n, 0, NULL, pt));                                     \
        LEAVE();                                                                          \
    }
#define SET_ASYNC(abi, VT, esize, pt)                                                     \
    EXPORT CUresult abi(CUdeviceptr dst, VT v, size_t n, CUstream s)                      \
    {                                                                                     \
        ENTER(abi); lb_dptr(&L, "dst", dst); lb_raw(&L, " value=0x%x n=%zu", (unsigned)v, n); \
        lb_stream(&L, "stream", s);                                                       \
        RUN(x_Memset(dst, v, esize, n, 1, s, pt));                                        \
        LEAVE();                                                                          \
    }
SET_SYNC(cuMemsetD8_v2, unsigned char, 1, 0)
SET_SYNC(cuMemsetD8_v2_ptds, unsigned char, 1, 1)
SET_SYNC(cuMemsetD16_v2, unsigned short, 2, 0)
SET_SYNC(cuMemsetD16_v2_ptds, unsigned short, 2, 1)
SET_SYNC(cuMemsetD32_v2, unsigned int, 4, 0)
SET_SYNC(cuMemsetD32_v2_ptds, unsigned int, 4, 1)
SET_ASYNC(cuMemsetD8Async, unsigned char, 1, 0)
SET_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
SET_ASYNC(cuMemsetD16Async, unsigned short, 2, 0)
SET_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
SET_ASYNC(cuMemsetD32Async, unsigned int, 4, 0)
SET_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, 1)

/* ---- streams -------------------------------------------------------------- */
EXPORT CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
    ENTER(cuStreamCreate); lb_raw(&L, " flags=0x%x", flags);
    RUN(x_StreamCreate(ph, flags, 0));
    if (!rc && !injected) lb_stream(&L, "out", *ph);
    LEAVE();
}

EXPORT CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
    ENTER(cuStreamCreateWithPriority); lb_raw(&L, " flags=0x%x prio=%d", flags, prio);
    RUN(x_StreamCreate(ph, flags, prio));
    if (!rc && !injected) lb_stream(&L, "out", *ph);
    LEAVE();
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    ENTER(cuStreamDestroy_v2); lb_stream(&L, "stream", s);
    RUN(x_StreamDestroy(s));
    LEAVE();
}

#define STREAM1(abi, fn, pt)                                                              \
    EXPORT CUresult abi(CUstream s)                                                       \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(fn(s, pt));                                                                   \
        LEAVE();                                                                          \
    }
STREAM1(cuStreamSynchronize, x_StreamSynchronize, 0)
STREAM1(cuStreamSynchronize_ptsz, x_StreamSynchronize, 1)
STREAM1(cuStreamQuery, x_StreamQuery, 0)
STREAM1(cuStreamQuery_ptsz, x_StreamQuery, 1)

#define GETFLAGS(abi, pt)                                                                 \
    EXPORT CUresult abi(CUstream s, unsigned int *flags)                                  \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(x_StreamGetFlags(s, flags, pt));                                              \
        if (!rc && !injected) lb_raw(&L, " out=0x%x", *flags);                                         \
        LEAVE();                                                                          \
    }
GETFLAGS(cuStreamGetFlags, 0)
GETFLAGS(cuStreamGetFlags_ptsz, 1)

#define WRITEVALUE(abi, pt)                                                               \
    EXPORT CUresult abi(CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags) \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s); lb_dptr(&L, "addr", addr);                \
        lb_raw(&L, " value=%u flags=%u", value, flags);                                   \
        RUN(x_StreamWriteValue32(s, addr, value, flags, pt));                             \
        LEAVE();                                                                          \
    }
WRITEVALUE(cuStreamWriteValue32_v2, 0)
WRITEVALUE(cuStreamWriteValue32_v2_ptsz, 1)

#define GETCTX(abi, pt)                                                                   \
    EXPORT CUresult abi(CUstream s, CUcontext *ctx)                                       \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(x_StreamGetCtx(s, ctx, pt));                                                  \
        if (!rc && !injected) lb_handle(&L, "out", *ctx, K_CTX);                                       \
        LEAVE();                                                                          \
    }
GETCTX(cuStreamGetCtx, 0)
GETCTX(cuStreamGetCtx_ptsz, 1)

#define WAITEVENT(abi, pt)                                                                \
    EXPORT CUresult abi(CUstream s, CUevent e, unsigned int flags)                        \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s); lb_handle(&L, "event", e, K_EVENT);       \
        lb_raw(&L, " flags=0x%x", flags);                                                 \
        RUN(x_StreamWaitEvent(s, e, flags, pt));                                          \
        LEAVE();                                                                          \
    }
WAITEVENT(cuStreamWaitEvent, 0)
WAITEVENT(cuStreamWaitEvent_ptsz, 1)

#define HOSTFUNC(abi, pt)                                                                 \
    EXPORT CUresult abi(CUstream s, CUhostFn fn, void *ud)                                \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s); lb_raw(&L, " fn=%s", fn ? "h" : "0");     \
        RUN(x_LaunchHostFunc(s, fn, ud, pt));                                             \
        LEAVE();                                                                          \
    }
HOSTFUNC(cuLaunchHostFunc, 0)
HOSTFUNC(cuLaunchHostFunc_ptsz, 1)

#define ADDCB(abi, pt)                                                                    \
    EXPORT CUresult abi(CUstream s, CUstreamCallback cb, void *ud, unsigned int flags)    \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        lb_raw(&L, " fn=%s flags=0x%x", cb ? "h" : "0", flags);                           \
        RUN(x_StreamAddCallback(s, cb, ud, flags, pt));                                   \
        LEAVE();                                                                          \
    }
ADDCB(cuStreamAddCallback, 0)
ADDCB(cuStreamAddCallback_ptsz, 1)

/* ---- events --------------------------------------------------------------- */
EXPORT CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
    ENTER(cuEventCreate); lb_raw(&L, " flags=0x%x", flags);
    RUN(x_EventCreate(ph, flags));
    if (!rc && !injected) lb_handle(&L, "out", *ph, K_EVENT);
    LEAVE();
}

#define EVREC(abi, pt)                                                                    \
    EXPORT CUresult abi(CUevent e, CUstream s)                                            \
    {                                                                                     \
        ENTER(abi); lb_handle(&L, "event", e, K_EVENT); lb_stream(&L, "stream", s);       \
        RUN(x_EventRecord(e, s, 0, pt));                                                  \
        LEAVE();                                                                          \
    }
EVREC(cuEventRecord, 0)
EVREC(cuEventRecord_ptsz, 1)

#define EVRECF(abi, pt)                                                                   \
    EXPORT CUresult abi(CUevent e, CUstream s, unsigned int flags)                        \
    {                                                                                     \
        ENTER(abi); lb_handle(&L, "event", e, K_EVENT); lb_stream(&L, "stream", s);       \
        lb_raw(&L, " flags=0x%x", flags);                                                 \
        RUN(x_EventRecord(e, s, flags, pt));                                              \
        LEAVE();                                                                          \
    }
EVRECF(cuEventRecordWithFlags, 0)
EVRECF(cuEventRecordWithFlags_ptsz, 1)

EXPORT CUresult cuEventSynchronize(CUevent e)
{
    ENTER(cuEventSynchronize); lb_handle(&L, "event", e, K_EVENT);
    RUN(x_EventSynchronize(e));
    LEAVE();
}

EXPORT CUresult cuEventQuery(CUevent e)
{
    ENTER(cuEventQuery); lb_handle(&L, "event", e, K_EVENT);
    RUN(x_EventQuery(e));
    LEAVE();
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    ENTER(cuEventElapsedTime); lb_handle(&L, "start", a, K_EVENT); lb_handle(&L, "end", b, K_EVENT);
    RUN(x_EventElapsedTime(ms, a, b));
    LEAVE();
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    ENTER(cuEventElapsedTime_v2); lb_handle(&L, "start", a, K_EVENT); lb_handle(&L, "end", b, K_EVENT);
    RUN(x_EventElapsedTime(ms, a, b));
    LEAVE();
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    ENTER(cuEventDestroy_v2); lb_handle(&L, "event", e, K_EVENT);
    RUN(x_EventDestroy(e));
    LEAVE();
}

/* ---- capture -------------------------------------------------------------- */
#define BEGINCAP(abi, pt)                                                                 \
    EXPORT CUresult abi(CUstream s, CUstreamCaptureMode mode)                             \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s); lb_raw(&L, " mode=%d", (int)mode);        \
        RUN(x_StreamBeginCapture(s, mode, pt));                                           \
        LEAVE();                                                                          \
    }
BEGINCAP(cuStreamBeginCapture_v2, 0)
BEGINCAP(cuStreamBeginCapture_v2_ptsz, 1)

#define BEGINCAPTO(abi, pt)                                                               \
    EXPORT CUresult abi(CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *data, size_t n, \
                        CUstreamCaptureMode mode)                                         \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s); lb_handle(&L, "graph", g, K_GRAPH);       \
        lb_raw(&L, " deps=%zu mode=%d", n, (int)mode);                                    \
        RUN(x_StreamBeginCaptureToGraph(s, g, deps, data, n, mode, pt));                  \
        LEAVE();                                                                          \
    }
BEGINCAPTO(cuStreamBeginCaptureToGraph, 0)
BEGINCAPTO(cuStreamBeginCaptureToGraph_ptsz, 1)

/* An injected failure of cuStreamEndCapture ends the capture all the same and
 * returns a NULL graph, as the real driver's failed end of a capture does (an
 * invalidated or unjoined capture, here 901 and 904, ends too): the capture is
 * invalidated and ended, where its end would have succeeded.  A capture ended
 * from the wrong thread or stream stays open, as it would without the fault. */
static void endcap_fault(CUstream h, CUgraph *pg, int pt)
{
    struct stream *s;
    int end = 0;

    LOCK();
    if (!stream_resolve(h, pt, &s) && s->cap && s->cap->origin == s &&
        (s->cap->mode == CU_STREAM_CAPTURE_MODE_RELAXED || pthread_equal(s->cap->thread, pthread_self()))) {
        capture_invalidate(s->cap);
        end = 1;
    }
    UNLOCK();
    if (end && pg) x_StreamEndCapture(h, pg, pt); /* 901, and *pg = NULL */
}

#define ENDCAP(abi, pt)                                                                   \
    EXPORT CUresult abi(CUstream s, CUgraph *pg)                                          \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        if (injected && rc) endcap_fault(s, pg, pt);                                      \
        RUN(x_StreamEndCapture(s, pg, pt));                                               \
        if (!rc && !injected) lb_handle(&L, "out", *pg, K_GRAPH);                                      \
        LEAVE();                                                                          \
    }
ENDCAP(cuStreamEndCapture, 0)
ENDCAP(cuStreamEndCapture_ptsz, 1)

#define ISCAP(abi, pt)                                                                    \
    EXPORT CUresult abi(CUstream s, CUstreamCaptureStatus *st)                            \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(x_StreamIsCapturing(s, st, pt));                                              \
        if (!rc && !injected) lb_raw(&L, " out=%d", (int)*st);                                         \
        LEAVE();                                                                          \
    }
ISCAP(cuStreamIsCapturing, 0)
ISCAP(cuStreamIsCapturing_ptsz, 1)

#define CAPINFO1(abi, pt)                                                                 \
    EXPORT CUresult abi(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id)            \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(x_StreamGetCaptureInfo(s, st, id, NULL, NULL, NULL, NULL, pt));               \
        if (!rc && !injected) lb_raw(&L, " out=%d", (int)*st);                                         \
        LEAVE();                                                                          \
    }
CAPINFO1(cuStreamGetCaptureInfo, 0)
CAPINFO1(cuStreamGetCaptureInfo_ptsz, 1)

#define CAPINFO2(abi, pt)                                                                 \
    EXPORT CUresult abi(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g, \
                        const CUgraphNode **deps, size_t *nd)                             \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(x_StreamGetCaptureInfo(s, st, id, g, deps, NULL, nd, pt));                    \
        if (!rc && !injected) lb_raw(&L, " out=%d", (int)*st);                                         \
        LEAVE();                                                                          \
    }
CAPINFO2(cuStreamGetCaptureInfo_v2, 0)
CAPINFO2(cuStreamGetCaptureInfo_v2_ptsz, 1)

#define CAPINFO3(abi, pt)                                                                 \
    EXPORT CUresult abi(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g, \
                        const CUgraphNode **deps, const CUgraphEdgeData **ed, size_t *nd) \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(x_StreamGetCaptureInfo(s, st, id, g, deps, ed, nd, pt));                      \
        if (!rc && !injected) lb_raw(&L, " out=%d", (int)*st);                                         \
        LEAVE();                                                                          \
    }
CAPINFO3(cuStreamGetCaptureInfo_v3, 0)
CAPINFO3(cuStreamGetCaptureInfo_v3_ptsz, 1)

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    ENTER(cuThreadExchangeStreamCaptureMode);
    if (mode) lb_raw(&L, " mode=%d", (int)*mode);
    RUN(x_ThreadExchangeStreamCaptureMode(mode));
    if (!rc && !injected) lb_raw(&L, " out=%d", (int)*mode);
    LEAVE();
}

/* ---- graphs --------------------------------------------------------------- */
static void lb_deps(struct lb *l, const CUgraphNode *deps, size_t n)
{
    if (!l->on) return;
    lb_raw(l, " deps=[");
    for (size_t i = 0; deps && i < n; i++) lb_handle(l, i ? "" : "", deps[i], K_NODE);
    lb_raw(l, " ]");
}

EXPORT CUresult cuGraphCreate(CUgraph *pg, unsigned int flags)
{
    ENTER(cuGraphCreate); lb_raw(&L, " flags=0x%x", flags);
    RUN(x_GraphCreate(pg, flags));
    if (!rc && !injected) lb_handle(&L, "out", *pg, K_GRAPH);
    LEAVE();
}

EXPORT CUresult cuGraphDestroy(CUgraph g)
{
    ENTER(cuGraphDestroy); lb_handle(&L, "graph", g, K_GRAPH);
    RUN(x_GraphDestroy(g));
    LEAVE();
}

static void lb_knp(struct lb *l, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p) { lb_raw(l, " params=0"); return; }
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    CUfunction f = p->func ? p->func : (CUfunction)p->kern;
    lb_launch(l, f, grid, block, p->sharedMemBytes, (CUstream)-1, p->kernelParams, p->extra);
}

static void knp_from_v1(CUDA_KERNEL_NODE_PARAMS *o, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    memset(o, 0, sizeof *o);
    o->func = p->func;
    o->gridDimX = p->gridDimX; o->gridDimY = p->gridDimY; o->gridDimZ = p->gridDimZ;
    o->blockDimX = p->blockDimX; o->blockDimY = p->blockDimY; o->blockDimZ = p->blockDimZ;
    o->sharedMemBytes = p->sharedMemBytes;
    o->kernelParams = p->kernelParams;
    o->extra = p->extra;
}

EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *pn, CUgraph g, const CUgraphNode *deps, size_t nd,
                                        const CUDA_KERNEL_NODE_PARAMS *p)
{
    ENTER(cuGraphAddKernelNode_v2); lb_handle(&L, "graph", g, K_GRAPH); lb_deps(&L, deps, nd);
    lb_knp(&L, p);
    RUN(x_GraphAddKernelNode(pn, g, deps, nd, p));
    if (!rc && !injected) lb_handle(&L, "out", *pn, K_NODE);
    LEAVE();
}

EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *pn, CUgraph g, const CUgraphNode *deps, size_t nd,
                                     const CUDA_KERNEL_NODE_PARAMS_v1 *p1)
{
    CUDA_KERNEL_NODE_PARAMS p;
    if (p1) knp_from_v1(&p, p1);
    ENTER(cuGraphAddKernelNode); lb_handle(&L, "graph", g, K_GRAPH); lb_deps(&L, deps, nd);
    lb_knp(&L, p1 ? &p : NULL);
    RUN(x_GraphAddKernelNode(pn, g, deps, nd, p1 ? &p : NULL));
    if (!rc && !injected) lb_handle(&L, "out", *pn, K_NODE);
    LEAVE();
}

static void lb_copy(struct lb *l, const CUDA_MEMCPY3D *p)
{
    if (!p) return;
    lb_dptr(l, "dst", p->dstMemoryType == CU_MEMORYTYPE_HOST ? (CUdeviceptr)(uintptr_t)p->dstHost : p->dstDevice);
    lb_dptr(l, "src", p->srcMemoryType == CU_MEMORYTYPE_HOST ? (CUdeviceptr)(uintptr_t)p->srcHost : p->srcDevice);
    lb_raw(l, " width=%zu height=%zu depth=%zu", p->WidthInBytes, p->Height, p->Depth);
}

static void lb_memset(struct lb *l, const CUDA_MEMSET_NODE_PARAMS *p)
{
    if (!p) return;
    lb_dptr(l, "dst", p->dst);
    lb_raw(l, " value=0x%x esize=%u width=%zu height=%zu pitch=%zu", p->value, p->elementSize,
           p->width, p->height, p->pitch);
}

EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *pn, CUgraph g, const CUgraphNode *deps, size_t nd,
                                     const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    ENTER(cuGraphAddMemcpyNode); lb_handle(&L, "graph", g, K_GRAPH); lb_deps(&L, deps, nd);
    lb_copy(&L, p);
    lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_GraphAddMemcpyNode(pn, g, deps, nd, p));
    if (!rc && !injected) lb_handle(&L, "out", *pn, K_NODE);
    LEAVE();
}

EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *pn, CUgraph g, const CUgraphNode *deps, size_t nd,
                                     const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    ENTER(cuGraphAddMemsetNode); lb_handle(&L, "graph", g, K_GRAPH); lb_deps(&L, deps, nd);
    lb_memset(&L, p);
    lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_GraphAddMemsetNode(pn, g, deps, nd, p));
    if (!rc && !injected) lb_handle(&L, "out", *pn, K_NODE);
    LEAVE();
}

EXPORT CUresult cuGraphAddHostNode(CUgraphNode *pn, CUgraph g, const CUgraphNode *deps, size_t nd,
                                   const CUDA_HOST_NODE_PARAMS *p)
{
    ENTER(cuGraphAddHostNode); lb_handle(&L, "graph", g, K_GRAPH); lb_deps(&L, deps, nd);
    RUN(x_GraphAddHostNode(pn, g, deps, nd, p));
    if (!rc && !injected) lb_handle(&L, "out", *pn, K_NODE);
    LEAVE();
}

EXPORT CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *num)
{
    ENTER(cuGraphGetNodes); lb_handle(&L, "graph", g, K_GRAPH);
    RUN(x_GraphGetNodes(g, nodes, num));
    if (!rc && !injected) lb_raw(&L, " out=%zu", *num);
    LEAVE();
}

EXPORT CUresult cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *t)
{
    ENTER(cuGraphNodeGetType); lb_handle(&L, "node", n, K_NODE);
    RUN(x_GraphNodeGetType(n, t));
    if (!rc && !injected) lb_raw(&L, " out=%d", (int)*t);
    LEAVE();
}

EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
    ENTER(cuGraphKernelNodeGetParams_v2); lb_handle(&L, "node", n, K_NODE);
    RUN(x_GraphKernelNodeGetParams(n, p));
    LEAVE();
}

EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v1 *p1)
{
    CUDA_KERNEL_NODE_PARAMS p;
    ENTER(cuGraphKernelNodeGetParams); lb_handle(&L, "node", n, K_NODE);
    if (!p1) RUN(CUDA_ERROR_INVALID_VALUE);
    RUN(x_GraphKernelNodeGetParams(n, &p));
    if (!rc && !injected) {
        p1->func = p.func;
        p1->gridDimX = p.gridDimX; p1->gridDimY = p.gridDimY; p1->gridDimZ = p.gridDimZ;
        p1->blockDimX = p.blockDimX; p1->blockDimY = p.blockDimY; p1->blockDimZ = p.blockDimZ;
        p1->sharedMemBytes = p.sharedMemBytes;
        p1->kernelParams = p.kernelParams;
        p1->extra = p.extra;
    }
    LEAVE();
}

EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode n, CUDA_MEMCPY3D *p)
{
    ENTER(cuGraphMemcpyNodeGetParams); lb_handle(&L, "node", n, K_NODE);
    RUN(x_GraphMemcpyNodeGetParams(n, p));
    LEAVE();
}

EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode n, CUDA_MEMSET_NODE_PARAMS *p)
{
    ENTER(cuGraphMemsetNodeGetParams); lb_handle(&L, "node", n, K_NODE);
    RUN(x_GraphMemsetNodeGetParams(n, p));
    LEAVE();
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *pe, CUgraph g, unsigned long long flags)
{
    ENTER(cuGraphInstantiateWithFlags); lb_handle(&L, "graph", g, K_GRAPH); lb_raw(&L, " flags=0x%llx", flags);
    RUN(x_GraphInstantiate(pe, g, flags));
    if (!rc && !injected) lb_handle(&L, "out", *pe, K_EXEC);
    LEAVE();
}

#define GLAUNCH(abi, pt)                                                                  \
    EXPORT CUresult abi(CUgraphExec x, CUstream s)                                        \
    {                                                                                     \
        ENTER(abi); lb_handle(&L, "exec", x, K_EXEC); lb_stream(&L, "stream", s);         \
        RUN(x_GraphLaunch(x, s, pt));                                                     \
        LEAVE();                                                                          \
    }
GLAUNCH(cuGraphLaunch, 0)
GLAUNCH(cuGraphLaunch_ptsz, 1)

EXPORT CUresult cuGraphExecDestroy(CUgraphExec x)
{
    ENTER(cuGraphExecDestroy); lb_handle(&L, "exec", x, K_EXEC);
    RUN(x_GraphExecDestroy(x));
    LEAVE();
}

EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    ENTER(cuGraphExecUpdate_v2); lb_handle(&L, "exec", x, K_EXEC); lb_handle(&L, "graph", g, K_GRAPH);
    /* An injected failure leaves x as it was and, as every failed update of
     * the real driver, says so in info. */
    if (injected && rc && info) {
        memset(info, 0, sizeof *info);
        info->result = CU_GRAPH_EXEC_UPDATE_ERROR;
    }
    RUN(x_GraphExecUpdate(x, g, info));
    if (info && (!injected ? !rc || rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE : rc != 0))
        lb_raw(&L, " result=%d", (int)info->result);
    LEAVE();
}

EXPORT CUresult cuGraphExecUpdate(CUgraphExec x, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res)
{
    CUgraphExecUpdateResultInfo info = {0};
    ENTER(cuGraphExecUpdate); lb_handle(&L, "exec", x, K_EXEC); lb_handle(&L, "graph", g, K_GRAPH);
    if (!err || !res) RUN(CUDA_ERROR_INVALID_VALUE);
    RUN(x_GraphExecUpdate(x, g, &info));
    if (injected && rc) info.result = CU_GRAPH_EXEC_UPDATE_ERROR; /* as cuGraphExecUpdate_v2 */
    if (!injected ? !rc || rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE : rc != 0) {
        if (res) *res = info.result;
        if (err) *err = info.errorNode;
        lb_raw(&L, " result=%d", (int)info.result);
    }
    LEAVE();
}

EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    ENTER(cuGraphExecKernelNodeSetParams_v2); lb_handle(&L, "exec", x, K_EXEC); lb_handle(&L, "node", n, K_NODE);
    lb_knp(&L, p);
    RUN(x_GraphExecKernelNodeSetParams(x, n, p));
    LEAVE();
}

EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p1)
{
    CUDA_KERNEL_NODE_PARAMS p;
    if (p1) knp_from_v1(&p, p1);
    ENTER(cuGraphExecKernelNodeSetParams); lb_handle(&L, "exec", x, K_EXEC); lb_handle(&L, "node", n, K_NODE);
    lb_knp(&L, p1 ? &p : NULL);
    RUN(x_GraphExecKernelNodeSetParams(x, n, p1 ? &p : NULL));
    LEAVE();
}

EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec x, CUgraphNode n, const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    ENTER(cuGraphExecMemcpyNodeSetParams); lb_handle(&L, "exec", x, K_EXEC); lb_handle(&L, "node", n, K_NODE);
    lb_copy(&L, p);
    lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_GraphExecMemcpyNodeSetParams(x, n, p));
    LEAVE();
}

EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec x, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p,
                                               CUcontext ctx)
{
    ENTER(cuGraphExecMemsetNodeSetParams); lb_handle(&L, "exec", x, K_EXEC); lb_handle(&L, "node", n, K_NODE);
    lb_memset(&L, p);
    lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_GraphExecMemsetNodeSetParams(x, n, p));
    LEAVE();
}

/* ---- cuGetProcAddress ---------------------------------------------------- */
struct pa_ent { const char *base; int ver; int pt; void *fn; const char *abi; };
static const struct pa_ent pa_table[] = {
#define X(abi, base, ver, pt) {#base, ver, pt, (void *)abi, #abi},
#include "fake_api.def"
#undef X
    /* cuGraphInstantiate means cuGraphInstantiateWithFlags from CUDA 12.0 on */
    {"cuGraphInstantiate", 12000, 0, (void *)cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"},
};

static CUresult proc_address(const char *sym, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    if (!sym || !pfn) return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    int drv = fake_driver_version();
    if (cudaVersion > drv) return CUDA_ERROR_INVALID_VALUE;
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const struct pa_ent *best[2] = {NULL, NULL};
    int known = 0;
    for (size_t i = 0; i < sizeof pa_table / sizeof *pa_table; i++) {
        const struct pa_ent *e = &pa_table[i];
        if (strcmp(e->base, sym) || e->ver > drv) continue;  /* newer than this driver: unknown */
        known = 1;
        if (e->ver > cudaVersion) continue;
        if (!best[e->pt] || e->ver > best[e->pt]->ver) best[e->pt] = e;
    }
    const struct pa_ent *pick = (want_pt && best[1]) ? best[1] : best[0];
    if (status)
        *status = pick ? CU_GET_PROC_ADDRESS_SUCCESS
                       : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                               : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (pick) *pfn = pick->fn;
    return CUDA_SUCCESS;
}

static void lb_pa(struct lb *l, void *const *pfn, CUresult rc)
{
    if (!l->on) return;
    const char *abi = "0";
    if (!rc && pfn && *pfn)
        for (size_t i = 0; i < sizeof pa_table / sizeof *pa_table; i++)
            if (pa_table[i].fn == *pfn) { abi = pa_table[i].abi; break; }
    lb_raw(l, " out=%s", abi);
}

EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int cudaVersion, cuuint64_t flags)
{
    ENTER(cuGetProcAddress);
    lb_raw(&L, " symbol=%s version=%d flags=0x%llx", sym ? sym : "(null)", cudaVersion, (unsigned long long)flags);
    RUN(proc_address(sym, pfn, cudaVersion, flags, NULL));
    lb_pa(&L, pfn, rc || injected);
    LEAVE();
}

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status)
{
    ENTER(cuGetProcAddress_v2);
    lb_raw(&L, " symbol=%s version=%d flags=0x%llx", sym ? sym : "(null)", cudaVersion, (unsigned long long)flags);
    RUN(proc_address(sym, pfn, cudaVersion, flags, status));
    lb_pa(&L, pfn, rc || injected);
    if (!rc && !injected && status) lb_raw(&L, " status=%d", (int)*status);
    LEAVE();
}

/* ---- what only the fuzzer's extra ops call --------------------------------- */
/* The thread's stack of current contexts, pitched and managed memory (from the
 * device arena, which the host reaches too), one memory pool (the device's
 * default: stream-ordered allocations from it are cuMemAllocAsync's), limits,
 * cache configurations and kernel attributes that change nothing the fake
 * runs, and the first capture call (CUDA 10.0: global mode). */
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    ENTER(cuCtxPushCurrent_v2); lb_handle(&L, "ctx", ctx, K_CTX);
    RUN(x_CtxPushCurrent(ctx));
    LEAVE();
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    ENTER(cuCtxPopCurrent_v2);
    RUN(x_CtxPopCurrent(pctx));
    LEAVE();
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int esize)
{
    ENTER(cuMemAllocPitch_v2); lb_raw(&L, " width=%zu height=%zu esize=%u", width, height, esize);
    if (!rc && !injected && (!pitch || (esize != 4 && esize != 8 && esize != 16))) rc = CUDA_ERROR_INVALID_VALUE;
    if (!rc && !injected) *pitch = (width + 511) & ~(size_t)511;
    RUN(x_MemAlloc(dptr, *pitch * height));
    if (!rc && !injected) lb_dptr(&L, "out", *dptr);
    LEAVE();
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
    ENTER(cuMemAllocManaged); lb_raw(&L, " size=%zu flags=0x%x", size, flags);
    if (!rc && !injected && flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) rc = CUDA_ERROR_INVALID_VALUE;
    RUN(x_MemAlloc(dptr, size));
    if (!rc && !injected) lb_dptr(&L, "out", *dptr);
    LEAVE();
}

static char g_default_pool; /* the device's one pool: its address is the handle */

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    ENTER(cuDeviceGetDefaultMemPool);
    if (!rc && !injected && (!pool || dev != 0)) rc = dev != 0 ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_INVALID_VALUE;
    if (!rc && !injected) *pool = (CUmemoryPool)&g_default_pool;
    LEAVE();
}

#define ALLOC_POOL(abi, pt)                                                               \
    EXPORT CUresult abi(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)    \
    {                                                                                     \
        ENTER(abi); lb_raw(&L, " size=%zu", size); lb_stream(&L, "stream", s);            \
        if (!rc && !injected && pool != (CUmemoryPool)&g_default_pool) rc = CUDA_ERROR_INVALID_VALUE; \
        RUN(x_MemAllocAsync(dptr, size, s, pt));                                          \
        if (!rc && !injected) lb_dptr(&L, "out", *dptr);                                  \
        LEAVE();                                                                          \
    }
ALLOC_POOL(cuMemAllocFromPoolAsync, 0)
ALLOC_POOL(cuMemAllocFromPoolAsync_ptsz, 1)

/* ---- virtual memory management (fake_vmm.c) ------------------------------ */
EXPORT CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                              CUmemAllocationGranularity_flags option)
{
    ENTER(cuMemGetAllocationGranularity); lb_raw(&L, " option=%d", (int)option);
    RUN(x_MemGetAllocationGranularity(g, prop, option));
    if (!rc && !injected) lb_raw(&L, " out=%zu", *g);
    LEAVE();
}

EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                                    unsigned long long flags)
{
    ENTER(cuMemAddressReserve); lb_raw(&L, " size=%zu align=%zu", size, align);
    RUN(x_MemAddressReserve(ptr, size, align, addr, flags));
    if (!rc && !injected) lb_dptr(&L, "out", *ptr);
    LEAVE();
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    ENTER(cuMemAddressFree); lb_dptr(&L, "ptr", ptr); lb_raw(&L, " size=%zu", size);
    RUN(x_MemAddressFree(ptr, size));
    LEAVE();
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                            unsigned long long flags)
{
    ENTER(cuMemCreate); lb_raw(&L, " size=%zu", size);
    RUN(x_MemCreate(h, size, prop, flags));
    LEAVE();
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    ENTER(cuMemRelease);
    RUN(x_MemRelease(h));
    LEAVE();
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                         unsigned long long flags)
{
    ENTER(cuMemMap); lb_dptr(&L, "ptr", ptr); lb_raw(&L, " size=%zu", size);
    RUN(x_MemMap(ptr, size, offset, h, flags));
    LEAVE();
}

EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    ENTER(cuMemSetAccess); lb_dptr(&L, "ptr", ptr); lb_raw(&L, " size=%zu", size);
    RUN(x_MemSetAccess(ptr, size, desc, count));
    LEAVE();
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    ENTER(cuMemUnmap); lb_dptr(&L, "ptr", ptr); lb_raw(&L, " size=%zu", size);
    RUN(x_MemUnmap(ptr, size));
    LEAVE();
}

EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    ENTER(cuMemPoolTrimTo); lb_raw(&L, " keep=%zu", keep);
    if (!rc && !injected && pool != (CUmemoryPool)&g_default_pool) rc = CUDA_ERROR_INVALID_VALUE;
    LEAVE();
}

EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    ENTER(cuCtxSetLimit); lb_raw(&L, " limit=%d value=%zu", (int)limit, value);
    if (!rc && !injected && (unsigned)limit >= CU_LIMIT_MAX) rc = CUDA_ERROR_INVALID_VALUE;
    LEAVE();
}

EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache config)
{
    ENTER(cuFuncSetCacheConfig); lb_handle(&L, "f", f, K_FUNC); lb_raw(&L, " config=%d", (int)config);
    if (!rc && !injected && (unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL) rc = CUDA_ERROR_INVALID_VALUE;
    LEAVE();
}

EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attr, int value, CUkernel k, CUdevice dev)
{
    ENTER(cuKernelSetAttribute); lb_raw(&L, " attr=%d value=%d", (int)attr, value);
    if (!rc && !injected && dev != 0) rc = CUDA_ERROR_INVALID_DEVICE;
    if (!rc && !injected && !k) rc = CUDA_ERROR_INVALID_HANDLE;
    LEAVE();
}

#define BEGINCAP1(abi, pt)                                                                \
    EXPORT CUresult abi(CUstream s)                                                       \
    {                                                                                     \
        ENTER(abi); lb_stream(&L, "stream", s);                                           \
        RUN(x_StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL, pt));                   \
        LEAVE();                                                                          \
    }
BEGINCAP1(cuStreamBeginCapture, 0)
BEGINCAP1(cuStreamBeginCapture_ptsz, 1)

/* ---- what the driver ran (fakecuda_count, FAKECUDA_STATS) ------------------
 * Ops (kernels, copies, memsets) enqueued on a stream to run ("eager", graphs'
 * nodes not included) or into a capture ("captured"), by kind; graph launches
 * that run (not those into a capture) and the ops among their nodes; graph
 * executables instantiated and destroyed; parameter queries
 * (cuFuncGetParamInfo, cuKernelGetParamInfo) that returned
 * CUDA_ERROR_INVALID_HANDLE, not by an injected fault (a handle of the other
 * kind: a CUkernel passed as a CUfunction).  Counted over every caller: a
 * program's own graphs and graphshim's alike. */
enum { C_KERNEL, C_COPY, C_MEMSET, C_NKINDS };
FAKECUDA_EXPORT long fakecuda_count(const char *what);
static atomic_long g_eager[C_NKINDS], g_captured_ops[C_NKINDS], g_graph_ops[C_NKINDS];
static atomic_long g_graph_launches, g_execs_made, g_execs_destroyed, g_eager_first_exec = -1, g_refused,
    g_refused_names;

void fake_count_refused(CUresult rc, int injected)
{
    if (rc == CUDA_ERROR_INVALID_HANDLE && !injected)
        atomic_fetch_add(&g_refused, 1);
}

void fake_count_refused_name(CUresult rc, int injected)
{
    if (rc == CUDA_ERROR_INVALID_HANDLE && !injected)
        atomic_fetch_add(&g_refused_names, 1);
}

static int count_kind(int type)
{
    return type == CU_GRAPH_NODE_TYPE_KERNEL ? C_KERNEL
           : type == CU_GRAPH_NODE_TYPE_MEMCPY ? C_COPY
           : type == CU_GRAPH_NODE_TYPE_MEMSET ? C_MEMSET
                                                : -1;
}

void fake_count_op(int type, bool captured)
{
    int k = count_kind(type);
    if (k >= 0)
        atomic_fetch_add(captured ? &g_captured_ops[k] : &g_eager[k], 1);
}

static void count_nodes(const struct graph *g)
{
    for (size_t i = 0; i < g->n; i++) {
        int k = count_kind(g->nodes[i]->type);
        if (k >= 0)
            atomic_fetch_add(&g_graph_ops[k], 1);
        else if (g->nodes[i]->type == CU_GRAPH_NODE_TYPE_GRAPH)
            count_nodes(g->nodes[i]->u.child);
    }
}

void fake_count_graph(const struct graph *g)
{
    atomic_fetch_add(&g_graph_launches, 1);
    count_nodes(g);
}

void fake_count_exec(int delta)
{
    long none = -1;
    if (delta > 0)
        atomic_compare_exchange_strong(&g_eager_first_exec, &none, fakecuda_count("eager_ops"));
    atomic_fetch_add(delta > 0 ? &g_execs_made : &g_execs_destroyed, 1);
}

static const struct {
    const char *name;
    atomic_long *a, *b;   /* the sum of *a and *b (b may be NULL); a NULL a: the kinds' sum */
    atomic_long *kinds;
} count_names[] = {
    {"eager_ops", NULL, NULL, g_eager},
    {"eager_kernels", &g_eager[C_KERNEL], NULL, NULL},
    {"eager_copies", &g_eager[C_COPY], NULL, NULL},
    {"eager_memsets", &g_eager[C_MEMSET], NULL, NULL},
    {"captured_ops", NULL, NULL, g_captured_ops},
    {"graph_launches", &g_graph_launches, NULL, NULL},
    {"graph_ops", NULL, NULL, g_graph_ops},
    {"graph_kernels", &g_graph_ops[C_KERNEL], NULL, NULL},
    {"execs_made", &g_execs_made, NULL, NULL},
    {"execs_destroyed", &g_execs_destroyed, NULL, NULL},
    {"eager_before_exec", &g_eager_first_exec, NULL, NULL},
    {"refused_param_info", &g_refused, NULL, NULL},
    {"refused_names", &g_refused_names, NULL, NULL},
};

FAKECUDA_EXPORT long fakecuda_count(const char *what)
{
    for (size_t i = 0; what && i < sizeof count_names / sizeof count_names[0]; i++) {
        if (strcmp(what, count_names[i].name) != 0)
            continue;
        if (count_names[i].a)
            return atomic_load(count_names[i].a);
        long n = 0;
        for (int k = 0; k < C_NKINDS; k++)
            n += atomic_load(&count_names[i].kinds[k]);
        return n;
    }
    return -1;
}

/* FAKECUDA_STATS=path: at exit, after the program's and a preloaded library's
 * exit handlers (a library's destructor runs after every atexit handler), one
 * "name value" line per counter above, and the clock (clock_ns). */
__attribute__((destructor)) static void count_write(void)
{
    const char *path = getenv("FAKECUDA_STATS");
    FILE *f;

    if (!path || !*path || !(f = fopen(path, "w")))
        return;
    for (size_t i = 0; i < sizeof count_names / sizeof count_names[0]; i++)
        fprintf(f, "%s %ld\n", count_names[i].name, fakecuda_count(count_names[i].name));
    fprintf(f, "clock_ns %llu\n", fakecuda_clock_ns());
    fclose(f);
}
