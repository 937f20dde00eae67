#!/usr/bin/env python3
"""transformer_train: a training step of a small transformer with dropout: 2
nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
dropout=0.1, batch_first=True) and a Linear head, batch 8, sequence 64, MSE
against a fixed target, AdamW as constructed by default (step count on the
host); a step is forward, backward, AdamW step, gradients set to None.
Hand-written graph: the same step with AdamW(capturable=True) (dropout's random
numbers are graph-safe in PyTorch).  Checksum: all parameters."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "transformer_train"
D, HEADS, FF, LAYERS, BATCH, SEQ = 256, 4, 1024, 2, 8, 64


def build():
    torch = common.torch_setup()
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.1, batch_first=True)
    model = nn.Sequential(nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False),
                          nn.Linear(D, D)).cuda().train()
    x = torch.randn(BATCH, SEQ, D, device="cuda")
    target = torch.randn(BATCH, SEQ, D, device="cuda")
    return common.torch_train_app(torch, NAME, model, x, target,
                                  lambda p, c: torch.optim.AdamW(p, lr=1e-4, capturable=c))


if __name__ == "__main__":
    common.main(NAME, build)
