#!/usr/bin/env python3
"""lstm_train: a training step of a 2-layer nn.LSTM (input 64, hidden 256,
batch_first; cuDNN) and a Linear(256, 64) head on every time step, batch 16,
sequence 32, MSE against a fixed target, Adam as constructed by default (step
count on the host); a step is forward, backward, Adam step, gradients set to
None.  Hand-written graph: the same step with Adam(capturable=True).
Checksum: all parameters."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "lstm_train"
IN, HID, LAYERS, BATCH, SEQ = 64, 256, 2, 16, 32


def build():
    torch = common.torch_setup()
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(IN, HID, LAYERS, batch_first=True)
            self.head = nn.Linear(HID, IN)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.head(y)

    model = Net().cuda().train()
    x = torch.randn(BATCH, SEQ, IN, device="cuda")
    target = torch.randn(BATCH, SEQ, IN, device="cuda")
    return common.torch_train_app(torch, NAME, model, x, target,
                                  lambda p, c: torch.optim.Adam(p, lr=1e-3, capturable=c))


if __name__ == "__main__":
    common.main(NAME, build)
