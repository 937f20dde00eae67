#!/usr/bin/env python3
"""two_branch: inference of a model with two branches on two streams, as
PyTorch's "usage with multiple streams" writes it: each step forks a side
stream from the current one, runs branch A (4 x Linear(512, 512) + ReLU) on the
current stream and branch B (the same shape, other weights) on the side stream,
joins the side stream back and adds both into an accumulator; batch 32, no_grad.
The fork and join are Stream.wait_stream (a new event each time) by default;
APPS_EVENTS=kept records two events made once instead.  Hand-written graph:
the same step, fork and join inside the capture.  Checksum: the accumulator."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "two_branch"
D, BATCH, DEPTH = 512, 32, 4


def build():
    torch = common.torch_setup()
    nn = torch.nn
    branch_a = common.linear_relu(nn, D, DEPTH)
    branch_b = common.linear_relu(nn, D, DEPTH)
    x = torch.randn(BATCH, D, device="cuda")
    acc = torch.zeros(BATCH, D, device="cuda")
    side = torch.cuda.Stream()
    order, mode = common.stream_order()
    fork_ev, join_ev = torch.cuda.Event(), torch.cuda.Event()

    def run(xin, out):
        cur = torch.cuda.current_stream()
        order(side, cur, fork_ev)
        with torch.no_grad():
            a = branch_a(xin)
            with torch.cuda.stream(side):
                b = branch_b(xin)
            order(cur, side, join_ev)
            out.add_(a + b)

    def hand():
        hx, hacc = x.clone(), torch.zeros_like(acc)
        return common.torch_capture(torch, lambda: run(hx, hacc))

    return common.App(
        NAME, lambda: run(x, acc), torch.cuda.synchronize, lambda: common.torch_sha([acc]),
        steps=40, warmup=100, hand=hand,
        framework=f"torch {torch.__version__} events {mode}")


if __name__ == "__main__":
    common.main(NAME, build)
