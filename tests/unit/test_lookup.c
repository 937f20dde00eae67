/*
** test_lookup.c: entry-point lookup, trampolines and the real-pointer table,
** with the real driver swapped out (no libcuda needed).
*/
#include <criterion/criterion.h>
#include <stdint.h>

#include "../../interpose/interpose.h"
#include "../../policy/entry/guard.h"

static void no_driver(void)
{
    /* Pretend initialization ran, with an empty driver table. */
    atomic_store(&gs__ready, 1);
    for (int i = 0; i < GS_NROWS; i++)
        gs__real[i] = NULL;
}

TestSuite(lookup, .init = no_driver);

Test(lookup, driver_pointer_names_the_variant)
{
    gs__real[GS_ID_cuLaunchKernel] = (void *)0x1000;
    gs__real[GS_ID_cuLaunchKernel_ptsz] = (void *)0x2000;
    /* Whatever the flags, the driver's answer decides. */
    cr_assert_eq(gs__wrap_proc("cuLaunchKernel", (void *)0x2000, 12000, 0), (void *)&cuLaunchKernel_ptsz);
    cr_assert_eq(gs__wrap_proc("cuLaunchKernel", (void *)0x1000, 12000, 2), (void *)&cuLaunchKernel);
}

Test(lookup, unknown_pointer_falls_back_to_version_and_flags)
{
    /* No variant resolved yet: the table picks by version and per-thread flag. */
    cr_assert_eq(gs__wrap_proc("cuLaunchKernel", (void *)0x3000, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
                 (void *)&cuLaunchKernel_ptsz);
    cr_assert_eq(gs__real[GS_ID_cuLaunchKernel_ptsz], (void *)0x3000);
    cr_assert_eq(gs__wrap_proc("cuCtxSynchronize", (void *)0x4000, 12080, 0), (void *)&cuCtxSynchronize);
    cr_assert_eq(gs__wrap_proc("cuCtxSynchronize", (void *)0x5000, 13000, 0), (void *)&cuCtxSynchronize_v2);
}

Test(lookup, per_thread_request_without_per_thread_variant_gets_legacy)
{
    cr_assert_eq(gs__wrap_proc("cuCtxSynchronize", (void *)0x4000, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
                 (void *)&cuCtxSynchronize);
}

Test(lookup, harmless_query_gets_the_driver_pointer_untraced)
{
    gs__real[GS_ID_cuCtxGetCurrent] = (void *)0x6000;
    cr_assert_eq(gs__wrap_symbol("cuCtxGetCurrent", (void *)0x6000), (void *)0x6000);
}

/* A stand-in for a driver entry point with many arguments of mixed kinds, some
** passed on the stack. */
static int seen_args;
static CUresult many(int a, long b, double c, const char *d, int e, int f, int g, long h, double i, int j, float k,
                     long l, int m, double n)
{
    seen_args = a + (int)b + (int)c + (d[0] == 'x') + e + f + g + (int)h + (int)i + j + (int)k + (int)l + m + (int)n;
    return (CUresult)(a * 1000 + m);
}

Test(lookup, trampoline_passes_every_argument_and_the_result)
{
    typedef CUresult (*many_fn)(int, long, double, const char *, int, int, int, long, double, int, float, long,
                                int, double);
    many_fn t = (many_fn)gs__slot_for("cuSomethingNew", (void *)&many, GS_UNCLASSIFIED);
    long before = atomic_load(&gs__calls_by_class[GS_UNCLASSIFIED]);
    CUresult rc;

    cr_assert_neq((void *)t, (void *)&many, "an unknown entry point must get a trampoline");
    rc = t(1, 2, 3.0, "x", 5, 6, 7, 8, 9.0, 10, 11.0f, 12, 13, 14.0);
    cr_assert_eq(rc, 1013);
    cr_assert_eq(seen_args, 1 + 2 + 3 + 1 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14);
    /* The hook point before an unclassified call ran. */
    cr_assert_eq(atomic_load(&gs__calls_by_class[GS_UNCLASSIFIED]), before + 1);
    /* The same entry point gets the same slot. */
    cr_assert_eq((void *)gs__slot_for("cuSomethingNew", (void *)&many, GS_UNCLASSIFIED), (void *)t);
}

Test(lookup, exported_pass_row_without_driver_returns_not_found)
{
    /* cuMemFree_v2 is a GS_PASS row: its exported trampoline finds no driver. */
    gs__slots_init();
    cr_assert_eq(cuMemFree_v2(0), CUDA_ERROR_NOT_FOUND);
}

static CUstream synced;
static CUresult failing_sync(CUstream s)
{
    synced = s;
    return CUDA_ERROR_LAUNCH_FAILED;
}

Test(lookup, typed_wrapper_returns_the_driver_result_unchanged)
{
    gs__real[GS_ID_cuStreamSynchronize] = (void *)&failing_sync;
    cr_assert_eq(cuStreamSynchronize((CUstream)0x77), CUDA_ERROR_LAUNCH_FAILED);
    cr_assert_eq(synced, (CUstream)0x77);
    /* The real driver gets the program's own argument, not the normalized one. */
    cr_assert_eq(cuStreamSynchronize(0), CUDA_ERROR_LAUNCH_FAILED);
    cr_assert_eq(synced, (CUstream)0);
}

Test(lookup, typed_wrapper_without_driver_returns_not_found)
{
    cr_assert_eq(cuStreamSynchronize((CUstream)0x77), CUDA_ERROR_NOT_FOUND);
    cr_assert_eq(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL), CUDA_ERROR_NOT_FOUND);
}

Test(lookup, stream_zero_is_normalized_by_variant)
{
    cr_assert_eq(gs__norm_stream(0, 0), CU_STREAM_LEGACY);
    cr_assert_eq(gs__norm_stream(0, 1), CU_STREAM_PER_THREAD);
    cr_assert_eq(gs__norm_stream((CUstream)0x55, 1), (CUstream)0x55);
}
