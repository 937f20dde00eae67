#!/usr/bin/env python3
"""cupy_fft: a CuPy FFT loop on the default stream: complex64 signals of 8 x
4096, per step a low-pass filter through cuFFT and a saturation,
    y = ifft(fft(x) * H)              (cuFFT, CuPy's plan cache)
    x = y / (1 + |y|) + 0.1 * x0
New arrays every step from CuPy's memory pool.  No hand-written graph.
Checksum: the final x.  SKIP when CuPy is missing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import cupy_common  # noqa: E402

NAME = "cupy_fft"
ROWS, N = 8, 4096


def build():
    np, cp = cupy_common.cupy_setup()
    rng = np.random.default_rng(0)
    x0 = (rng.standard_normal((ROWS, N)) + 1j * rng.standard_normal((ROWS, N))).astype(np.complex64)
    k = np.fft.fftfreq(N).astype(np.float32)
    h = np.exp(-(k * 16.0) ** 2).astype(np.complex64)
    x0s = cp.asarray((x0 * 0.1).astype(np.complex64))
    H = cp.asarray(h)
    state = {"x": cp.asarray(x0)}

    def step():
        y = cp.fft.ifft(cp.fft.fft(state["x"], axis=1) * H, axis=1)
        state["x"] = (y / (1 + cp.abs(y)) + x0s).astype(cp.complex64, copy=False)

    return common.App(NAME, step, lambda: cupy_common.sync(cp),
                      lambda: cupy_common.sha(cp, [state["x"]]),
                      steps=150, warmup=300, framework=f"cupy {cp.__version__}")


if __name__ == "__main__":
    common.main(NAME, build)
