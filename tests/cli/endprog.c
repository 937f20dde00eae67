/*
** endprog.c: a CUDA program over the fake driver that ends in a way of its
** choosing, for tests/cli/run.sh (a report and a gate whatever ends it).
**
**   endprog HOW [ITERS]
**
** Runs ITERS (default 20) iterations of three kernel launches and a stream
** synchronize, then ends as HOW says:
**   exit        returns 0 from main
**   _exit       _exit(0): no exit handler runs
**   INT, TERM, HUP
**               sends itself that signal at its default action
**   handler-INT, handler-TERM
**               installs a handler of its own first (before its first CUDA
**               call), which prints "handler SIG" and exits with status 7
**               (exit: as many programs' handlers do); then sends itself the
**               signal
**   reraise-INT, reraise-TERM
**               the same, but the handler prints "handler SIG", puts the
**               default action back and sends itself the signal again (ends
**               by it)
**   wait        prints "ready" and waits for a signal (killed from outside)
*/
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fakecuda/fakecuda.h"
#include "../integration/cucheck.h"

FAKECUDA_KERNEL(twice, sizeof(float *), sizeof(int))
{
    float *x = FAKECUDA_ARG(float *, 0);
    for (int i = 0; i < FAKECUDA_ARG(int, 1); i++)
        x[i] *= 2.0f;
}

static void own_handler(int sig)
{
    char line[32];
    int n = snprintf(line, sizeof line, "handler %d\n", sig);

    if (write(1, line, (size_t)n) < 0)
        _exit(8);
    exit(7);
}

static void reraise_handler(int sig)
{
    char line[32];
    int n = snprintf(line, sizeof line, "handler %d\n", sig);

    if (write(1, line, (size_t)n) < 0)
        _exit(8);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int signal_of(const char *name)
{
    return strcmp(name, "INT") == 0 ? SIGINT : strcmp(name, "TERM") == 0 ? SIGTERM : strcmp(name, "HUP") == 0 ? SIGHUP : 0;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "exit";
    int iters = argc > 2 ? atoi(argv[2]) : 20, n = 64, sig = signal_of(how);
    CUdevice d;
    CUcontext ctx;
    CUmodule m;
    CUfunction f;
    CUstream s;
    CUdeviceptr x;

    if (strncmp(how, "handler-", 8) == 0) {
        sig = signal_of(how + 8);
        signal(sig, own_handler);
    } else if (strncmp(how, "reraise-", 8) == 0) {
        sig = signal_of(how + 8);
        signal(sig, reraise_handler);
    }
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&m, "image"));
    CHECK(cuModuleGetFunction(&f, m, "twice"));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&x, (size_t)n * sizeof(float)));
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 3; k++)
            CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, (void *[]){&x, &n}, NULL));
        CHECK(cuStreamSynchronize(s));
    }
    fflush(stdout);
    if (strcmp(how, "_exit") == 0)
        _exit(0);
    if (strcmp(how, "wait") == 0) {
        puts("ready");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (sig) {
        raise(sig);
        sleep(5); /* the report is written by another thread: the signal ends the process after it */
        return 3;
    }
    return 0;
}
