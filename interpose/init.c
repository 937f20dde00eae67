/*
** init.c: loading graphshim.
**
** Nothing happens at load time beyond finding the real dlsym and checking that
** graphshim was loaded early enough to interpose (a one-line notice if not), so
** a process that never touches CUDA is left alone.  The first intercepted driver
** call (or a dlsym of a driver name from a loaded libcuda) runs gs__init() once:
** it reads the knobs, finds libcuda, resolves the real pointer of every hooks.def
** row, opens the trace, and decides whether the engine may run at all.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"
#include "../policy/base/config.h"
#include "../policy/entry/engine.h"
#include "../policy/base/log.h"
#include "../policy/base/run.h"
#include "../policy/base/trace.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Where graphshim, libc and libcuda stand in the list of loaded objects. */
struct load_order {
    int index, self, libc, libcuda;
};

static int starts_with_base(const char *path, const char *prefix)
{
    const char *slash = strrchr(path, '/');
    return strncmp(slash ? slash + 1 : path, prefix, strlen(prefix)) == 0;
}

static int find_order(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct load_order *o = arg;
    uintptr_t self = (uintptr_t)&find_order;

    (void)size;
    for (int i = 0; i < info->dlpi_phnum && o->self < 0; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && self >= info->dlpi_addr + ph->p_vaddr &&
            self < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
            o->self = o->index;
    }
    if (o->libc < 0 && starts_with_base(info->dlpi_name, "libc.so"))
        o->libc = o->index;
    if (o->libcuda < 0 && starts_with_base(info->dlpi_name, "libcuda.so"))
        o->libcuda = o->index;
    o->index++;
    return 0;
}

/* Says once on stderr when graphshim was loaded too late to interpose: after
** libcuda (the driver's symbols come first), or after libc, which only a dlopen
** at run time does (LD_PRELOAD puts a library ahead of every one the program
** needs).  Then the program's driver calls never reach graphshim, and it would
** otherwise do nothing without a word.  Silent when graphshim is linked into the
** program itself (its tests), with GRAPHSHIM=0 or with GRAPHSHIM_LOG=error. */
static void check_load_order(void)
{
    struct load_order o = {0, -1, -1, -1};
    const char *log = getenv("GRAPHSHIM_LOG"), *on = getenv("GRAPHSHIM");
    long level = GS_LOG_WARN, enable = 1;
    char path[PATH_MAX];
    Dl_info self;

    dl_iterate_phdr(find_order, &o);
    if (o.self <= 0)
        return;
    if (log && *log)
        gs__knob_parse(&gs__knobs[GS_KNOB_log], log, &level, NULL);
    if (on && *on)
        gs__knob_parse(&gs__knobs[GS_KNOB_enable], on, &enable, NULL);
    if (level < GS_LOG_WARN || !enable || !dladdr((void *)&find_order, &self))
        return;
    if (!realpath(self.dli_fname, path))
        snprintf(path, sizeof path, "%s", self.dli_fname);
    if (o.libcuda >= 0 && o.libcuda < o.self)
        gs__warn("loaded after the CUDA driver (libcuda), so driver calls do not reach graphshim and it does "
                 "nothing in this process; preload it instead: LD_PRELOAD=%s",
                 path);
    else if (o.libc >= 0 && o.libc < o.self)
        gs__warn("loaded while the program runs (dlopen), not preloaded, so driver calls do not reach "
                 "graphshim and it does nothing in this process; preload it instead: LD_PRELOAD=%s",
                 path);
}

__attribute__((constructor)) static void gs_load(void)
{
    gs__resolve_dlsym();
    gs__run_note_start();
    check_load_order();
}

static void at_exit(void)
{
    gs__engine_exit();
    gs__trace_summary();
#ifdef GS_TEST
    gs__test_own_counts();
    gs__test_alloc_stop(); /* what allocates after this (gcov's counters) never fails */
#endif
}

static void before_fork(void) { gs__engine_fork(0); }
static void after_fork_parent(void) { gs__engine_fork(1); }
static void after_fork_child(void)
{
    gs__tls.tid = 0;
    gs__engine_fork(2);
}

