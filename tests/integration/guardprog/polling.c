/*
** polling.c: guardprog's scenarios of a host that waits with no synchronize: for
** mapped memory a held kernel sets (in this process or another), for the count of
** a held loop body, for an event it polls.
*/
#include "guardprog.h"

/* The host polls mapped memory that a kernel sets, with no CUDA call, after
** idle_ms with no CUDA call at all.  A flag that takes over limit_ms fails the
** program (exit 3). */
static void poll_flag(int iters, long idle_ms, long limit_ms)
{
    CUstream s;
    CUdeviceptr x = dev();
    int *flag;
    CHECK(cuMemHostAlloc((void **)&flag, sizeof *flag, CU_MEMHOSTALLOC_DEVICEMAP));
    *flag = 0;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int v = 1;
        struct timespec t0, t;
        if (idle_ms)
            nanosleep(&(struct timespec){idle_ms / 1000, idle_ms % 1000 * 1000000}, NULL);
        *flag = 0;
        input(s, x, it);
        axpb(s, x);
        launch(k_setflag, s, (void *[]){&flag, &v});
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (*(volatile int *)flag != v) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > limit_ms) {
                fprintf(stderr, "iteration %d: the flag took over %ld ms\n", it, limit_ms);
                exit(3);
            }
        }
        printf("%d flag %d\n", it, *(volatile int *)flag);
        CHECK(cuStreamSynchronize(s));
    }
}

static void watchdog(int iters)
{
    poll_flag(iters, 0, 3000);
}

/* As watchdog, but the host first does no CUDA call for 30 ms each iteration:
** long enough for the watchdog, with nothing held, to sleep until a stream
** holds again.  Held work must still go out within the watchdog's limit, not
** its sleep (a second). */
static void idle_poll(int iters)
{
    poll_flag(iters, 30, 300);
}

