#!/usr/bin/env python3
"""cupy_loop: a CuPy loop on a created non-blocking stream, per iteration two
ElementwiseKernels and a few ufuncs over float32 arrays of 1<<16 elements:
  y = frac(fma(a, x, b))            (ElementwiseKernel; a, b vary with period 4)
  z = sin(3 * y) * 0.5 + 0.5        (ufuncs: multiply, sin, multiply, add)
  x = 0.5 * (z + roll1(x_old))      (ElementwiseKernel reading a neighbour)
  x = where(x > 0.999, x - 0.5, x)  (ufuncs: greater, subtract, where)
and a stream synchronize after each iteration (--sync-every).  Prints the
sha256 of the final x and a few exact values to stdout; time per iteration
goes to stderr.  Exits 77 (skip) when CuPy is not available."""
import argparse
import hashlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_util import fail_if_not_finite, print_array_values, skip  # noqa: E402

NAME = "cupy_loop"
N = 1 << 16


def params(i):
    ph = i & 3
    a = 1.25 + ((ph * 5 + 3) % 12) / 16.0   # exact in float32
    b = ((ph * 7 + 2) % 23) / 32.0
    return a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--sync-every", type=int, default=1)
    args = ap.parse_args()
    if args.iters < 1:
        ap.error("--iters must be >= 1")
    try:
        import numpy as np
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        skip(NAME, f"CuPy not importable ({type(e).__name__}: {e})")
    try:
        ndev = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        ndev = 0
        print(f"{NAME}: getDeviceCount: {e}", file=sys.stderr)
    if ndev < 1:
        print(f"{NAME}: FAILED: CuPy sees no CUDA device", file=sys.stderr)
        sys.exit(2)

    axpb = cp.ElementwiseKernel(
        "float32 x, float32 a, float32 b", "float32 y",
        "float t = fmaf(a, x, b); y = t - floorf(t)",
        "gsamp_cupy_axpb")
    mix = cp.ElementwiseKernel(
        "float32 z, raw float32 xo, int32 n", "float32 x",
        "int j = i + 1 == n ? 0 : i + 1; x = 0.5f * (z + xo[j])",
        "gsamp_cupy_mix")

    rng = np.random.default_rng(6)
    x_h = rng.uniform(0.0, 1.0, N).astype(np.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    times = []
    with stream:
        x = cp.asarray(x_h)
        stream.synchronize()
        t_start = time.perf_counter()
        t_prev = t_start
        for i in range(args.iters):
            a, b = params(i)
            y = axpb(x, np.float32(a), np.float32(b))
            z = cp.sin(y * np.float32(3.0)) * np.float32(0.5) + np.float32(0.5)
            x = mix(z, x, np.int32(N))
            x = cp.where(x > np.float32(0.999), x - np.float32(0.5), x)
            if args.sync_every > 0 and (i + 1) % args.sync_every == 0:
                stream.synchronize()
                t = time.perf_counter()
                times.append((t - t_prev) / args.sync_every)
                t_prev = t
        stream.synchronize()
        total = time.perf_counter() - t_start
        out = cp.asnumpy(x, stream=stream)
        stream.synchronize()
    half = times[len(times) // 2:] or [total / args.iters]
    print(f"{NAME}: {args.iters} iterations, {1e6 * total / args.iters:.1f} us/iter mean, "
          f"{1e6 * statistics.median(half):.1f} us/iter median (2nd half)", file=sys.stderr)

    print(f"sample {NAME}")
    print(f"iters {args.iters}")
    print(f"shape {out.shape} {out.dtype}")
    print_array_values("out", out, [0, 1, N // 2 + 9, N - 1])
    print(f"out.sha256 {hashlib.sha256(out.tobytes()).hexdigest()}")
    fail_if_not_finite(NAME, bool(np.isfinite(out).all()))


if __name__ == "__main__":
    main()
