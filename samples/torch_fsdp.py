#!/usr/bin/env python3
"""torch_fsdp: fully sharded data-parallel training (FSDP2, fully_shard) of a
small MLP in bf16 mixed precision over NCCL, one process a GPU; run it with
torchrun:

    torchrun --standalone --nproc-per-node 2 samples/torch_fsdp.py [--steps N]

The model: 4 residual blocks x = x + Linear(1024,256)(GELU(Linear(256,1024)(LayerNorm(x)))),
d=256, then a Linear head, initialised on the CPU with a fixed seed (every rank
the same).  Each block and the whole model are sharded with fully_shard
(parameters all-gathered in bf16 before each block's forward and backward,
gradients reduce-scattered in fp32; each rank keeps and updates its fp32 shard
of every parameter).  Each rank trains on its own four fixed batches of 32 in
turn (seeded by its rank); MSE loss in fp32, AdamW, 200 steps, loss.item()
every step.  Rank 0 prints every step's loss (float.hex), a few values of the
full (gathered) parameters, their sha256 and the sha256 of every rank's own
shards to stdout; time per step goes to stderr.  Needs as many GPUs as
processes (fewer: SKIP, exit 77), and fully_shard (PyTorch 2.6 or later,
torch.distributed._composable.fsdp in 2.4-2.5; without it: SKIP)."""
import argparse
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before cuBLAS starts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, init_distributed, print_job,  # noqa: E402
                        print_losses, print_values, sha256_of, skip)

NAME = "torch_fsdp"
D, H, BLOCKS, BATCH, NBATCHES = 256, 1024, 4, 32, 4

try:
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
except ImportError:
    try:
        from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError:
        skip(NAME, f"fully_shard (FSDP2) is not in torch {torch.__version__}")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, H)
        self.fc2 = nn.Linear(H, D)

    def forward(self, x):
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln(x))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    rank, world, _, dev = init_distributed(NAME)
    deterministic_torch(strict=True)

    torch.manual_seed(0)  # parameters are initialised on the CPU, the same on every rank
    model = nn.Sequential(*[Block() for _ in range(BLOCKS)], nn.Linear(D, D)).to(dev)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model[:BLOCKS]:
        fully_shard(block, mp_policy=mp)
    fully_shard(model, mp_policy=mp)  # the head, and the root that drives prefetching
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    g = torch.Generator().manual_seed(100 + rank)
    batches = [(torch.randn(BATCH, D, generator=g).to(dev), torch.randn(BATCH, D, generator=g).to(dev))
               for _ in range(NBATCHES)]

    losses = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in range(args.steps):
        x, y = batches[step % NBATCHES]
        opt.zero_grad()
        loss = ((model(x).float() - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())  # synchronizes every step
    total = time.perf_counter() - t0
    # Every rank's own fp32 shards, then the full parameters (all-gathered on every rank).
    shards = torch.cat([p.detach().to_local().reshape(-1) for p in model.parameters()])
    params = torch.cat([p.detach().full_tensor().reshape(-1) for p in model.parameters()])
    fail_if_not_finite(NAME, bool(torch.isfinite(params).all()))
    hashes = [None] * world
    dist.all_gather_object(hashes, sha256_of(shards))
    if rank == 0:
        print_job(NAME, args.steps, world, total)
        print_losses("loss", losses)
        print_values("param", params, [0, 1, params.numel() // 2, params.numel() - 1])
        print(f"out.sha256 {sha256_of(params)}")
        for r, h in enumerate(hashes):
            print(f"rank[{r}].sha256 {h}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
