#!/usr/bin/env python3
"""torch_pipeline: two-stage pipeline-parallel training (GPipe schedule) with
point-to-point sends over NCCL, one process a GPU; run it with torchrun:

    torchrun --standalone --nproc-per-node 2 samples/torch_pipeline.py [--steps N]

Ranks 2p and 2p+1 form pipeline p (the world size must be even), with a
process group of their own for their sends and receives.  The model, 4
residual blocks x = x + Linear(1024,256)(GELU(Linear(256,1024)(LayerNorm(x)))),
d=256, is built whole on the CPU with a fixed seed; stage 0 (even rank) keeps
blocks 0-1, stage 1 (odd rank) blocks 2-3 and the MSE loss.  Each pipeline
trains on its own four fixed batches of 32 in turn (seeded by p), each split
into 4 micro-batches of 8: stage 0 runs the 4 forwards, sending each
activation (dist.send), then receives the 4 gradients in reverse order and
runs the backwards; stage 1 receives each activation and runs its forward and
loss, then the 4 backwards in reverse order, sending each input gradient back.
AdamW on both stages, 200 steps; stage 1 takes loss.item() every step, stage 0
synchronizes.  Stage 1 checks the first loss against the whole model run on
one GPU (tolerance 1e-5).  Rank 0 prints every step's loss of every pipeline
(float.hex), a few parameter values and the sha256 of every rank's parameters
to stdout; time per step goes to stderr.  Needs as many GPUs as processes;
fewer: SKIP (exit 77)."""
import argparse
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before cuBLAS starts
# Each send or receive here waits for the one before it anyway: no warning that
# unbatched point-to-point operations are serialized.
os.environ.setdefault("TORCH_NCCL_SHOW_EAGER_INIT_P2P_SERIALIZATION_WARNING", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, init_distributed, print_job,  # noqa: E402
                        print_losses, print_values, sha256_of)

NAME = "torch_pipeline"
D, H, BLOCKS, BATCH, NBATCHES, MICRO = 256, 1024, 4, 32, 4, 4


def fail(msg):
    print(f"{NAME}: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, H)
        self.fc2 = nn.Linear(H, D)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    rank, world, _, dev = init_distributed(NAME)
    deterministic_torch(strict=True)
    if world % 2:
        fail(f"the world size {world} is odd: pipelines are pairs of ranks")
    pipe, stage, peer = rank // 2, rank % 2, rank ^ 1
    # A process group per pipeline (every rank creates every group, in order):
    # its sends and receives do not queue behind the other pipelines' ones.
    group = [dist.new_group([2 * p, 2 * p + 1]) for p in range(world // 2)][pipe]

    torch.manual_seed(0)  # the whole model on the CPU, the same on every rank
    full = nn.Sequential(*[Block() for _ in range(BLOCKS)]).to(dev)
    model = full[:BLOCKS // 2] if stage == 0 else full[BLOCKS // 2:]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    g = torch.Generator().manual_seed(100 + pipe)  # both stages of a pipeline: the same data
    batches = [(torch.randn(BATCH, D, generator=g).to(dev), torch.randn(BATCH, D, generator=g).to(dev))
               for _ in range(NBATCHES)]
    with torch.no_grad():
        x, y = batches[0]
        ref = ((full(x) - y) ** 2).mean().item()

    losses = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in range(args.steps):
        x, y = batches[step % NBATCHES]
        opt.zero_grad()
        if stage == 0:
            outs = []
            for xb in x.chunk(MICRO):
                outs.append(model(xb))
                dist.send(outs[-1].detach(), peer, group)
            for out in reversed(outs):
                grad = torch.empty_like(out)
                dist.recv(grad, peer, group)
                out.backward(grad)
        else:
            ins, mb_losses = [], []
            for yb in y.chunk(MICRO):
                act = torch.empty(BATCH // MICRO, D, device=dev)
                dist.recv(act, peer, group)
                ins.append(act.requires_grad_())
                mb_losses.append(((model(act) - yb) ** 2).mean() / MICRO)
            for act, mb_loss in zip(reversed(ins), reversed(mb_losses)):
                mb_loss.backward()
                dist.send(act.grad, peer, group)
        opt.step()
        if stage == 1:
            losses.append(sum(mb_loss.detach() for mb_loss in mb_losses).item())  # synchronizes
        else:
            torch.cuda.synchronize()
    total = time.perf_counter() - t0
    if stage == 1 and abs(losses[0] - ref) > 1e-5 * max(1.0, abs(ref)):
        fail(f"first loss {losses[0]!r}, the whole model gives {ref!r}")
    params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    fail_if_not_finite(NAME, bool(torch.isfinite(params).all()))
    gathered = [None] * world
    dist.all_gather_object(gathered, (sha256_of(params), losses))
    if rank == 0:
        print_job(NAME, args.steps, world, total)
        for p in range(world // 2):
            print_losses(f"pipe[{p}].loss", gathered[2 * p + 1][1])
        print_values("param", params, [0, 1, params.numel() // 2, params.numel() - 1])
        print(f"out.sha256 {sha256_of(params)}")  # rank 0's
        for r, (h, _) in enumerate(gathered):
            print(f"rank[{r}].sha256 {h}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
