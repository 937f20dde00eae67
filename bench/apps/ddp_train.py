#!/usr/bin/env python3
"""ddp_train: a data-parallel training step, one process a GPU (torchrun): 2
nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
dropout=0.1, batch_first=True) and a Linear head in DistributedDataParallel
(gradient buckets of 1 MB, so several all-reduces overlap the backward), batch
8 x 64 a rank, MSE against a fixed target, AdamW as constructed by default; a
step is forward, backward (buckets all-reduced), AdamW step, gradients set to
None.  Checksum: rank 0's parameters (every rank holds the same)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "ddp_train"
D, HEADS, FF, LAYERS, BATCH, SEQ = 256, 4, 1024, 2, 8, 64


def build():
    torch, dist, rank, world, dev = common.torch_dist_setup()
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.1, batch_first=True)
    model = nn.Sequential(nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False),
                          nn.Linear(D, D)).to(dev).train()
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index], bucket_cap_mb=1)
    g = torch.Generator(device=dev).manual_seed(100 + rank)
    x = torch.randn(BATCH, SEQ, D, device=dev, generator=g)
    target = torch.randn(BATCH, SEQ, D, device=dev, generator=g)
    torch.manual_seed(1 + rank)  # each rank's dropout masks
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4)
    step = common.torch_mse_step(torch, ddp, x, target, opt)
    return common.torch_dist_app(torch, dist, NAME, step, params)


if __name__ == "__main__":
    common.main(NAME, build)
