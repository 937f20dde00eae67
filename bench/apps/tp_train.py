#!/usr/bin/env python3
"""tp_train: a tensor-parallel training step written by hand, one process a
GPU (torchrun): 4 blocks x = x + Row(GELU(Col(LayerNorm(x)))), d 256, hidden
1024 split across the ranks: Col holds a slice of the up projection's output
columns, Row the matching slice of the down projection's input rows; the
block's output is all-reduced in the forward, and the gradient of its input in
the backward (Megatron's f and g).  Batch 32 (the same on every rank), MSE
against a fixed target, AdamW as constructed by default.  Every layer ends in
a collective.  Checksum: rank 0's parameters (its shards)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "tp_train"
D, H, BLOCKS, BATCH = 256, 1024, 4, 32


def build():
    torch, dist, rank, world, dev = common.torch_dist_setup()
    nn = torch.nn
    if H % world:
        raise common.Skip(f"hidden {H} does not split over {world} ranks")

    class Copy(torch.autograd.Function):  # f: identity forward, all-reduce backward
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            g = g.clone()
            dist.all_reduce(g)
            return g

    class Reduce(torch.autograd.Function):  # g: all-reduce forward, identity backward
        @staticmethod
        def forward(ctx, x):
            x = x.clone()
            dist.all_reduce(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Block(nn.Module):
        def __init__(self, i):
            super().__init__()
            cpu = torch.Generator().manual_seed(i)  # the same full weights on every rank
            up = torch.randn(H, D, generator=cpu) / D ** 0.5
            down = torch.randn(D, H, generator=cpu) / H ** 0.5
            part = H // world
            self.norm = nn.LayerNorm(D)
            self.up = nn.Parameter(up[rank * part:(rank + 1) * part].clone())
            self.down = nn.Parameter(down[:, rank * part:(rank + 1) * part].clone())
            self.bias = nn.Parameter(torch.zeros(D))

        def forward(self, x):
            h = nn.functional.gelu(nn.functional.linear(Copy.apply(self.norm(x)), self.up))
            return x + Reduce.apply(nn.functional.linear(h, self.down)) + self.bias

    model = nn.Sequential(*[Block(i) for i in range(BLOCKS)]).to(dev).train()
    g = torch.Generator(device=dev).manual_seed(7)
    x = torch.randn(BATCH, D, device=dev, generator=g)
    target = torch.randn(BATCH, D, device=dev, generator=g)
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3)
    step = common.torch_mse_step(torch, model, x, target, opt)
    return common.torch_dist_app(torch, dist, NAME, step, params)


if __name__ == "__main__":
    common.main(NAME, build)
