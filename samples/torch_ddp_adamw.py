#!/usr/bin/env python3
"""torch_ddp_adamw: data-parallel training of a small transformer encoder with
DistributedDataParallel over NCCL, gradient buckets, AdamW and dropout, one
process a GPU; run it with torchrun:

    torchrun --standalone --nproc-per-node 2 samples/torch_ddp_adamw.py [--steps N]

The model: 4 pre-norm blocks (LayerNorm, 4-head self-attention written out with
matmul and softmax, LayerNorm, MLP 128->512->128, dropout 0.1 on the attention
weights and after each sublayer), d=128, sequences of 16, batch 16 per rank,
then a Linear head; MSE loss against fixed targets.  Parameters are initialised
on the CPU with a fixed seed (every rank the same); each rank trains on its own
four fixed batches in turn and seeds its dropout by its rank.  DDP with
bucket_cap_mb=1 (the model's 3.2 MB of gradients go in several buckets whose
all-reduces overlap the backward), AdamW, 200 steps, loss.item() every step.
Rank 0 prints every step's loss (float.hex), a few parameter values and the
sha256 of every rank's parameters to stdout; time per step goes to stderr.
Needs as many GPUs as processes; fewer: SKIP (exit 77)."""
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
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, init_distributed, print_job,  # noqa: E402
                        print_losses, print_values, sha256_of)

NAME = "torch_ddp_adamw"
D, HEADS, FF, BLOCKS, T, BATCH, NBATCHES, P = 128, 4, 512, 4, 16, 16, 4, 0.1


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, FF), nn.Linear(FF, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-2, -1)) * (D // HEADS) ** -0.5
        a = F.dropout(a.softmax(-1), P, self.training)
        h = (a @ v).transpose(1, 2).reshape(b, t, D)
        x = x + F.dropout(self.proj(h), P, self.training)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), P, self.training)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    rank, world, local, dev = init_distributed(NAME)
    deterministic_torch(strict=True)

    torch.manual_seed(0)  # parameters are initialised on the CPU, the same on every rank
    model = nn.Sequential(*[Block() for _ in range(BLOCKS)], nn.Linear(D, D)).to(dev)
    ddp = DDP(model, device_ids=[local], bucket_cap_mb=1)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3, weight_decay=0.01)
    g = torch.Generator().manual_seed(100 + rank)
    batches = [(torch.randn(BATCH, T, D, generator=g).to(dev), torch.randn(BATCH, T, D, generator=g).to(dev))
               for _ in range(NBATCHES)]
    torch.manual_seed(1000 + rank)  # dropout masks: this rank's own CUDA generator

    losses = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in range(args.steps):
        x, y = batches[step % NBATCHES]
        opt.zero_grad()
        loss = ((ddp(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())  # synchronizes every step
    total = time.perf_counter() - t0
    params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    fail_if_not_finite(NAME, bool(torch.isfinite(params).all()))
    hashes = [None] * world
    dist.all_gather_object(hashes, sha256_of(params))
    if rank == 0:
        print_job(NAME, args.steps, world, total)
        print_losses("loss", losses)
        print_values("param", params, [0, 1, params.numel() // 2, params.numel() - 1])
        print(f"out.sha256 {sha256_of(params)}")  # rank 0's
        for r, h in enumerate(hashes):
            print(f"rank[{r}].sha256 {h}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
