#!/usr/bin/env python3
"""resnet_infer: CNN inference, torchvision's resnet18 built without weights
(weights=None: random initialisation from seed 0, nothing downloaded), eval,
no_grad, batch 1 of 3 x 224 x 224.  A step is one forward; its logits are
added into an accumulator so that the checksum covers every step.
Hand-written graph: the same step captured with torch.cuda.graph.  Checksum:
the accumulator and the last logits.  SKIP when torchvision is missing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "resnet_infer"
BATCH, SIZE = 1, 224


def build():
    torch = common.torch_setup()
    try:
        import torchvision
    except Exception as e:  # noqa: BLE001
        raise common.Skip(f"torchvision not importable ({type(e).__name__}: {e})")
    try:
        model = torchvision.models.resnet18(weights=None)
    except TypeError:  # torchvision before 0.13
        model = torchvision.models.resnet18(pretrained=False)
    model = model.cuda().eval()
    x = torch.randn(BATCH, 3, SIZE, SIZE, device="cuda")
    acc = torch.zeros(BATCH, 1000, device="cuda")
    last = {}

    def step():
        with torch.no_grad():
            y = model(x)
            acc.add_(y)
        last["y"] = y

    def hand():
        hx = x.clone()
        hacc = torch.zeros_like(acc)

        def body():
            with torch.no_grad():
                hacc.add_(model(hx))
        return common.torch_capture(torch, body)

    return common.App(
        NAME, step, torch.cuda.synchronize, lambda: common.torch_sha([acc, last["y"]]),
        steps=15, warmup=100, hand=hand,
        framework=f"torch {torch.__version__} torchvision {torchvision.__version__}")


if __name__ == "__main__":
    common.main(NAME, build)
