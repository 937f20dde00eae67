#!/usr/bin/env python3
"""torch_encoder: inference loop of nn.TransformerEncoder, 4 x
TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
dropout=0, batch_first=True), eval mode, no_grad (PyTorch's fused encoder
fast path), input 1x32x256 from a fixed seed, 200 iterations by default; the
output is fed back through tanh as the next input; torch.cuda.synchronize()
after each iteration (--sync-every).  Prints the sha256 of the final output
and a few exact values to stdout; time per iteration goes to stderr."""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, print_values,  # noqa: E402
                        require_cuda, sha256_of)

NAME = "torch_encoder"
D, HEADS, FF, LAYERS, SEQ = 256, 4, 1024, 4, 32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--sync-every", type=int, default=1)
    args = ap.parse_args()
    if args.iters < 1:
        ap.error("--iters must be >= 1")
    require_cuda(NAME)
    deterministic_torch()

    torch.manual_seed(0)  # parameters are initialised on the CPU
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False).eval()
    g = torch.Generator().manual_seed(2)
    x = torch.rand(1, SEQ, D, generator=g) * 2 - 1
    dev = torch.device("cuda")
    model = model.to(dev)
    x = x.to(dev)

    times = []
    with torch.no_grad():
        torch.cuda.synchronize()
        t_start = time.perf_counter()
        t_prev = t_start
        for i in range(args.iters):
            y = model(x)
            x = torch.tanh(y)
            if args.sync_every > 0 and (i + 1) % args.sync_every == 0:
                torch.cuda.synchronize()
                t = time.perf_counter()
                times.append((t - t_prev) / args.sync_every)
                t_prev = t
        torch.cuda.synchronize()
        total = time.perf_counter() - t_start
    half = times[len(times) // 2:] or [total / args.iters]
    print(f"{NAME}: {args.iters} iterations, {1e6 * total / args.iters:.1f} us/iter mean, "
          f"{1e6 * statistics.median(half):.1f} us/iter median (2nd half)", file=sys.stderr)

    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    print(f"shape {tuple(y.shape)} {y.dtype}")
    print_values("out", y, [0, 1, SEQ * D // 2 + 3, SEQ * D - 1])
    print(f"out.sha256 {sha256_of(y)}")
    fail_if_not_finite(NAME, bool(torch.isfinite(y).all().item()))


if __name__ == "__main__":
    main()
