#!/usr/bin/env python3
"""mlp_adamw: an MLP trained with AdamW as constructed by default (foreach, not
capturable: its step count lives on the host, so its kernels' scalar arguments
change every step).  8 blocks of LayerNorm -> Linear(256, 1024) -> GELU ->
Linear(1024, 256) with a residual (bench/torch_adamw_bench.py's model), batch
32, MSE against a fixed target; a step is forward, backward, AdamW step,
gradients set to None.  Hand-written graph: the same step with
AdamW(capturable=True).  Checksum: all parameters."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "mlp_adamw"
D, LAYERS, BATCH = 256, 8, 32


def build():
    torch = common.torch_setup()
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.up = nn.Linear(d, 4 * d)
            self.down = nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.down(nn.functional.gelu(self.up(self.norm(x))))

    model = nn.Sequential(*[Block(D) for _ in range(LAYERS)]).cuda().train()
    x = torch.randn(BATCH, D, device="cuda")
    target = torch.randn(BATCH, D, device="cuda")
    return common.torch_train_app(torch, NAME, model, x, target,
                                  lambda p, c: torch.optim.AdamW(p, lr=1e-3, capturable=c))


if __name__ == "__main__":
    common.main(NAME, build)
