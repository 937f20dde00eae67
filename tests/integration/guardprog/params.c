/*
** params.c: guardprog's scenarios of what a launch passes: buffers in turn,
** parameter layouts as library kernels have them (40 parameters, 4 KiB and
** 32,000-byte structs), modules and libraries loaded in turn, launch attributes
** and function attributes.
*/
#include "guardprog.h"

/* Kernel pointers alternate between two buffers. */
static void params_sets(int iters, int nsets)
{
    CUstream s;
    CUdeviceptr x[5] = {dev(), dev(), dev(), dev(), dev()};
    float *out = pinned();
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        fill(s, x[it % nsets], (float)(1000 * (it % nsets)));
        axpb(s, x[it % nsets]);
        copy(s, P(out), x[it % nsets]);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void params(int iters)
{
    params_sets(iters, 2);
}

/* Five sets in turn: more than a sequence keeps graphs for. */
static void params5(int iters)
{
    params_sets(iters, 5);
}

/* --- Parameter layouts as library kernels have them ------------------------- */

/* Mixes every byte of every parameter (after the output pointer) into *out, in
** order: a launch whose key missed a byte would replay a graph with the wrong one. */
static void mix_params(void **params, int n, const size_t *sizes)
{
    uint64_t *out = FAKECUDA_ARG(uint64_t *, 0), h = *out;
    for (int i = 1; i < n; i++)
        for (size_t b = 0; b < sizes[i]; b++)
            h = (h ^ ((const unsigned char *)params[i])[b]) * 0x100000001b3ull;
    *out = h;
}

#define MANY_SIZES 8, 1, 2, 4, 256, 3, 16, 1, 8, 128, 2, 4, 64, 1, 12, 8, 32, 2, 1, 4, \
                   200, 8, 1, 2, 24, 4, 8, 96, 1, 2, 4, 8, 16, 33, 1, 8, 4, 2, 1, 8
FAKECUDA_KERNEL(many, MANY_SIZES)
{
    static const size_t sizes[] = {MANY_SIZES};
    (void)d;
    mix_params(params, 40, sizes);
}

/* 72 parameters of 8 bytes: more than the 64 pointers graphshim keeps on its
** stack to issue a held launch (graph/key.c). */
#define W8 8, 8, 8, 8, 8, 8, 8, 8
#define WIDE_SIZES W8, W8, W8, W8, W8, W8, W8, W8, W8
FAKECUDA_KERNEL(wide, WIDE_SIZES)
{
    static const size_t sizes[] = {WIDE_SIZES};
    (void)d;
    mix_params(params, 72, sizes);
}

struct big { unsigned char bytes[4096]; };
FAKECUDA_KERNEL(big, sizeof(uint64_t *), sizeof(struct big))
{
    static const size_t sizes[] = {sizeof(uint64_t *), sizeof(struct big)};
    (void)d;
    mix_params(params, 2, sizes);
}

/* A kernel whose one parameter (after the output) is a 32,000-byte struct, the
** most a launch may pass (32,764 bytes in all); it folds three of its bytes and
** a word of it into the output, so that a launch lost, repeated or given stale
** bytes shows. */
struct huge { unsigned char bytes[32000]; };
FAKECUDA_KERNEL(huge, sizeof(uint64_t *), sizeof(struct huge))
{
    uint64_t *out = FAKECUDA_ARG(uint64_t *, 0);
    const struct huge *h = params[1];
    uint32_t w;
    (void)d;
    memcpy(&w, h->bytes + 20000, sizeof w);
    *out = (*out ^ h->bytes[0] ^ (uint64_t)h->bytes[16000] << 8 ^ (uint64_t)h->bytes[31999] << 16 ^
            (uint64_t)w << 24) * 0x100000001b3ull;
}

/* Three kernels for the module scenario: two of one layout, different code. */
FAKECUDA_KERNEL(mod_add, sizeof(uint64_t *), sizeof(unsigned))
{
    (void)d;
    *FAKECUDA_ARG(uint64_t *, 0) += FAKECUDA_ARG(unsigned, 1);
}
FAKECUDA_KERNEL(mod_mul, sizeof(uint64_t *), sizeof(unsigned))
{
    (void)d;
    *FAKECUDA_ARG(uint64_t *, 0) *= FAKECUDA_ARG(unsigned, 1);
}
FAKECUDA_KERNEL(mod_wide, sizeof(uint64_t *), 1, sizeof(uint64_t), 2)
{
    static const size_t sizes[] = {sizeof(uint64_t *), 1, sizeof(uint64_t), 2};
    (void)d;
    mix_params(params, 4, sizes);
}

static void show64(int it, const char *what, const uint64_t *v)
{
    printf("%d %s %016llx\n", it, what, (unsigned long long)*v);
}

/* A kernel with 40 parameters of 1 to 256 bytes; a parameter among the first 16
** alternates between two values, so two sequences differ only there. */
static void many_params(int iters)
{
    CUmodule m;
    CUfunction f;
    CUstream s;
    uint64_t *out;
    unsigned char args[40][256];
    void *argv[40];
    static const size_t sizes[] = {MANY_SIZES};

    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "many"));
    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 40; i++) {
        memset(args[i], 0x11 * (i % 15) + 1, sizes[i]);
        argv[i] = args[i];
    }
    *(uint64_t **)args[0] = out;
    for (int it = 0; it < iters; it++) {
        args[5][1] = (unsigned char)(it % 2);
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, argv, NULL));
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, argv, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* The 72-parameter kernel, launched twice a synchronize, three times every
** 7th iteration: the held two go out eagerly there (a mismatch), each launch
** issued from its key's bytes, as graphshim's allocations may fail
** (tests/integration/test_faults.c). */
static void wide_params(int iters)
{
    CUmodule m;
    CUfunction f;
    CUstream s;
    uint64_t *out, args[72];
    void *argv[72];

    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "wide"));
    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 72; i++)
        args[i] = 0x0101010101010101ull * (uint64_t)(i + 1), argv[i] = &args[i];
    args[0] = (uint64_t)(uintptr_t)out;
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < (it % 7 == 6 ? 3 : 2); k++)
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, argv, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* A kernel whose one parameter (after the output) is a 4 KiB struct; its last
** bytes alternate. */
static void big_struct(int iters)
{
    CUmodule m;
    CUfunction f;
    CUstream s;
    uint64_t *out;
    static struct big b;

    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "big"));
    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (size_t i = 0; i < sizeof b.bytes; i++)
        b.bytes[i] = (unsigned char)(i * 7);
    for (int it = 0; it < iters; it++) {
        b.bytes[sizeof b.bytes - 1] = (unsigned char)(it % 2);
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &b}, NULL));
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &b}, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* 1,000 launches of the 32,000-byte-parameter kernel between two
** synchronizes, the bytes the same within an iteration and different between
** two in a row (as library kernels that pass their arguments as one struct). */
static void huge_loop(int iters)
{
    CUmodule m;
    CUfunction f;
    CUstream s;
    uint64_t *out;
    static struct huge h;

    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "huge"));
    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (size_t i = 0; i < sizeof h.bytes; i++)
        h.bytes[i] = (unsigned char)(i * 13);
    for (int it = 0; it < iters; it++) {
        h.bytes[0] = h.bytes[31999] = (unsigned char)(it % 2);
        h.bytes[20000] = (unsigned char)(it % 2 + 7);
        for (int j = 0; j < 1000; j++)
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &h}, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* Modules loaded and unloaded in turn, each with one kernel of those named
** (nmods of mod_add, mod_mul, mod_wide): an unloaded module's function handle
** comes back for the next module's kernel, of the same layout and other code
** (mod_add, mod_mul) or of another layout (mod_wide).  each() runs the kernel
** of load r. */
static void modules_in_turn(int iters, int nmods, void (*each)(CUstream, CUfunction, int, uint64_t *))
{
    static const char *const names[] = {"mod_add", "mod_mul", "mod_wide"};
    CUstream s;
    uint64_t *out;

    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int r = 0; r < iters; r++) {
        CUmodule m;
        CUfunction f;
        CHECK(cuModuleLoadData(&m, "image"));
        CHECK(cuModuleGetFunction(&f, m, names[r % nmods]));
        each(s, f, r, out);
        CHECK(cuModuleUnload(m));
    }
}

