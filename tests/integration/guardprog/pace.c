/*
** pace.c: guardprog's scenarios of hosts of every pace: GPU-bound steps, hosts
** that work, slow down or stall between launches, long sequences from a slow host.
*/
#include "guardprog.h"

/* A GPU-bound step (run it with FAKECUDA_KERNEL_US in the milliseconds): three
** launches, the host working 200 us after each, then a synchronize.  Eagerly the
** GPU begins with the first launch; held, only at the synchronize. */
static void gpubound(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    struct timespec nap = {0, 200000};
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        nanosleep(&nap, NULL);
        axpb(s, x);
        nanosleep(&nap, NULL);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* The same step whose products are one kernel four times with the same
** arguments (a GPU-bound step of equal matrix products): in its first
** iterations, before the sequence is stable, the search for loop bodies finds
** the four and holds them.  The host works 200 us before each: held, the GPU
** begins 0.8 ms later (8 % of a step, 11 times as long as the host's part). */
static void gpubound_body(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    struct timespec nap = {0, 200000};
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int k = 0; k < 4; k++) {
            nanosleep(&nap, NULL);
            axpb(s, x);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A host that works between launches: held ops wait long for their boundary,
** so they go out early in chunks.  Every fifth iteration the last op differs,
** after the chunks went out. */
static void slow(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    struct timespec nap = {0, 300000};
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        nanosleep(&nap, NULL);
        axpb(s, x);
        axpb(s, x);
        nanosleep(&nap, NULL);
        axpb(s, x);
        if (it % 5 == 4)
            axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* Its first two iterations are slow on the host (a program's first steps: caches,
** allocators, a library tuning itself), the rest fast. */
static void cold(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    struct timespec nap = {0, 20000000};
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        axpb(s, x);
        if (it < 2)
            nanosleep(&nap, NULL);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A host that works 2 ms in the first iteration, and `growth` times as long in
** each next one; every other iteration does one step more where `extra`. */
static void slowing(int iters, double growth, int extra)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    double us = 2000;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++, us *= growth) {
        input(s, x, it);
        axpb(s, x);
        nanosleep(&(struct timespec){(long)us / 1000000, (long)us % 1000000 * 1000}, NULL);
        copy(s, P(out), x);
        if (extra && it % 2)
            axpb(s, x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* A program that slows down as it runs (a heap that grows, a busier host): 6 %
** each iteration. */
static void drift(int iters)
{
    slowing(iters, 1.06, 0);
}

/* Two sequences, one the other's prefix, in turn (an iteration that sometimes
** does one step more), on a host that slows down 3 % each iteration: the
** shorter one's eager runs are held as the longer one's prefix. */
static void drift_prefix(int iters)
{
    slowing(iters, 1.03, 1);
}

/* A 60-op sequence from a slow host (tens of microseconds per op, as a Python
** framework issues them): the shape of a model's forward pass.  With stall_at,
** the host stalls for 20 ms after op stall_at + 1 (a garbage collection, a
** descheduled thread) in every `every`-th iteration from the sixth on (the
** tenth on with cut_at), and with cut_at, after op cut_at + 1 in the sixth and
** seventh iterations: a place the watchdog then cuts, which moves the chunks'
** places after it.  Every odd iteration, with odd = ODD_IDLE, the host works
** 20 ms before the last op (the GPU has run the chunks by the time the last
** graph goes out); with odd = ODD_FAST, it issues the ops without a pause, as
** a fast host. */
enum { ODD_SAME, ODD_IDLE, ODD_FAST };
static void slowlong_run(int iters, int polled, int stall_at, int every, int cut_at, int odd)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    struct timespec nap = {0, 20000}, wait = {0, 20000000};
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int j = 0; j < 58; j++) {
            axpb(s, x);
            if (!(odd == ODD_FAST && it % 2))
                nanosleep(&nap, NULL);
            if ((stall_at && it >= (cut_at ? 9 : 5) && it % every == every - 1 && j == stall_at) ||
                (cut_at && (it == 5 || it == 6) && j == cut_at))
                nanosleep(&wait, NULL);
        }
        if (odd == ODD_IDLE && it % 2)
            nanosleep(&wait, NULL);
        copy(s, P(out), x);
        if (polled) { /* asks once, then waits 20 ms on the host: the GPU is done by then */
            CUresult rc = cuStreamQuery(s);
            if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY)
                CHECK(rc);
            nanosleep(&wait, NULL);
        }
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

static void slowlong(int iters) { slowlong_run(iters, 0, 0, 0, 0, 0); }
static void slowlong_polled(int iters) { slowlong_run(iters, 1, 0, 0, 0, 0); }
static void slowlong_stall(int iters) { slowlong_run(iters, 0, 20, 3, 0, 0); }
static void slowlong_stall_late(int iters) { slowlong_run(iters, 0, 40, 2, 0, 0); }
static void slowlong_stall_moved(int iters) { slowlong_run(iters, 0, 26, 3, 20, 0); }
static void slowlong_idle_odd(int iters) { slowlong_run(iters, 0, 0, 0, 0, ODD_IDLE); }
static void slowlong_fast_odd(int iters) { slowlong_run(iters, 0, 0, 0, 0, ODD_FAST); }

/* twenty from a host that works 20 us after each of its ops 2 to 15, and
** issues the rest at once: its GPU gains by a chunk that ends at 8, not by
** one at 16. */
static void twenty_slow_head(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    struct timespec nap = {0, 20000};
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        input(s, x, it);
        for (int j = 0; j < 18; j++) {
            axpb(s, x);
            if (j < 14) /* after ops 2 to 15 */
                nanosleep(&nap, NULL);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

const struct gp_scenario gp_pace[] = {
    {"gpubound", gpubound},
    {"gpubound-body", gpubound_body},
    {"slow", slow},
    {"cold", cold},
    {"drift", drift},
    {"drift-prefix", drift_prefix},
    {"slowlong", slowlong},
    {"slowlong-polled", slowlong_polled},
    {"slowlong-stall", slowlong_stall},
    {"slowlong-stall-late", slowlong_stall_late},
    {"slowlong-stall-moved", slowlong_stall_moved},
    {"slowlong-idle-odd", slowlong_idle_odd},
    {"slowlong-fast-odd", slowlong_fast_odd},
    {"twenty-slow-head", twenty_slow_head},
    {NULL, NULL},
};
