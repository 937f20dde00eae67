#!/usr/bin/env python3
"""torch_resnet: inference loop of torchvision's resnet18 (weights=None, so the
parameters come from a fixed seed, no download), eval mode, no_grad, batch 1,
3x64x64 input, cuDNN convolutions (deterministic algorithm choice, no TF32).
Each iteration feeds the first three logits back into the next input:
x = base * (1 + 0.05 * tanh(0.1 * y[:, :3])) per channel, so the final output
depends on every iteration; torch.cuda.synchronize() after each iteration
(--sync-every).  Prints the sha256 of the final logits and a few exact values
to stdout; time per iteration goes to stderr.  Exits 77 (skip) when
torchvision is not installed."""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, print_values,  # noqa: E402
                        require_cuda, sha256_of, skip)

NAME = "torch_resnet"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--sync-every", type=int, default=1)
    args = ap.parse_args()
    if args.iters < 1:
        ap.error("--iters must be >= 1")
    try:
        from torchvision.models import resnet18
    except Exception as e:  # noqa: BLE001
        skip(NAME, f"torchvision not importable ({type(e).__name__}: {e})")
    require_cuda(NAME)
    deterministic_torch()

    torch.manual_seed(0)  # parameters are initialised on the CPU
    model = resnet18(weights=None).eval()
    g = torch.Generator().manual_seed(5)
    base = torch.rand(1, 3, 64, 64, generator=g) * 2 - 1
    dev = torch.device("cuda")
    model = model.to(dev)
    base = base.to(dev)

    times = []
    with torch.no_grad():
        x = base
        torch.cuda.synchronize()
        t_start = time.perf_counter()
        t_prev = t_start
        for i in range(args.iters):
            y = model(x)
            s = torch.tanh(y[:, :3] * 0.1).reshape(1, 3, 1, 1)
            x = torch.addcmul(base, base, s, value=0.05)
            if args.sync_every > 0 and (i + 1) % args.sync_every == 0:
                torch.cuda.synchronize()
                t = time.perf_counter()
                times.append((t - t_prev) / args.sync_every)
                t_prev = t
        torch.cuda.synchronize()
        total = time.perf_counter() - t_start
    half = times[len(times) // 2:] or [total / max(args.iters, 1)]
    print(f"{NAME}: {args.iters} iterations, {1e6 * total / max(args.iters, 1):.1f} us/iter mean, "
          f"{1e6 * statistics.median(half):.1f} us/iter median (2nd half)", file=sys.stderr)

    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    print(f"shape {tuple(y.shape)} {y.dtype}")
    print_values("out", y, [0, 1, 500, 999])
    print_values("in", x, [0, 64 * 64 + 7, 3 * 64 * 64 - 1])
    print(f"in.sha256 {sha256_of(x)}")
    print(f"out.sha256 {sha256_of(y)}")
    fail_if_not_finite(NAME, bool(torch.isfinite(y).all().item()))


if __name__ == "__main__":
    main()
