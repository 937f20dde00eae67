#!/usr/bin/env python3
"""copy_stream: compute on the current stream, a copy stream bringing each
step's result to pinned host memory, ordered by events, as a loop that overlaps
copies with compute writes it: a step waits for the previous step's copy, runs
4 x Linear(512, 512) + ReLU (batch 32, no_grad) into a result buffer and an
accumulator, then the copy stream waits for it and copies the result to the host
(non_blocking).  The orderings are Stream.wait_stream (a new event each time) by
default; APPS_EVENTS=kept records two events made once instead.  Hand-written
graph: the same step, the copy stream forked inside the capture and joined at
its end (a capture cannot wait on the copy stream's earlier work; on an H100
the step as the loop writes it invalidated the capture).  Checksum: the
accumulator and the host copy."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "copy_stream"
D, BATCH, DEPTH = 512, 32, 4


def build():
    torch = common.torch_setup()
    nn = torch.nn
    net = common.linear_relu(nn, D, DEPTH)
    x = torch.randn(BATCH, D, device="cuda")
    acc = torch.zeros(BATCH, D, device="cuda")
    ybuf = torch.zeros(BATCH, D, device="cuda")
    host = torch.zeros(BATCH, D, pin_memory=True)
    copy = torch.cuda.Stream()
    order, mode = common.stream_order()
    done_ev, ready_ev = torch.cuda.Event(), torch.cuda.Event()

    def run(xin, yb, out, hb, captured=False):
        cur = torch.cuda.current_stream()
        if not captured:  # the previous step's copy has read yb (in a graph: its end, below)
            order(cur, copy, done_ev)
        with torch.no_grad():
            y = net(xin)
            yb.copy_(y)
            out.add_(y)
        order(copy, cur, ready_ev)
        with torch.cuda.stream(copy):
            hb.copy_(yb, non_blocking=True)
        if captured:  # a capture joins every stream it forked back before it ends
            order(cur, copy, done_ev)

    def checksum():
        torch.cuda.synchronize()
        return common.torch_sha([acc, host])

    def hand():
        hx, hy, hacc = x.clone(), torch.zeros_like(ybuf), torch.zeros_like(acc)
        hh = torch.zeros_like(host).pin_memory()
        return common.torch_capture(torch, lambda: run(hx, hy, hacc, hh, captured=True))

    return common.App(
        NAME, lambda: run(x, ybuf, acc, host), torch.cuda.synchronize, checksum,
        steps=40, warmup=100, hand=hand,
        framework=f"torch {torch.__version__} events {mode}")


if __name__ == "__main__":
    common.main(NAME, build)
