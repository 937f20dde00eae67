#!/usr/bin/env python3
"""jax_train: a JAX training step, jax.jit of forward, jax.value_and_grad and a
plain SGD update (no optax), parameters donated: an MLP 256 -> 512 -> 512 ->
256 with tanh, batch 64, MSE against a fixed target, float32, initialised from
a numpy generator of seed 0.  A step is one call; jax.block_until_ready on the
parameters is the synchronize.

Before JAX is imported: XLA_PYTHON_CLIENT_PREALLOCATE=false, and unless
XLA_FLAGS is set, autotuning off (the same kernels every run) and XLA's own
command buffers off (APPS_JAX_CMDBUF=1 keeps them: XLA then launches CUDA
graphs of its own, which graphshim passes through), as samples/jax_tanh.py
does.  No hand-written graph (XLA's command buffers are the nearest thing).
Checksum: the parameters.  SKIP when JAX or its GPU backend is missing."""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

common.jax_env()

NAME = "jax_train"
SIZES, BATCH, LR = (256, 512, 512, 256), 64, 1e-2


def build():
    np, jax, jnp, dev = common.jax_setup()
    rng = np.random.default_rng(0)
    params = []
    for i, o in zip(SIZES[:-1], SIZES[1:]):
        w = (rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32)
        params.append((jax.device_put(w, dev), jax.device_put(np.zeros(o, np.float32), dev)))
    x = jax.device_put(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32), dev)
    y = jax.device_put(rng.standard_normal((BATCH, SIZES[-1])).astype(np.float32), dev)

    def loss(ps, x, y):
        h = x
        for w, b in ps[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = ps[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    def train(ps, x, y):
        l, g = jax.value_and_grad(loss)(ps, x, y)
        return jax.tree_util.tree_map(lambda p, d: p - LR * d, ps, g), l

    train = jax.jit(train, donate_argnums=0)
    state = {"params": params}

    def step():
        state["params"], state["loss"] = train(state["params"], x, y)

    def sync():
        for leaf in jax.tree_util.tree_leaves(state["params"]):
            leaf.block_until_ready()

    def checksum():
        h = hashlib.sha256()
        for leaf in jax.tree_util.tree_leaves(state["params"]):
            h.update(np.asarray(leaf).tobytes())
        return h.hexdigest()[:16]

    return common.App(NAME, step, sync, checksum, steps=100, warmup=200,
                      hand_why="XLA's own command buffers (APPS_JAX_CMDBUF=1) are the nearest",
                      framework=f"jax {jax.__version__} ({dev.platform})")


if __name__ == "__main__":
    common.main(NAME, build)
