#!/usr/bin/env python3
"""torch_tp: tensor-parallel training written by hand (Megatron-style MLP
blocks) over NCCL, one process a GPU; run it with torchrun:

    torchrun --standalone --nproc-per-node 2 samples/torch_tp.py [--steps N]

The model: 4 residual blocks x = x + Linear(1024,256)(GELU(Linear(256,1024)(LayerNorm(x)))),
d=256, built whole on the CPU with a fixed seed; each rank keeps its slice of
every block: the rows 1024/world*rank... of the first Linear (column parallel)
and the same columns of the second (row parallel); LayerNorm and the second
bias are replicated.  Per block in forward: the column-parallel Linear, GELU,
the row-parallel Linear, an all-reduce (sum) of its partial output, the bias;
in backward the matching all-reduce of the gradient of the column-parallel
layer's input (an autograd Function, identity in forward).  Every rank sees
the same four fixed batches of 64 in turn; MSE loss, AdamW, 200 steps,
loss.item() every step.  The first step's loss is checked against the whole
model run on one GPU (tolerance 1e-5), and the replicated parameters against
every other rank's (bit for bit).  Rank 0 prints every step's loss (float.hex),
a few parameter values and the sha256 of every rank's parameters to stdout;
time per step goes to stderr.  The world size must divide 1024.  Needs as many
GPUs as processes; fewer: SKIP (exit 77)."""
import argparse
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before cuBLAS starts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, init_distributed, maybe_die,  # noqa: E402
                        print_job, print_losses, print_values, sha256_of)

NAME = "torch_tp"
D, H, BLOCKS, BATCH, NBATCHES = 256, 1024, 4, 64, 4


def fail(msg):
    print(f"{NAME}: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


class CopyToTP(torch.autograd.Function):
    """Identity in forward; all-reduce of the gradient in backward."""
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        g = g.contiguous().clone()
        dist.all_reduce(g)
        return g


class ReduceFromTP(torch.autograd.Function):
    """All-reduce (sum) of the partial outputs in forward; identity in backward."""
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous().clone()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, H)
        self.fc2 = nn.Linear(H, D)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class TPBlock(nn.Module):
    def __init__(self, full, rank, world):
        super().__init__()
        rows = slice(H // world * rank, H // world * (rank + 1))
        self.ln = nn.LayerNorm(D)
        self.ln.load_state_dict(full.ln.state_dict())
        self.w1 = nn.Parameter(full.fc1.weight.detach()[rows].clone())  # column parallel
        self.b1 = nn.Parameter(full.fc1.bias.detach()[rows].clone())
        self.w2 = nn.Parameter(full.fc2.weight.detach()[:, rows].clone())  # row parallel
        self.b2 = nn.Parameter(full.fc2.bias.detach().clone())  # replicated

    def forward(self, x):
        h = F.gelu(F.linear(CopyToTP.apply(self.ln(x)), self.w1, self.b1))
        return x + ReduceFromTP.apply(F.linear(h, self.w2)) + self.b2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    rank, world, _, dev = init_distributed(NAME)
    deterministic_torch(strict=True)
    if H % world:
        fail(f"the world size {world} does not divide {H}")

    torch.manual_seed(0)  # the whole model on the CPU, the same on every rank
    full = nn.Sequential(*[Block() for _ in range(BLOCKS)])
    model = nn.Sequential(*[TPBlock(b, rank, world) for b in full]).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    g = torch.Generator().manual_seed(100)  # the same data on every rank
    batches = [(torch.randn(BATCH, D, generator=g).to(dev), torch.randn(BATCH, D, generator=g).to(dev))
               for _ in range(NBATCHES)]
    with torch.no_grad():
        x, y = batches[0]
        ref = ((full.to(dev)(x) - y) ** 2).mean().item()
    del full

    losses = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in range(args.steps):
        x, y = batches[step % NBATCHES]
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())  # synchronizes every step
        maybe_die(rank, step)
    total = time.perf_counter() - t0
    if abs(losses[0] - ref) > 1e-5 * max(1.0, abs(ref)):
        fail(f"first loss {losses[0]!r}, the whole model gives {ref!r}")
    params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    fail_if_not_finite(NAME, bool(torch.isfinite(params).all()))
    replicated = torch.cat([p.detach().reshape(-1) for n, p in model.named_parameters()
                            if ".ln." in n or n.endswith(".b2")])
    hashes = [None] * world
    dist.all_gather_object(hashes, (sha256_of(params), sha256_of(replicated)))
    if len({h[1] for h in hashes}) != 1:
        fail("the replicated parameters differ between ranks")
    if rank == 0:
        print_job(NAME, args.steps, world, total)
        print_losses("loss", losses)
        print_values("param", params, [0, 1, params.numel() // 2, params.numel() - 1])
        print(f"replicated.sha256 {hashes[0][1]}")
        print(f"out.sha256 {sha256_of(params)}")  # rank 0's
        for r, h in enumerate(hashes):
            print(f"rank[{r}].sha256 {h[0]}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
