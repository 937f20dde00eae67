#!/usr/bin/env python3
"""jax_step: a jax.jit loop of four small matrix products, waited on every step
(issue 57's JAX shape).  A step is one call of a jitted function that takes
x (64 x 256) through four products with 256 x 256 weights, tanh after each;
XLA launches its fusions with cuLaunchKernelEx, then records events on its
compute stream, makes a second stream wait on one and launches a host function
there, so no synchronize ends the step: jax.block_until_ready on x is the
synchronize (every step by default; --sync-every N: every Nth).

Before JAX is imported, common.jax_env() as for jax_train.py (autotuning and
XLA's own command buffers off; APPS_JAX_CMDBUF=1 keeps them).  No hand-written graph.  Checksum: x.  SKIP
when JAX or its GPU backend is missing."""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

common.jax_env()

NAME = "jax_step"
BATCH, D, PRODUCTS = 64, 256, 4


def build():
    np, jax, jnp, dev = common.jax_setup()
    rng = np.random.default_rng(0)
    ws = [jax.device_put((rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32), dev)
          for _ in range(PRODUCTS)]
    x0 = rng.standard_normal((BATCH, D)).astype(np.float32)

    @jax.jit
    def f(x, ws):
        for w in ws:
            x = jnp.tanh(x @ w)
        return x

    state = {"x": jax.device_put(x0, dev)}

    def step():
        state["x"] = f(state["x"], ws)

    def sync():
        state["x"].block_until_ready()

    def checksum():
        return hashlib.sha256(np.asarray(state["x"]).tobytes()).hexdigest()[:16]

    return common.App(NAME, step, sync, checksum, steps=200, warmup=300,
                      hand_why="XLA's own command buffers (APPS_JAX_CMDBUF=1) are the nearest",
                      framework=f"jax {jax.__version__} ({dev.platform})")


if __name__ == "__main__":
    common.main(NAME, build)
