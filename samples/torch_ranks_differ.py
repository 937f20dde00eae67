#!/usr/bin/env python3
"""torch_ranks_differ: ranks whose work differs between collectives, one
process a GPU, torch.distributed over NCCL; run it with torchrun:

    torchrun --standalone --nproc-per-node 2 samples/torch_ranks_differ.py [--steps N]

Each step on every rank: 8 tiny elementwise steps x = frac(a*x + b) on a vector
of 4096 floats (a, b of period 4 in the step and depending on the rank); on
odd ranks, on even steps only, one extra kernel x += 0.25 (so the odd ranks'
work alternates between two sequences); then an all-reduce (sum) of x, x
divided by the number of ranks, 8 more steps (the same on every rank), a
synchronize.  Every rank issues the same collectives in the same order; the
extra kernel's result goes into the sum, so every rank's output depends on it.
Rank 0 prints the sha256 of x every 20 steps, a few exact values, and every
rank's sha256 of its last pre-collective x and of its final x to stdout.
Needs as many GPUs as processes; fewer: SKIP (exit 77)."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, frac_steps, init_distributed,  # noqa: E402
                        print_job, print_values, sha256_of)

NAME = "torch_ranks_differ"
N = 4096


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    rank, world, _, dev = init_distributed(NAME)
    deterministic_torch(strict=True)

    g = torch.Generator().manual_seed(7 + rank)
    x = torch.rand(N, generator=g).to(dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for it in range(args.steps):
        x = frac_steps(x, it, 1 + rank)
        if rank % 2 == 1 and it % 2 == 0:
            x.add_(0.25)  # the extra kernel: odd ranks, even steps
        pre = x
        x = x.clone()
        dist.all_reduce(x)
        x = frac_steps(x / world, it, 2)
        torch.cuda.synchronize()
        if rank == 0 and (it + 1) % 20 == 0:
            print(f"x.sha256[{it}] {sha256_of(x)}")
    total = time.perf_counter() - t0
    fail_if_not_finite(NAME, bool(torch.isfinite(x).all()))
    hashes = [None] * world
    dist.all_gather_object(hashes, (sha256_of(pre), sha256_of(x)))
    if rank == 0:
        print_job(NAME, args.steps, world, total)
        print_values("x", x, [0, 1, N // 2, N - 1])
        print(f"out.sha256 {sha256_of(x)}")  # rank 0's
        for r, (hp, hx) in enumerate(hashes):
            print(f"rank[{r}].pre.sha256 {hp}")
            print(f"rank[{r}].sha256 {hx}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
