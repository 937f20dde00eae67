#!/usr/bin/env python3
"""torch_decode: greedy autoregressive decode with a GRUCell: per step
e = Embedding(tok) + pos[j], h = GRUCell(e, h), logits = Linear(h),
tok = argmax(logits) fed back as the next input; batch 4, vocabulary 512,
16 steps per synchronisation (the step's tokens are copied to the host with
.cpu(), which waits), 40 synchronisations by default (--iters).  pos is a
16-row table indexed by the step within the block, so every block issues the
same kernels.  Prints every token id, their sha256 and the sha256 of the
final hidden state (out.sha256) to stdout; time per block goes to stderr."""
import argparse
import hashlib
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

NAME = "torch_decode"
BATCH, VOCAB, EMB, HID, STEPS = 4, 512, 128, 256, 16


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB)
        self.pos = nn.Parameter(torch.randn(STEPS, EMB) * 0.5)
        self.cell = nn.GRUCell(EMB, HID)
        self.head = nn.Linear(HID, VOCAB)

    def step(self, tok, h, j):
        e = self.emb(tok) + self.pos[j]
        h = self.cell(e, h)
        return self.head(h).argmax(dim=-1), h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=40, help="synchronisations (blocks of 16 steps)")
    args = ap.parse_args()
    if args.iters < 1:
        ap.error("--iters must be >= 1")
    require_cuda(NAME)
    deterministic_torch()

    torch.manual_seed(0)  # parameters are initialised on the CPU
    model = Decoder().eval()
    tok = torch.tensor([1, 17, 123, 400], dtype=torch.long)
    dev = torch.device("cuda")
    model = model.to(dev)
    tok = tok.to(dev)
    h = torch.zeros(BATCH, HID, device=dev)

    blocks = []
    times = []
    with torch.no_grad():
        torch.cuda.synchronize()
        t_start = time.perf_counter()
        t_prev = t_start
        for _ in range(args.iters):
            outs = []
            for j in range(STEPS):
                tok, h = model.step(tok, h, j)
                outs.append(tok)
            blocks.append(torch.stack(outs, dim=1).cpu())  # D2H, waits for the block
            t = time.perf_counter()
            times.append(t - t_prev)
            t_prev = t
        torch.cuda.synchronize()
        total = time.perf_counter() - t_start
    half = times[len(times) // 2:] or [total / args.iters]
    print(f"{NAME}: {args.iters} blocks of {STEPS} steps, {1e6 * total / args.iters:.1f} us/block "
          f"mean, {1e6 * statistics.median(half):.1f} us/block median (2nd half)", file=sys.stderr)

    th = hashlib.sha256()
    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    for i, blk in enumerate(blocks):
        line = " ".join(str(v) for v in blk.reshape(-1).tolist())
        th.update(line.encode() + b"\n")
        print(f"tokens[{i}] {line}")
    print(f"tokens.sha256 {th.hexdigest()}")
    print_values("h", h, [0, 1, BATCH * HID // 2, BATCH * HID - 1])
    print(f"out.sha256 {sha256_of(h)}")
    fail_if_not_finite(NAME, bool(torch.isfinite(h).all().item()))


if __name__ == "__main__":
    main()
