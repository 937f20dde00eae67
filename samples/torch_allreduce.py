#!/usr/bin/env python3
"""torch_allreduce: tiny kernels around an all-reduce, in a loop, one process a
GPU, torch.distributed over NCCL; run it with torchrun:

    torchrun --standalone --nproc-per-node 2 samples/torch_allreduce.py [--iters N]

Each iteration: 8 tiny elementwise steps x = frac(a*x + b) on a vector of 4096
floats (a, b of period 4 in the iteration), an all-reduce (sum) of x, then x is
divided by the number of ranks and goes through 8 more steps; a synchronize
ends the iteration.  The work between the collectives is the same every
iteration: graphshim may graph it, never the collective itself (NCCL's kernels
are never held).  Rank 0 prints the sha256 of x every 50 iterations, a few
exact values and the final sha256 to stdout.  Needs as many GPUs as processes;
fewer: SKIP (exit 77)."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch_util import fail_if_not_finite, frac_steps, init_distributed, print_values, sha256_of  # noqa: E402

NAME = "torch_allreduce"
N = 4096


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=300)
    args = ap.parse_args()
    rank, world, _, dev = init_distributed(NAME)

    g = torch.Generator().manual_seed(7 + rank)
    x = torch.rand(N, generator=g).to(dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for it in range(args.iters):
        x = frac_steps(x, it, 1)
        dist.all_reduce(x)
        x = frac_steps(x / world, it, 2)
        torch.cuda.synchronize()
        if rank == 0 and (it + 1) % 50 == 0:
            print(f"x.sha256[{it}] {sha256_of(x)}")
    total = time.perf_counter() - t0
    fail_if_not_finite(NAME, bool(torch.isfinite(x).all()))
    if rank == 0:
        print(f"{NAME}: {args.iters} iterations on {world} ranks, {1e6 * total / args.iters:.1f} us/iter",
              file=sys.stderr)
        print(f"sample {NAME}")
        print(f"iters {args.iters}")
        print(f"world {world}")
        print_values("x", x, [0, 1, N // 2, N - 1])
        print(f"out.sha256 {sha256_of(x)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
