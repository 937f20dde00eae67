#!/usr/bin/env python3
"""torch_basic: a loop of elementwise ops and a 256x256 float32 torch.matmul
(cuBLAS GEMM) on CUDA tensors; one scalar is read back per iteration (a
D2H copy + sync, like printing a loss).  Prints a deterministic result to
stdout: sha256 of the final tensor's bytes, a few exact values and the hash of
the per-iteration scalars.  Timing goes to stderr."""
import argparse
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch_util import print_values, require_cuda, sha256_of  # noqa: E402

NAME = "torch_basic"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=100)
    args = ap.parse_args()
    require_cuda(NAME)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    n = 256
    g = torch.Generator().manual_seed(1234)  # CPU generator: same inputs everywhere
    a = (torch.rand(n, n, generator=g) * 2 - 1) * (1.0 / 16)
    x = torch.rand(n, n, generator=g) * 2 - 1
    b = (torch.rand(n, n, generator=g) * 2 - 1) * 0.5
    dev = torch.device("cuda")
    a, x, b = a.to(dev), x.to(dev), b.to(dev)

    scalars = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(args.iters):
        y = torch.matmul(a, x)                  # cuBLAS GEMM
        y = y * 0.75 + b                        # elementwise
        x = torch.tanh(y) + (i % 4) * 0.0625    # elementwise
        x = torch.where(x > 0.9, x - 1.0, x)    # elementwise
        scalars.append(x[3, 5].item())          # D2H + sync each iteration
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"{NAME}: {args.iters} iterations, {1e6 * dt / args.iters:.1f} us/iter",
          file=sys.stderr)

    sh = hashlib.sha256()
    for v in scalars:
        sh.update(float(v).hex().encode() + b"\n")
    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    print(f"shape {tuple(x.shape)} {x.dtype}")
    print_values("out", x, [0, 1, n * n // 2 + 7, n * n - 1])
    print(f"out.sha256 {sha256_of(x)}")
    print(f"scalars.sha256 {sh.hexdigest()}")
    print(f"matmuls {args.iters}")
    if not torch.isfinite(x).all().item():
        print(f"{NAME}: FAILED: non-finite values in the output", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