/* Four iterations of two launches of the module's kernel. */
static void module_each(CUstream s, CUfunction f, int r, uint64_t *out)
{
    unsigned v = 3;
    for (int it = 0; it < 4; it++) {
        if (r % 3 == 2) {
            unsigned char c = 5;
            uint64_t w = 0x0102030405060708ull;
            unsigned short h = 9;
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &c, &w, &h}, NULL));
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &c, &w, &h}, NULL));
        } else {
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
            CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
        }
        CHECK(cuStreamSynchronize(s));
        show64(r * 4 + it, r % 3 == 0 ? "mod_add" : r % 3 == 1 ? "mod_mul" : "mod_wide", out);
    }
}

static void module(int iters)
{
    modules_in_turn(iters, 3, module_each);
}

/* Kernels of a library, launched by their CUkernel handles as the runtime
** launches its own: an add and a multiply each iteration. */
static void library(int iters)
{
    CUstream s;
    CUlibrary lib;
    CUkernel add, mul;
    uint64_t *out;
    unsigned v = 3;

    CHECK(cuMemAllocHost_v2((void **)&out, sizeof *out));
    *out = 1;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuLibraryLoadData(&lib, "image", NULL, NULL, 0, NULL, NULL, 0));
    CHECK(cuLibraryGetKernel(&add, lib, "mod_add"));
    CHECK(cuLibraryGetKernel(&mul, lib, "mod_mul"));
    for (int it = 0; it < iters; it++) {
        CHECK(cuLaunchKernel((CUfunction)add, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
        CHECK(cuLaunchKernel((CUfunction)mul, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
        CHECK(cuStreamSynchronize(s));
        show64(it, "out", out);
    }
}

/* cuLaunchKernelEx with attributes whose unused union bytes are garbage that
** changes every call, as a caller's stack has them. */
static void attrs(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    float a = 2.0f, b = 1.0f;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        CUlaunchAttribute at[2];
        CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, s, at, 2};
        memset(at, 0x40 + it, sizeof at);
        at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        at[0].value.priority = 0;
        at[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at[1].value.clusterDim.x = at[1].value.clusterDim.y = at[1].value.clusterDim.z = 1;
        input(s, x, it);
        CHECK(cuLaunchKernelEx(&cfg, k_axpb, (void *[]){&x, &a, &b, &n}, NULL));
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* As PyTorch does: a kernel's dynamic shared memory limit set before each of its
** launches to what the launch needs: raised to 64 KiB for the first, lowered to
** 32 KiB for the second (a held first launch must go out before the lowering, or
** it fails), and set again to 32 KiB, its value, before a third.  The preferred
** carveout changes every 5th iteration (a hint), and every 10th iteration a
** cluster attribute changes, a real change. */
static void func_attr(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    float a = 2.0f, b = 1.0f;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
        if (it % 5 == 4)
            CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, it % 10 == 4 ? 50 : 25));
        if (it % 10 == 9)
            CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, it % 20 == 9));
        input(s, x, it);
        CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 65536, s, (void *[]){&x, &a, &b, &n}, NULL));
        CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 32768));
        CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 32768, s, (void *[]){&x, &a, &b, &n}, NULL));
        CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 32768));
        CHECK(cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 32768, s, (void *[]){&x, &a, &b, &n}, NULL));
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A kernel's dynamic shared memory limit raised to 64 KiB, its two launches of
** 64 KiB learned and graphed, then the limit lowered to 32 KiB for two
** iterations: those launches fail, each at its own call, as without graphshim
** (held, they would return success and run); raised again, they are graphed
** again. */
static void attr_lowered(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    float a = 2.0f, b = 1.0f;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
    for (int it = 0; it < iters; it++) {
        int low = it >= iters - 3 && it < iters - 1;
        if (it >= iters - 3)
            CHECK(cuFuncSetAttribute(k_axpb, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, low ? 32768 : 65536));
        input(s, x, it);
        for (int k = 0; k < 2; k++) {
            CUresult rc = cuLaunchKernel(k_axpb, 1, 1, 1, 32, 1, 1, 65536, s, (void *[]){&x, &a, &b, &n}, NULL);
            if (rc != CUDA_SUCCESS || low)
                printf("%d: launch %d: %d\n", it, k, (int)rc);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A loop of one kernel per module load, one launch more each time: no segment
** repeats, only the loop body.  The functions of mod_add and mod_mul, of one
** layout, get the same handle in turn. */
static void body_module_each(CUstream s, CUfunction f, int r, uint64_t *out)
{
    unsigned v = 3;
    for (int k = 0; k < 40 + r; k++)
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, (void *[]){&out, &v}, NULL));
    CHECK(cuStreamSynchronize(s));
    show64(r, r % 2 ? "mod_mul" : "mod_add", out);
}

static void body_module(int iters)
{
    modules_in_turn(iters, 2, body_module_each);
}

const struct gp_scenario gp_params[] = {
    {"params", params},
    {"params5", params5},
    {"body-module", body_module},
    {"many-params", many_params},
    {"wide-params", wide_params},
    {"big-struct", big_struct},
    {"huge-loop", huge_loop},
    {"module", module},
    {"library", library},
    {"attrs", attrs},
    {"func-attr", func_attr},
    {"attr-lowered", attr_lowered},
    {NULL, NULL},
};
