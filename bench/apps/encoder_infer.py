#!/usr/bin/env python3
"""encoder_infer: transformer-encoder inference, nn.TransformerEncoder of 4
TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0,
batch_first=True), eval, no_grad (PyTorch's fused encoder fast path), input
4 x 64 x 256; a step is one forward whose output, through tanh, is the next
step's input.  Hand-written graph: the same step captured with
torch.cuda.graph on a copy of the input.  Checksum: the last input."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "encoder_infer"
D, HEADS, FF, LAYERS, BATCH, SEQ = 256, 4, 1024, 4, 4, 64


def build():
    torch = common.torch_setup()
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False).cuda().eval()
    state = {"x": torch.rand(BATCH, SEQ, D, device="cuda") * 2 - 1}

    def step():
        with torch.no_grad():
            state["x"] = torch.tanh(model(state["x"]))

    def hand():
        hx = state["x"].clone()

        def body():
            with torch.no_grad():
                hx.copy_(torch.tanh(model(hx)))
        return common.torch_capture(torch, body)

    return common.App(
        NAME, step, torch.cuda.synchronize, lambda: common.torch_sha([state["x"]]),
        steps=40, warmup=100, hand=hand, framework=f"torch {torch.__version__}")


if __name__ == "__main__":
    common.main(NAME, build)
