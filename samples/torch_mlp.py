#!/usr/bin/env python3
"""torch_mlp: inference loop of a small MLP, batch 1, d=256: 8 residual blocks
x = x + Linear(1024,256)(GELU(Linear(256,1024)(LayerNorm(x)))), eval mode,
no_grad, fixed seed, 500 iterations by default; the output is fed back
(through tanh, so it stays bounded) as the next input; synchronizes every
--sync-every iterations (default 1, like a token-by-token loop).  Prints the
sha256 of the final output bytes (and a few exact values) to stdout; time per
iteration goes to stderr."""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch_util import print_values, require_cuda, sha256_of  # noqa: E402

NAME = "torch_mlp"
D, H, BLOCKS = 256, 1024, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, H)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(H, D)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(*[Block() for _ in range(BLOCKS)])

    def forward(self, x):
        return self.blocks(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--sync-every", type=int, default=1)
    args = ap.parse_args()
    require_cuda(NAME)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    torch.manual_seed(0)  # parameters are initialised on the CPU
    model = MLP().eval()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1, D, generator=g)
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
    half = times[len(times) // 2:] or [total / max(args.iters, 1)]
    print(f"{NAME}: {args.iters} iterations, {1e6 * total / args.iters:.1f} us/iter mean, "
          f"{1e6 * statistics.median(half):.1f} us/iter median (2nd half)", file=sys.stderr)

    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    print(f"shape {tuple(y.shape)} {y.dtype}")
    print_values("out", y, [0, 1, D // 2, D - 1])
    print(f"out.sha256 {sha256_of(y)}")
    if not torch.isfinite(y).all().item():
        print(f"{NAME}: FAILED: non-finite values in the output", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
