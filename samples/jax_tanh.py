#!/usr/bin/env python3
"""jax_tanh: a jax.jit function of four steps x = tanh(x @ w) (w 256x256,
x 8x256, float32, matmul precision HIGHEST: no TF32), called 200 times by
default with block_until_ready() after each call; the output is the next
call's input.  Prints the sha256 of the final x bytes and a few exact values
to stdout; time per call goes to stderr.

Before JAX is imported: XLA_PYTHON_CLIENT_PREALLOCATE=false (no 75% up-front
pool) and, unless XLA_FLAGS is already set, XLA_FLAGS with autotuning off
(its timing-based choice could change the bits from run to run) and XLA's own
command buffers (CUDA graphs) off, so that the kernels are launched one by
one.  Exits 77 (skip) when JAX or a JAX GPU backend is not available."""
import argparse
import hashlib
import os
import statistics
import sys
import time

os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = "--xla_gpu_autotune_level=0 --xla_gpu_enable_command_buffer="
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_util import fail_if_not_finite, print_array_values, skip  # noqa: E402

NAME = "jax_tanh"
N, B, STEPS = 256, 8, 4


def gpu_device(jax):
    for plat in ("cuda", "gpu"):
        try:
            devs = jax.devices(plat)
        except Exception:  # noqa: BLE001
            continue
        if devs:
            return devs[0]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    args = ap.parse_args()
    if args.iters < 1:
        ap.error("--iters must be >= 1")
    try:
        import numpy as np
        import jax
        import jax.numpy as jnp
    except Exception as e:  # noqa: BLE001
        skip(NAME, f"JAX not importable ({type(e).__name__}: {e})")
    dev = gpu_device(jax)
    if dev is None:
        skip(NAME, f"no JAX GPU backend (devices: {jax.devices()})")

    rng = np.random.default_rng(3)
    w_h = (rng.standard_normal((N, N)) * (1.5 / np.sqrt(N))).astype(np.float32)
    x_h = rng.uniform(-1.0, 1.0, (B, N)).astype(np.float32)
    w = jax.device_put(w_h, dev)
    x = jax.device_put(x_h, dev)

    hi = jax.lax.Precision.HIGHEST

    @jax.jit
    def step4(x, w):
        for _ in range(STEPS):
            x = jnp.tanh(jnp.dot(x, w, precision=hi))
        return x

    x = step4(x, w).block_until_ready()  # compile + first call
    calls = 1
    times = []
    t_start = time.perf_counter()
    t_prev = t_start
    for _ in range(args.iters - 1):
        x = step4(x, w).block_until_ready()
        calls += 1
        t = time.perf_counter()
        times.append(t - t_prev)
        t_prev = t
    total = time.perf_counter() - t_start
    half = times[len(times) // 2:] or [total]
    print(f"{NAME}: {calls} calls, {1e6 * statistics.median(half):.1f} us/call median (2nd half), "
          f"device {dev}", file=sys.stderr)

    out = np.asarray(x)
    print(f"sample {NAME}")
    print(f"iters {calls}")
    print(f"shape {out.shape} {out.dtype}")
    print_array_values("out", out, [0, 1, B * N // 2 + 5, B * N - 1])
    print(f"out.sha256 {hashlib.sha256(out.tobytes()).hexdigest()}")
    fail_if_not_finite(NAME, bool(np.isfinite(out).all()))


if __name__ == "__main__":
    main()