/* Two processes: a kernel of this one sets a flag in host memory shared with
** the other (registered with the driver and mapped, so that the kernel writes
** it), which waits for the flag and then answers through a pipe; this one waits
** for the answer with no CUDA call.  Held work that never went out would keep
** both waiting: each gives up after 2 s (exit 3). */
static void two_proc(int iters)
{
    CUstream s;
    CUdeviceptr x = dev(), dflag;
    int *flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int answer[2], st;
    pid_t peer;

    if (flag == MAP_FAILED || pipe(answer) != 0)
        exit(2);
    *flag = 0;
    CHECK(cuMemHostRegister_v2(flag, 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
    CHECK(cuMemHostGetDevicePointer_v2(&dflag, flag, 0));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    fflush(stdout);
    peer = fork();
    if (peer == 0) {
        /* The other process makes no CUDA call: it waits for each iteration's
        ** flag and answers. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (int it = 0; it < iters; it++) {
            time_t t0 = time(NULL);
            while (*(volatile int *)flag != it + 1)
                if (time(NULL) - t0 > 2)
                    _exit(3);
            if (write(answer[1], "k", 1) != 1)
                _exit(2);
        }
        _exit(0);
    }
    for (int it = 0; it < iters; it++) {
        int v = it + 1;
        struct pollfd p = {answer[0], POLLIN, 0};
        char c;
        input(s, x, it);
        axpb(s, x);
        launch(k_setflag, s, (void *[]){&dflag, &v});
        if (poll(&p, 1, 2000) != 1 || read(answer[0], &c, 1) != 1) {
            fprintf(stderr, "iteration %d: the other process never answered\n", it);
            kill(peer, SIGKILL);
            exit(3);
        }
        printf("%d answered, flag %d\n", it, *(volatile int *)flag);
        CHECK(cuStreamSynchronize(s));
    }
    if (waitpid(peer, &st, 0) != peer || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "the other process failed\n");
        exit(3);
    }
}

/* Waits, with no CUDA call, until the count is want (iteration it); fails the
** program after 3 s. */
static void wait_count(const int *count, int want, int it)
{
    time_t t0 = time(NULL);
    while (*(const volatile int *)count != want) {
        if (time(NULL) - t0 > 3) {
            fprintf(stderr, "iteration %d: the count stopped at %d\n", it, *(const volatile int *)count);
            exit(3);
        }
    }
}

/* A loop of one kernel, 100 + it launches a synchronize, held as a loop body;
** in iterations 2 and 5 the host stalls for 20 ms in the middle of the loop (a
** descheduled thread, a page fault), and the watchdog issues what is held. */
static void body_stall(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 100 + it; k++) {
            if ((it == 2 || it == 5) && k == 70)
                usleep(20000);
            axpb(s, x);
        }
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* After a loop, the host waits for the count of a kernel launched
** 40 + it times, held as a loop body, with no CUDA call, then synchronizes
** (body-poll); or without a synchronize in the loop (body-poll-nosync: one
** segment); or with 8 more launches of the same kernel after the wait, then a
** synchronize (body-poll-more: the loop goes on after the host waited for it);
** or napping 50 us between its polls (body-poll-nap: on the fake driver's
** virtual clock, each nap is time the watchdog counts). */
static void body_poll_each(int iters, int sync, int more, int nap)
{
    CUstream s;
    int *count;
    CHECK(cuMemHostAlloc((void **)&count, sizeof *count, CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        *count = 0;
        for (int k = 0; k < 40 + it; k++)
            launch(k_bump, s, (void *[]){&count});
        if (nap)
            for (int polls = 0; *(const volatile int *)count != 40 + it && polls < 100000; polls++)
                usleep(50);
        wait_count(count, 40 + it, it);
        printf("%d count %d\n", it, *(volatile int *)count);
        for (int k = 0; k < 8 * more; k++)
            launch(k_bump, s, (void *[]){&count});
        if (sync)
            CHECK(cuStreamSynchronize(s));
    }
    CHECK(cuStreamSynchronize(s));
}
static void body_poll(int iters) { body_poll_each(iters, 1, 0, 0); }
static void body_poll_nosync(int iters) { body_poll_each(iters, 0, 0, 0); }
static void body_poll_more(int iters) { body_poll_each(iters, 1, 1, 0); }
static void body_poll_nap(int iters) { body_poll_each(iters, 1, 0, 1); }

/* body-poll's shape, varied: the host waits for the count only every
** `every`-th iteration, after `loops` loops of the body an iteration (another
** kernel between them), and the count moves through `ring` slots (a new
** pointer, so a new body, each iteration). */
static void body_poll_vary(int iters, int every, int loops, int ring)
{
    CUstream s;
    CUdeviceptr x = dev();
    int *slots;
    CHECK(cuMemHostAlloc((void **)&slots, 16 * sizeof *slots, CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int *count = slots + it % ring;
        *count = 0;
        for (int l = 0; l < loops; l++) {
            if (l)
                axpb(s, x);
            for (int k = 0; k < 40 + it; k++)
                launch(k_bump, s, (void *[]){&count});
        }
        if (it % every == 0)
            wait_count(count, loops * (40 + it), it);
        CHECK(cuStreamSynchronize(s));
        printf("%d count %d\n", it, *(volatile int *)count);
    }
}
static void body_poll_every3(int iters) { body_poll_vary(iters, 3, 1, 1); }
static void body_poll_loops3(int iters) { body_poll_vary(iters, 1, 3, 1); }
static void body_poll_ring(int iters) { body_poll_vary(iters, 1, 1, 16); }

/* The host waits half-way through a loop of 100 + it launches, with no CUDA
** call, for the count so far (a progress check); the loop then goes on to a
** synchronize (sync 1), or to another kernel (sync 0: one segment). */
static void body_poll_mid_each(int iters, int sync)
{
    CUstream s;
    CUdeviceptr x = dev();
    int *count;
    CHECK(cuMemHostAlloc((void **)&count, sizeof *count, CU_MEMHOSTALLOC_DEVICEMAP));
    *count = 0;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int it = 0; it < iters; it++) {
        int base = *(volatile int *)count;
        for (int k = 0; k < 100 + it; k++) {
            launch(k_bump, s, (void *[]){&count});
            if (k == 49)
                wait_count(count, base + 50, it);
        }
        if (sync)
            CHECK(cuStreamSynchronize(s));
        else
            axpb(s, x);
        printf("%d ok\n", it);
    }
    CHECK(cuStreamSynchronize(s));
    printf("count %d\n", *(volatile int *)count);
}
static void body_poll_mid(int iters) { body_poll_mid_each(iters, 1); }
static void body_poll_mid_nosync(int iters) { body_poll_mid_each(iters, 0); }

/* 10000 launches that never repeat (a grid of their own each), then loops of
** one kernel, one launch more each time: the search for loop bodies rests during
** the first part, and must find the loops after it. */
static void quiet_then_loop(int iters)
{
    CUstream s;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    for (int k = 0; k < 10000; k++) {
        float v = (float)k;
        CHECK(cuLaunchKernel(k_fill, 1 + (unsigned)k, 1, 1, 32, 1, 1, 0, s, (void *[]){&x, &v, &n}, NULL));
    }
    CHECK(cuStreamSynchronize(s));
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 100 + it; k++)
            axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
    }
}

/* An event polled mid-sequence, as PyTorch's allocator and NCCL's watchdog poll
** theirs: each iteration's four ops on s, the host spinning on the event that
** the previous iteration recorded after its second op.  The record issued what
** s held before it, so the poll has nothing to wait for: the four ops stay one
** sequence. */
static void event_poll(int iters)
{
    CUstream s;
    CUevent e;
    CUdeviceptr x;
    float *out;
    prepare(&s, &x, &out, CU_STREAM_NON_BLOCKING);
    CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < iters; it++) {
        CUresult rc;
        input(s, x, it);
        axpb(s, x);
        while ((rc = cuEventQuery(e)) == CUDA_ERROR_NOT_READY)
            ;
        CHECK(rc);
        axpb(s, x);
        copy(s, P(out), x);
        CHECK(cuStreamSynchronize(s));
        show(it, "out", out);
        CHECK(cuEventRecord(e, s));
    }
}

const struct gp_scenario gp_polling[] = {
    {"watchdog", watchdog},
    {"idle-poll", idle_poll},
    {"two-proc", two_proc},
    {"quiet-then-loop", quiet_then_loop},
    {"body-poll", body_poll},
    {"body-stall", body_stall},
    {"body-poll-nosync", body_poll_nosync},
    {"body-poll-more", body_poll_more},
    {"body-poll-mid", body_poll_mid},
    {"body-poll-mid-nosync", body_poll_mid_nosync},
    {"body-poll-every3", body_poll_every3},
    {"body-poll-loops3", body_poll_loops3},
    {"body-poll-ring", body_poll_ring},
    {"event-poll", event_poll},
    {"body-poll-nap", body_poll_nap},
    {NULL, NULL},
};
