/*
** fuzz_sites.c: where a program's calls come from, as graphshim names the
** sites of its bails (policy/stream/sites.c; tests/fuzz/README.md, "What the fuzzer reaches").
**
** A C program of the driver API names no frame of its own (its functions are
** static) and loads no C++ runtime.  Programs of other kinds do: a C++ program
** calls from exported, mangled functions with libstdc++ loaded globally; a
** Python loads PyTorch's libraries, libstdc++ among them, locally; a program
** linked with the static CUDA runtime calls through cuda* and __cuda*
** functions of its own, which graphshim counts as the CUDA libraries'.  A seed
** draws how libstdc++ is there and whether the program's own file is named by
** a bare argv[0] (fuzz_sites_begin), a thread from which of these frames its
** stream synchronizes come (fuzz_sync_via), and a kernel whether its name is
** mangled (fuzz_kernel_name).  None of it changes what the program prints but
** the kernels' names, alike with and without graphshim.
*/
#define _GNU_SOURCE
#include <dlfcn.h>

#include "fuzzprog.h"

/* libstdc++ loaded globally (1), locally (2), or not (0), as the seed draws;
** absent from the system, not.  A third of the programs are started as from
** a shell's PATH: argv[0] bare, which the loader gives for the program's own
** file (dladdr's dli_fname), a name without a folder. */
void fuzz_sites_begin(uint64_t seed, char **argv)
{
    uint64_t r = seed ^ 0x7369746573000000ull;
    unsigned how = rnd(&r, 3);
    const char *base = strrchr(argv[0], '/');

    if (how)
        (void)dlopen("libstdc++.so.6", RTLD_NOW | (how == 1 ? RTLD_GLOBAL : RTLD_LOCAL));
    if (base && rnd(&r, 3) == 0)
        argv[0] = (char *)base + 1;
}

/* A kernel's name: plain, mangled as a C++ kernel of (void *, int), (a few) a
** name that begins as a mangled one and is not (a demangler refuses it), or
** one that begins with an underscore and is no mangled name. */
void fuzz_kernel_name(char *name, size_t len, const char *plain, uint64_t salt)
{
    switch (salt % 7) {
    case 0:
    case 1:
        snprintf(name, len, "_Z%zu%sPvi", strlen(plain), plain);
        break;
    case 2:
        snprintf(name, len, "_Z%s", plain);
        break;
    case 3:
        snprintf(name, len, "_%s", plain);
        break;
    default:
        snprintf(name, len, "%s", plain);
        break;
    }
}

typedef CUresult (*sync_fn)(CUstream);

/* Exported and kept out of tail calls, so that a backtrace sees the frame. */
#define KEEP __attribute__((noinline, used, visibility("default")))
#define FRAME(name)                                  \
    KEEP CUresult name(sync_fn fn, CUstream s)       \
    {                                                \
        CUresult rc = fn(s);                         \
        __asm__ volatile("" ::: "memory");           \
        return rc;                                   \
    }
/* The static runtime's and a driver-named wrapper: graphshim counts them as
** the CUDA libraries' and names the frame outside them. */
FRAME(cudaFuzzStreamSynchronize)
FRAME(__cudaFuzzStreamSynchronize)
FRAME(cuFuzzStreamSynchronize)
/* A C++ model's step, under its mangled name (fuzz::Model::step()). */
KEEP CUresult fuzz_model_step(sync_fn fn, CUstream s) __asm__("_ZN4fuzz5Model4stepEv");
FRAME(fuzz_model_step)
/* The program's own, named as sites: a C function that begins as the
** libraries' do (c, cu), a library's that is not the driver's (cu and a
** lower-case letter, as cuBLAS's), and cu and a digit. */
FRAME(compute_step)
FRAME(cublasFuzzSync)
FRAME(cu2FuzzSync)

/* A stream synchronize of the program's (fn) made from the frames of kind how:
** 1-3 the CUDA libraries' inside this function's, 4 a C++ method's, 5-7 the
** program's own of names like the libraries'. */
KEEP CUresult fuzz_sync_via(int how, CUresult (*fn)(CUstream), CUstream s)
{
    CUresult rc;

    switch (how) {
    case 1: rc = cudaFuzzStreamSynchronize(fn, s); break;
    case 2: rc = __cudaFuzzStreamSynchronize(fn, s); break;
    case 3: rc = cuFuzzStreamSynchronize(fn, s); break;
    case 5: rc = compute_step(fn, s); break;
    case 6: rc = cublasFuzzSync(fn, s); break;
    case 7: rc = cu2FuzzSync(fn, s); break;
    default: rc = fuzz_model_step(fn, s); break;
    }
    __asm__ volatile("" ::: "memory");
    return rc;
}
