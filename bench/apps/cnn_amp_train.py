#!/usr/bin/env python3
"""cnn_amp_train: a small CNN trained with mixed precision: autocast (float16)
and GradScaler.  Conv(3->32) BN ReLU, Conv(32->64, stride 2) BN ReLU,
Conv(64->64, stride 2) BN ReLU, mean over the pixels, Linear(64, 10); inputs
16 x 3 x 32 x 32 and labels fixed, cross entropy, SGD with momentum 0.9
(foreach).  A step is forward under autocast, scaled backward, scaler.step
(which reads the inf check on the host: a synchronize inside every step),
scaler.update, gradients set to None.  No hand-written graph: GradScaler's step
is not capturable.  Checksum: all parameters and buffers."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "cnn_amp_train"
BATCH, CLASSES = 16, 10


def build():
    torch = common.torch_setup()
    nn = torch.nn

    def conv(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU()]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(*conv(3, 32, 1), *conv(32, 64, 2), *conv(64, 64, 2))
            self.head = nn.Linear(64, CLASSES)

        def forward(self, x):
            return self.head(self.body(x).mean(dim=(2, 3)))

    model = Net().cuda().train()
    x = torch.randn(BATCH, 3, 32, 32, device="cuda")
    labels = torch.randint(0, CLASSES, (BATCH,), device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    try:
        scaler = torch.amp.GradScaler("cuda")
    except (AttributeError, TypeError):
        scaler = torch.cuda.amp.GradScaler()

    def step():
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), labels)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    state = list(model.parameters()) + list(model.buffers())
    return common.App(
        NAME, step, torch.cuda.synchronize, lambda: common.torch_sha(state),
        steps=10, warmup=60, framework=f"torch {torch.__version__}",
        hand_why="GradScaler's step is not capturable")


if __name__ == "__main__":
    common.main(NAME, build)
