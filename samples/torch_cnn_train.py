#!/usr/bin/env python3
"""torch_cnn_train: training steps of a small CNN on CUDA:
Conv2d(3,16,3)+BatchNorm2d+ReLU+MaxPool2d(2), Conv2d(16,32,3)+BatchNorm2d+
ReLU+MaxPool2d(2), Linear(32*8*8, 10); loss = mean over the batch of
-sum(onehot * log_softmax(logits)) (only elementwise ops and reductions, no
scatter), SGD with momentum 0.9; batch 8 of 3x32x32, four fixed batches used
in turn, 50 steps by default, loss.item() (a sync) after each step.
Deterministic: CUBLAS_WORKSPACE_CONFIG=:4096:8 set before torch is imported,
cuDNN deterministic, benchmark off, torch.use_deterministic_algorithms(True),
no TF32.  Prints every loss exactly (float.hex) and the sha256 of the final
parameters (out.sha256) and BatchNorm buffers; time per step goes to stderr."""
import argparse
import hashlib
import os
import statistics
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch_util import (deterministic_torch, fail_if_not_finite, require_cuda,  # noqa: E402
                        tensor_bytes)

NAME = "torch_cnn_train"
BATCH, NBATCHES, CLASSES = 8, 4, 10


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.fc = nn.Linear(32 * 8 * 8, CLASSES)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def sha256_tensors(ts):
    h = hashlib.sha256()
    for t in ts:
        h.update(tensor_bytes(t))
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args()
    if args.iters < 1:
        ap.error("--iters must be >= 1")
    require_cuda(NAME)
    deterministic_torch(strict=True)

    torch.manual_seed(0)  # parameters are initialised on the CPU
    model = Net()
    g = torch.Generator().manual_seed(4)
    xs = torch.rand(NBATCHES, BATCH, 3, 32, 32, generator=g) * 2 - 1
    labels = torch.randint(0, CLASSES, (NBATCHES, BATCH), generator=g)
    onehot = torch.nn.functional.one_hot(labels, CLASSES).float()
    dev = torch.device("cuda")
    model = model.to(dev).train()
    xs, onehot = xs.to(dev), onehot.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    losses = []
    times = []
    torch.cuda.synchronize()
    t_start = time.perf_counter()
    t_prev = t_start
    for i in range(args.iters):
        b = i % NBATCHES
        opt.zero_grad(set_to_none=True)
        logits = model(xs[b])
        loss = -(onehot[b] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())  # D2H + sync each step
        t = time.perf_counter()
        times.append(t - t_prev)
        t_prev = t
    torch.cuda.synchronize()
    total = time.perf_counter() - t_start
    half = times[len(times) // 2:] or [total / args.iters]
    print(f"{NAME}: {args.iters} steps, {1e6 * total / args.iters:.1f} us/step mean, "
          f"{1e6 * statistics.median(half):.1f} us/step median (2nd half)", file=sys.stderr)

    params = [p for _, p in model.named_parameters()]
    buffers = [bf for _, bf in model.named_buffers()]
    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    for i, v in enumerate(losses):
        print(f"loss[{i}] {float(v).hex()}")
    print(f"params {len(params)} {sum(p.numel() for p in params)}")
    print(f"buffers.sha256 {sha256_tensors(buffers)}")
    print(f"out.sha256 {sha256_tensors(params)}")
    finite = all(torch.isfinite(p).all().item() for p in params)
    finite = finite and all(v == v and abs(v) != float("inf") for v in losses)
    fail_if_not_finite(NAME, finite)


if __name__ == "__main__":
    main()
