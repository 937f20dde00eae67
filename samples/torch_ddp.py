#!/usr/bin/env python3
"""torch_ddp: data-parallel training of a small MLP with DistributedDataParallel
over NCCL, one process a GPU; run it with torchrun:

    torchrun --standalone --nproc-per-node 2 samples/torch_ddp.py [--steps N]

The model: 4 residual blocks x = x + Linear(1024,256)(GELU(Linear(256,1024)(x))),
d=256, initialised on the CPU with a fixed seed (every rank the same); each
rank trains on its own four fixed batches of 32 in turn (seeded by its rank);
MSE loss, SGD (lr 0.01), 200 steps, loss.item() every step (a synchronize).
Rank 0 prints every step's loss (float.hex), a few parameter values and the
sha256 of all parameters to stdout; time per step goes to stderr.  Needs as
many GPUs as processes; fewer: SKIP (exit 77)."""
import argparse
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before cuBLAS starts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, init_distributed,  # noqa: E402
                        print_values, sha256_of)

NAME = "torch_ddp"
D, H, BLOCKS, BATCH, NBATCHES = 256, 1024, 4, 32, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, H)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(H, D)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    rank, world, local, dev = init_distributed(NAME)
    deterministic_torch(strict=True)

    torch.manual_seed(0)  # parameters are initialised on the CPU, the same on every rank
    model = nn.Sequential(*[Block() for _ in range(BLOCKS)]).to(dev)
    ddp = DDP(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(100 + rank)
    batches = [(torch.randn(BATCH, D, generator=g).to(dev), torch.randn(BATCH, D, generator=g).to(dev))
               for _ in range(NBATCHES)]

    losses = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in range(args.steps):
        x, y = batches[step % NBATCHES]
        opt.zero_grad(set_to_none=False)
        loss = ((ddp(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())  # synchronizes every step
    total = time.perf_counter() - t0
    params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    fail_if_not_finite(NAME, bool(torch.isfinite(params).all()))
    if rank == 0:
        print(f"{NAME}: {args.steps} steps on {world} ranks, {1e6 * total / args.steps:.1f} us/step",
              file=sys.stderr)
        print(f"sample {NAME}")
        print(f"steps {args.steps}")
        print(f"world {world}")
        for i, v in enumerate(losses):
            print(f"loss[{i}] {v.hex()}")
        print_values("param", params, [0, 1, params.numel() // 2, params.numel() - 1])
        print(f"out.sha256 {sha256_of(params)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
