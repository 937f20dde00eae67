/*
 * fakecuda.h - kernel-registration convention for programs that run over the
 * CPU fake of the CUDA driver (build/fakecuda/libcuda.so.1).
 *
 * A "kernel" is a host function in the test program's own executable, which
 * must be linked with -rdynamic so that the fake finds it with
 * dlsym(RTLD_DEFAULT, ...).  For a kernel named NAME the program defines
 *
 *   void fakekernel_NAME(void **params, const struct fakecuda_dims *d);
 *   const size_t fakekernel_NAME_params[] = { sizeof(arg0), ..., 0 };
 *
 * cuModuleGetFunction(&f, mod, "NAME") / cuLibraryGetKernel(&k, lib, "NAME")
 * then resolve to it (any image pointer may be passed to cuModuleLoadData /
 * cuLibraryLoadData).  params[i] points to a private COPY of argument i (the
 * copy is made at launch time, as the real driver does); the function runs
 * once per launch and loops over the grid/block itself if it wants to.
 * Parameter layout (for cuFuncGetParamInfo and CU_LAUNCH_PARAM_BUFFER_POINTER):
 * each parameter is aligned to min(size, 8) rounded up to a power of two.
 * Kernels may also be defined at run time, with any layout, by
 * fakecuda_define_kernel below.
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fakecuda_dims {
    unsigned grid[3];      /* gridDimX, gridDimY, gridDimZ */
    unsigned block[3];     /* blockDimX, blockDimY, blockDimZ */
    unsigned shared_mem;   /* dynamic shared memory bytes */
};

typedef void (*fakecuda_kernel_fn)(void **params, const struct fakecuda_dims *d);

#define FAKECUDA_EXPORT __attribute__((visibility("default"), used))

/* FAKECUDA_KERNEL(scale, sizeof(float *), sizeof(float), sizeof(int)) { body }
 * defines fakekernel_scale and fakekernel_scale_params.  Inside the body
 * `params` and `d` are in scope; FAKECUDA_ARG(type, i) reads argument i. */
#define FAKECUDA_KERNEL(name, ...)                                              \
    FAKECUDA_EXPORT const size_t fakekernel_##name##_params[] = {__VA_ARGS__, 0}; \
    FAKECUDA_EXPORT void fakekernel_##name(void **params __attribute__((unused)), \
                                           const struct fakecuda_dims *d __attribute__((unused)))

/* A kernel without parameters. */
#define FAKECUDA_KERNEL0(name)                                                  \
    FAKECUDA_EXPORT const size_t fakekernel_##name##_params[] = {0};           \
    FAKECUDA_EXPORT void fakekernel_##name(void **params __attribute__((unused)), \
                                           const struct fakecuda_dims *d __attribute__((unused)))

#define FAKECUDA_ARG(type, i) (*(type *)params[(i)])

/* Defines (or redefines) the kernel called name at run time: fn with the
 * parameters of the 0-terminated sizes, laid out as above.  Later
 * cuModuleGetFunction / cuLibraryGetKernel calls for name find it, before any
 * fakekernel_<name> symbol; functions and kernels resolved earlier keep the
 * definition they were resolved to.  Returns 0, or -1 for a NULL or empty
 * argument or a layout of more than 32764 bytes (the real driver's limit on
 * parameter bytes).  The fake copies name and sizes. */
int fakecuda_define_kernel(const char *name, fakecuda_kernel_fn fn, const size_t *sizes);

/* The fake's clock, in ns.  With FAKECUDA_CLOCK=virtual it moves only where
 * time is spent on purpose: the fake's own costs (FAKECUDA_LAUNCH_US and the
 * like, at once), a synchronize that waits for the GPU's busy time
 * (FAKECUDA_KERNEL_US), and fakecuda_advance_ns; a process descheduled on a
 * busy machine sees no time pass; each driver call takes 100 ns of it.
 * Otherwise it is CLOCK_MONOTONIC. */
unsigned long long fakecuda_clock_ns(void);
/* How many launches of kernels whose names contain part were captured into
 * graphs so far, by anyone (the fuzzer's oracle: collectives never are). */
unsigned long fakecuda_captured(const char *part);
/* What the driver ran so far, counted over every caller: "eager_ops" (kernels,
** copies and memsets enqueued on a stream to run; also "eager_kernels",
** "eager_copies", "eager_memsets"), "captured_ops" (enqueued into a capture),
** "graph_launches" (graphs launched to run), "graph_ops" and "graph_kernels"
** (the ops among their nodes), "execs_made" and "execs_destroyed" (graph
** executables), "eager_before_exec" (the eager ops before the first
** executable was made, -1 before one was); -1 for another name.  With FAKECUDA_STATS=path set, the fake
** writes each as a line "name value" to path at exit, after the exit handlers
** of the program and of graphshim, and then "clock_ns" (fakecuda_clock_ns). */
long fakecuda_count(const char *what);
/* The program spends ns of the host's time: with the virtual clock the clock
 * moves on by ns at once, and the function given to fakecuda_on_advance runs
 * (graphshim's test build checks its timers there); otherwise it sleeps. */
void fakecuda_advance_ns(unsigned long long ns);
/* cb runs after each fakecuda_advance_ns (NULL: nothing does). */
void fakecuda_on_advance(void (*cb)(void));

/* Total number of threads of a launch (grid * block). */
static inline unsigned long long fakecuda_threads(const struct fakecuda_dims *d)
{
    return (unsigned long long)d->grid[0] * d->grid[1] * d->grid[2] *
           d->block[0] * d->block[1] * d->block[2];
}

#ifdef __cplusplus
}
#endif
#endif
