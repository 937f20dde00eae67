#!/usr/bin/env python3
"""torch_two_stream: inference of a model with two branches on two streams, as
PyTorch's "usage with multiple streams" writes it: each iteration forks a side
stream from the current one (Stream.wait_stream: a new event each time), runs
branch A (4 x Linear(256, 256) + ReLU) on the current stream and branch B on the
side stream, joins the side stream back, adds both into the output (fed back,
through tanh, as the next input), and every other iteration a copy stream
brings the output to pinned host memory, ordered by an event made once;
batch 8, no_grad, fixed seed, 300 iterations, a synchronize every --sync-every
iterations (default 10).  Prints the sha256 of the final output and of the host
copy (a missing fork, join or bridge shows there)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch_util import print_values, require_cuda, sha256_of  # noqa: E402

NAME = "torch_two_stream"
D, BATCH, DEPTH = 256, 8, 4


def branch():
    return nn.Sequential(*[m for _ in range(DEPTH) for m in (nn.Linear(D, D), nn.ReLU())])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--sync-every", type=int, default=10)
    args = ap.parse_args()
    require_cuda(NAME)
    torch.backends.cuda.matmul.allow_tf32 = False

    torch.manual_seed(0)
    a, b = branch().eval(), branch().eval()
    x = torch.randn(BATCH, D, generator=torch.Generator().manual_seed(1))
    dev = torch.device("cuda")
    a, b, x = a.to(dev), b.to(dev), x.to(dev)
    side, copy = torch.cuda.Stream(), torch.cuda.Stream()
    ready = torch.cuda.Event()
    host = torch.zeros(BATCH, D, pin_memory=True)
    out = torch.zeros(BATCH, D, device=dev)
    with torch.no_grad():
        for i in range(args.iters):
            cur = torch.cuda.current_stream()
            side.wait_stream(cur)
            ya = a(x)
            with torch.cuda.stream(side):
                yb = b(x)
            cur.wait_stream(side)
            cur.wait_stream(copy)  # the last copy has read out before it changes
            torch.add(ya, yb, out=out)
            x = torch.tanh(out)
            if i % 2:
                ready.record(cur)
                copy.wait_event(ready)
                with torch.cuda.stream(copy):
                    host.copy_(out, non_blocking=True)
            if args.sync_every > 0 and (i + 1) % args.sync_every == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()

    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    print_values("out", out, [0, 1, D // 2, D - 1])
    print(f"out.sha256 {sha256_of(out)}")
    print(f"host.sha256 {sha256_of(host)}")
    if not torch.isfinite(out).all().item():
        print(f"{NAME}: FAILED: non-finite values in the output", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
