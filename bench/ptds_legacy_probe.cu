// ptds_legacy_probe.cu: does a thread's wait on its per-thread default stream
// cover work another thread issued on the legacy stream after that stream's
// last op?
//
// graphshim's watchdog issues a per-thread stream's held work from its own
// thread, which cannot name that stream: it issues it on CU_STREAM_LEGACY,
// relying on the documented implicit synchronization ("the legacy stream
// first waits on all blocking streams, the action is queued in the legacy
// stream, and then all blocking streams wait on the legacy stream").  The
// program's thread then waits on its per-thread stream (a synchronize, or an
// event recorded on it and queried) and reads what the work wrote.  Here a
// second thread launches a kernel on the legacy stream that spins for SPIN_MS
// and then writes a flag into mapped memory; the first thread, after the
// launch returned, waits on its per-thread stream in each of four ways and
// reads the flag.  1 everywhere: the wait covered the legacy work.
//
//   nvcc -O2 -arch=sm_90 -o ptds_legacy_probe ptds_legacy_probe.cu -lcuda -lpthread && ./ptds_legacy_probe
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.cuh"

#define SPIN_MS 200

__global__ void spin_then_set(volatile int *flag, long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles)
        ;
    *flag = 1;
}

__global__ void nop(int *p) { if (p) *p += 0; }

static volatile int *flag;
static long long cycles;

static void *legacy_launch(void *)
{
    spin_then_set<<<1, 1, 0, cudaStreamLegacy>>>(flag, cycles);
    CK(cudaGetLastError());
    return NULL;
}

// One way of waiting on the per-thread stream (how), after another thread's
// legacy launch; prior: the per-thread stream had work before (1) or none (0).
static int probe(int how, int prior)
{
    pthread_t t;
    cudaEvent_t e;
    *flag = 0;
    CK(cudaDeviceSynchronize());
    if (prior)
        nop<<<1, 1, 0, cudaStreamPerThread>>>(NULL);
    pthread_create(&t, NULL, legacy_launch, NULL);
    pthread_join(t, NULL);
    switch (how) {
    case 0:
        CK(cudaStreamSynchronize(cudaStreamPerThread));
        break;
    case 1:
        CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        CK(cudaEventRecord(e, cudaStreamPerThread));
        CK(cudaEventSynchronize(e));
        CK(cudaEventDestroy(e));
        break;
    case 2: {
        CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        CK(cudaEventRecord(e, cudaStreamPerThread));
        cudaError_t q;
        while ((q = cudaEventQuery(e)) == cudaErrorNotReady)
            ;
        CK(q);
        CK(cudaEventDestroy(e));
        break;
    }
    default: {
        cudaError_t q;
        while ((q = cudaStreamQuery(cudaStreamPerThread)) == cudaErrorNotReady)
            ;
        CK(q);
    }
    }
    int seen = *flag;
    CK(cudaDeviceSynchronize());
    return seen;
}

int main()
{
    static const char *const ways[] = {"cudaStreamSynchronize", "event record + cudaEventSynchronize",
                                       "event record + cudaEventQuery spin", "cudaStreamQuery spin"};
    int rate_khz, *h, bad = 0;
    CK(cudaSetDeviceFlags(cudaDeviceMapHost));
    CK(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
    cycles = (long long)rate_khz * SPIN_MS;
    CK(cudaHostAlloc((void **)&h, sizeof(int), cudaHostAllocMapped));
    flag = h;
    for (int prior = 0; prior < 2; prior++)
        for (int how = 0; how < 4; how++) {
            int seen = probe(how, prior);
            bad += !seen;
            printf("ptds-legacy: %-38s per-thread stream %-9s: flag %d (%s)\n", ways[how],
                   prior ? "busy" : "idle", seen, seen ? "the wait covered the legacy work" : "NOT covered");
        }
    printf("ptds-legacy: %d of 8 waits did not cover the legacy work\n", bad);
    return 0;
}