/* The entry points the engine calls for itself with no way around their
** absence (every driver of CUDA 12.4 or later has them), beside
** cuDriverGetVersion and cuFuncGetParamInfo, which the version check below
** asks for.  The others it calls for itself it can do without:
** cuStreamGetCaptureInfo_v2 and the node parameter gets and sets (a graph's
** nodes not told or not set: a changed argument captures again),
** cuKernelGetParamInfo (a library kernel's layout asked as a function),
** cuPointerGetAttributes (a moved copy not held), cuStreamGetCtx (a stream's
** context taken for the current one). */
static const int required[] = {
    GS_ID_cuFuncGetName, GS_ID_cuKernelGetName, GS_ID_cuCtxGetCurrent, GS_ID_cuCtxSetCurrent,
    GS_ID_cuCtxPushCurrent_v2, GS_ID_cuCtxPopCurrent_v2, GS_ID_cuStreamCreate, GS_ID_cuStreamQuery,
    GS_ID_cuStreamSynchronize, GS_ID_cuStreamWaitEvent, GS_ID_cuStreamGetFlags, GS_ID_cuStreamBeginCapture_v2,
    GS_ID_cuStreamEndCapture, GS_ID_cuGraphInstantiateWithFlags, GS_ID_cuGraphLaunch, GS_ID_cuGraphNodeGetType,
    GS_ID_cuGraphDestroy, GS_ID_cuGraphExecDestroy, GS_ID_cuEventCreate, GS_ID_cuEventRecord, GS_ID_cuEventQuery,
    GS_ID_cuEventSynchronize, GS_ID_cuEventDestroy_v2, GS_ID_cuMemAllocHost_v2, GS_ID_cuMemFreeHost,
    GS_ID_cuMemGetInfo_v2, GS_ID_cuPointerGetAttribute,
};

/* Decides whether the driver is new enough for the engine.  Held ops need the
** kernel parameter layout, which only cuFuncGetParamInfo (CUDA 12.4) gives, and
** the engine the entry points above.  A driver that does not tell its version
** is taken for an old one. */
static void check_driver(void)
{
    int version = 0;
    CUresult rc = gs__real[GS_ID_cuDriverGetVersion] ? GS_REAL(cuDriverGetVersion)(&version) : CUDA_ERROR_NOT_FOUND;

    for (size_t i = 0; rc == CUDA_SUCCESS && i < sizeof required / sizeof required[0]; i++)
        if (!gs__real[required[i]]) {
            gs__warn("the CUDA driver has no %s: graphshim passes every call through", gs__rows[required[i]].abi);
            gs__passthrough = 1;
            return;
        }
    if (rc != CUDA_SUCCESS) {
        gs__warn("cuDriverGetVersion failed (error %d): graphshim passes every call through", (int)rc);
        gs__passthrough = 1;
    } else if (version < 12040 || !gs__real[GS_ID_cuFuncGetParamInfo]) {
        gs__warn("the CUDA driver reports API version %d.%d, older than 12.4 (no cuFuncGetParamInfo): "
                 "graphshim passes every call through",
                 version / 1000, version % 1000 / 10);
        gs__passthrough = 1;
    }
}

static void init(void)
{
    int (*py_at_exit)(void (*)(void)), (*py_up)(void);

    gs__tls.depth++;
    gs__resolve_dlsym();
    gs__config_load();
    gs__run_note_ancestors();
    if (gs__cfg.trace)
        gs__trace_open();
    if (!gs__libcuda_open()) {
        gs__warn("cannot load libcuda.so.1 (%s): driver calls return CUDA_ERROR_NOT_FOUND", dlerror());
        gs__passthrough = 1;
    } else {
        for (int i = 0; i < GS_NROWS; i++)
            gs__real[i] = gs__real_dlsym(gs__libcuda, gs__rows[i].abi);
#ifdef GS_TEST
        gs__test_faults_install();
        gs__test_own_install();
        gs__test_clock_install();
#endif
        check_driver();
    }
    if (!gs__cfg.enable)
        gs__passthrough = 1;
    gs__slots_init();
    gs__engine_init();
    /* Python's hook for the end of its finalization, where this is a Python
    ** whose runtime is up (an embedding program may call CUDA before it). */
    *(void **)&py_up = gs__real_dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    *(void **)&py_at_exit = py_up && py_up() ? gs__real_dlsym(RTLD_DEFAULT, "Py_AtExit") : NULL;
    gs__ending_init(py_at_exit);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    atexit(at_exit);
    atomic_store_explicit(&gs__ready, 1, memory_order_release);
    gs__tls.depth--;
}

void gs__init(void)
{
    /* A call from inside init (libcuda's constructors may call dlsym) must not
    ** wait on itself. */
    if (gs__tls.depth)
        return;
    pthread_once(&init_once, init);
}
