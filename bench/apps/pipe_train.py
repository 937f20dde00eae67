#!/usr/bin/env python3
"""pipe_train: a two-stage pipeline training step, one process a stage
(torchrun; ranks 2k and 2k+1 form a pipeline of their own): each stage is 4
residual MLP blocks (d 256, hidden 1024); a step runs 4 micro-batches of 8
through both stages GPipe-style (every forward, then every backward), the
activations sent forward and their gradients back with dist.send/recv, MSE
on the last stage, then AdamW as constructed by default on each stage.
Checksum: rank 0's parameters (the first stage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "pipe_train"
D, H, BLOCKS, MICRO, MB = 256, 1024, 4, 4, 8


def build():
    torch, dist, rank, world, dev = common.torch_dist_setup()
    nn = torch.nn
    if world % 2:
        raise common.Skip(f"a pipeline of two stages needs an even number of ranks, not {world}")
    stage, peer = rank % 2, rank ^ 1

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(D, H)
            self.down = nn.Linear(H, D)

        def forward(self, x):
            return x + self.down(nn.functional.gelu(self.up(x)))

    torch.manual_seed(stage)
    model = nn.Sequential(*[Block() for _ in range(BLOCKS)]).to(dev).train()
    g = torch.Generator(device=dev).manual_seed(100 + rank // 2)
    xs = [torch.randn(MB, D, device=dev, generator=g) for _ in range(MICRO)]
    ys = [torch.randn(MB, D, device=dev, generator=g) for _ in range(MICRO)]
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3)
    recv = [torch.empty(MB, D, device=dev) for _ in range(MICRO)]

    def step():
        outs, ins = [], []
        for m in range(MICRO):  # every forward
            if stage == 0:
                o = model(xs[m])
                dist.send(o.detach(), peer)
            else:
                dist.recv(recv[m], peer)
                i = recv[m].clone().requires_grad_()
                ins.append(i)
                o = nn.functional.mse_loss(model(i), ys[m])
            outs.append(o)
        for m in range(MICRO):  # every backward
            if stage == 0:
                grad = torch.empty(MB, D, device=dev)
                dist.recv(grad, peer)
                outs[m].backward(grad)
            else:
                outs[m].backward()
                dist.send(ins[m].grad, peer)
        opt.step()
        opt.zero_grad(set_to_none=True)

    return common.torch_dist_app(torch, dist, NAME, step, params)


if __name__ == "__main__":
    common.main(NAME, build)
