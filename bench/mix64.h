/*
** mix64.h: a bijection of 64-bit words whose outputs look unrelated for
** consecutive inputs (the finalizer of splitmix64), for workloads whose launches
** must never repeat (bench.cu, shim_cost.c).
*/
#ifndef GS_BENCH_MIX64_H
#define GS_BENCH_MIX64_H

static inline unsigned long mix64(unsigned long z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ul;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBul;
    return z ^ (z >> 31);
}

#endif
