#!/usr/bin/env python3
"""cupy_elementwise: a CuPy elementwise loop on the default stream over float32
arrays of 1<<16 elements (samples/cupy_loop.py's body): per step two
ElementwiseKernels and a few ufuncs,
    y = frac(fma(a, x, b))            (a, b change with period 4)
    z = sin(3 * y) * 0.5 + 0.5
    x = 0.5 * (z + x_old shifted by one)
    x = where(x > 0.999, x - 0.5, x)
New arrays every step from CuPy's memory pool.  No hand-written graph.
Checksum: the final x.  SKIP when CuPy is missing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import cupy_common  # noqa: E402

NAME = "cupy_elementwise"
N = 1 << 16


def build():
    np, cp = cupy_common.cupy_setup()
    axpb = cp.ElementwiseKernel(
        "float32 x, float32 a, float32 b", "float32 y",
        "float t = fmaf(a, x, b); y = t - floorf(t)", "gsapp_axpb")
    mix = cp.ElementwiseKernel(
        "float32 z, raw float32 xo, int32 n", "float32 x",
        "int j = i + 1 == n ? 0 : i + 1; x = 0.5f * (z + xo[j])", "gsapp_mix")
    rng = np.random.default_rng(0)
    state = {"x": cp.asarray(rng.uniform(0.0, 1.0, N).astype(np.float32)), "i": 0}
    consts = []
    for ph in range(4):
        consts.append((np.float32(1.25 + ((ph * 5 + 3) % 12) / 16.0),
                       np.float32(((ph * 7 + 2) % 23) / 32.0)))

    def step():
        a, b = consts[state["i"] & 3]
        state["i"] += 1
        x = state["x"]
        y = axpb(x, a, b)
        z = cp.sin(y * np.float32(3.0)) * np.float32(0.5) + np.float32(0.5)
        x = mix(z, x, np.int32(N))
        state["x"] = cp.where(x > np.float32(0.999), x - np.float32(0.5), x)

    return common.App(NAME, step, lambda: cupy_common.sync(cp),
                      lambda: cupy_common.sha(cp, [state["x"]]),
                      steps=150, warmup=300, framework=f"cupy {cp.__version__}")


if __name__ == "__main__":
    common.main(NAME, build)
