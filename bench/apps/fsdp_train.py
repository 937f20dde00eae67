#!/usr/bin/env python3
"""fsdp_train: a fully-sharded training step, one process a GPU (torchrun):
an MLP of 8 residual blocks (LayerNorm, Linear(256, 1024), GELU,
Linear(1024, 256)), each block and the whole model wrapped by FSDP2's
fully_shard with bfloat16 parameters and float32 gradient reduction
(MixedPrecisionPolicy); each block's parameters are all-gathered before its
forward and backward, its gradients reduce-scattered after.  Batch 32 a rank,
MSE against a fixed target, AdamW as constructed by default.  Checksum: rank
0's shards."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "fsdp_train"
D, LAYERS, BATCH = 256, 8, 32


def build():
    torch, dist, rank, world, dev = common.torch_dist_setup()
    nn = torch.nn
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError as e:
        raise common.Skip(f"FSDP2 not in this torch ({e})")

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(D)
            self.up = nn.Linear(D, 4 * D)
            self.down = nn.Linear(4 * D, D)

        def forward(self, x):
            return x + self.down(nn.functional.gelu(self.up(self.norm(x))))

    torch.manual_seed(0)  # the same full model on every rank before sharding
    model = nn.Sequential(*[Block() for _ in range(LAYERS)]).to(dev).train()
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for b in model:
        fully_shard(b, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    g = torch.Generator(device=dev).manual_seed(100 + rank)
    x = torch.randn(BATCH, D, device=dev, generator=g)
    target = torch.randn(BATCH, D, device=dev, generator=g)
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3)
    step = common.torch_mse_step(torch, lambda v: model(v).float(), x, target, opt)
    return common.torch_dist_app(torch, dist, NAME, step, params)


if __name__ == "__main__":
    common.main(NAME, build)
