"""common.py: the protocol every application benchmark of bench/apps/ follows.

An application script builds its model and data, then hands an App to main(),
which, inside this one process:

  1. warms up: app.warmup steps with graphshim active (it learns meanwhile);
  2. runs `pairs` pairs of timed blocks in ABBA order (AB, BA, AB, ...):
     A = graphshim paused (gs_pause: the program runs eagerly),
     B = graphshim resumed (gs_resume); each block is one untimed settling step,
     then app.steps timed steps, the framework's synchronize after each step
     (--sync-every N or APPS_SYNC_EVERY=N: after every Nth, the block then a
     multiple of N steps and the warm-up 3 N at least; APPS_SYNC=0: only at the
     block's end) and at the block's end;
     the pair's ratio is A's time / B's time (> 1: graphshim is faster);
  3. prints the checksum of the final state (the same with and without
     graphshim: the step count does not depend on timing);
  4. where the app has one, times its hand-written graph (torch.cuda.graph, a
     capturable optimizer), with graphshim paused, after the ABBA blocks.

gs_pause/gs_resume/gs_stats come from the preloaded libgraphshim.so through
ctypes.CDLL(None).  Without the library both halves run eagerly (a null
measurement) and the output says so.

Output on stdout, one `key values...` line each (bench/apps.sh reads them):
  app NAME
  shim loaded (version V) | shim not loaded: both halves run eager
  framework NAME VERSION
  config steps S pairs P warmup W settle 1 unit U units_per_step N sync each|block|EVERY
  steps A|B US...                              (each step's microseconds, a block's,
                                               where every step synchronizes)
  pair K ORDER EAGER_MS SHIM_MS RATIO          (ms per unit, one per pair)
  result NAME MEDIAN MIN MAX PAIRS EAGER_MS SHIM_MS HALF1 HALF2 UNIT
  pause_check A_OPS B_OPS B_REPLAYED VERDICT
  checksum HEX
  hand MS RATIO | hand - WHY
  skip WHY                                     (exit status 77, nothing else)

A job of several processes (torchrun: RANK set) runs the same protocol on
every rank: each rank pauses and resumes graphshim at the same step, the ranks
meet at a barrier before each timed block (app.barrier), and a block's time is
the slowest rank's (app.reduce_max).  Only rank 0 prints.
"""
import argparse
import ctypes
import hashlib
import os
import statistics
import sys
import time

# cuBLAS picks deterministic workspaces only when this is set before it starts.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

SKIP_RC = 77


class Skip(Exception):
    """Raised by an app's build() when its framework or a GPU is missing."""


# Only rank 0 of a job prints (one process a job where RANK is unset).
QUIET = os.environ.get("RANK", "0") != "0"


def out(line):
    if not QUIET:
        print(line, flush=True)


class App:
    """One benchmark.  step() runs one step (no synchronize of its own unless
    the program does one, as a generation loop checking for its end token);
    sync() is the framework's synchronize; checksum() returns a hex string of
    the final state; hand, if not None, returns a callable that replays the
    hand-written graph of one step (hand_why says why there is none)."""

    def __init__(self, name, step, sync, checksum, steps, warmup, unit="step",
                 units_per_step=1, hand=None, hand_why="not written", framework="",
                 barrier=None, reduce_max=None):
        self.name = name
        self.step = step
        self.sync = sync
        self.checksum = checksum
        self.steps = steps
        self.warmup = warmup
        self.unit = unit
        self.units_per_step = units_per_step
        self.hand = hand
        self.hand_why = hand_why
        self.framework = framework
        self.barrier = barrier          # a job's ranks meet here before a timed block
        self.reduce_max = reduce_max    # a block's seconds -> the slowest rank's


class GsStats(ctypes.Structure):
    """struct gs_stats of include/graphshim.h."""
    _fields_ = [("ops", ctypes.c_ulonglong), ("ops_held", ctypes.c_ulonglong),
                ("ops_replayed", ctypes.c_ulonglong), ("replays", ctypes.c_ulonglong),
                ("graphs", ctypes.c_ulonglong), ("hit_rate", ctypes.c_double)]


class Shim:
    """The public API of the preloaded libgraphshim.so, or nothing."""

    def __init__(self):
        self.loaded = False
        self.version = None
        self._pause = self._resume = self._stats = None
        try:
            lib = ctypes.CDLL(None)
            pause, resume = lib.gs_pause, lib.gs_resume
        except (OSError, AttributeError):
            return
        pause.restype = None
        pause.argtypes = []
        resume.restype = None
        resume.argtypes = []
        self._pause, self._resume, self.loaded = pause, resume, True
        try:
            stats = lib.gs_stats
            stats.restype = ctypes.c_int
            stats.argtypes = [ctypes.POINTER(GsStats)]
            self._stats = stats
        except AttributeError:
            pass
        try:
            ver = lib.gs_version
            ver.restype = ctypes.c_int
            ver.argtypes = []
            self.version = ver()
        except AttributeError:
            pass

    def pause(self):
        if self._pause is not None:
            self._pause()

    def resume(self):
        if self._resume is not None:
            self._resume()

    def stats(self):
        """(ops, ops_replayed, replays), or None where the engine is off or absent."""
        if self._stats is None:
            return None
        st = GsStats()
        if self._stats(ctypes.byref(st)) != 0:
            return None
        return (st.ops, st.ops_replayed, st.replays)


def options():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=int(os.environ.get("APPS_PAIRS", "40")),
                    help="ABBA pairs of blocks (default 40)")
    ap.add_argument("--scale", type=float, default=float(os.environ.get("APPS_SCALE", "1")),
                    help="multiplies the app's steps per block")
    ap.add_argument("--sync-every", type=int, default=int(os.environ.get("APPS_SYNC_EVERY", "1")),
                    help="synchronize after every Nth step (default 1; 0: only at a block's end)")
    a = ap.parse_args()
    if os.environ.get("APPS_SYNC", "1") == "0":
        a.sync_every = 0
    if a.sync_every < 0:
        ap.error("--sync-every must be >= 0")
    if a.pairs < 2:
        ap.error("--pairs must be >= 2")
    if a.scale <= 0:
        ap.error("--scale must be > 0")
    return a


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def delta(s0, s1):
    if s0 is None or s1 is None:
        return None
    return tuple(b - a for a, b in zip(s0, s1))


def main(name, build):
    """Builds the app (build() may raise Skip), runs the protocol above, exits."""
    a = options()
    shim = Shim()
    out(f"app {name}")
    if shim.loaded:
        out(f"shim loaded (version {shim.version})")
    else:
        out("shim not loaded: both halves run eager")
    try:
        app = build()
    except Skip as e:
        out(f"skip {e}")
        sys.exit(SKIP_RC)
    out(f"framework {app.framework}")
    steps = max(1, int(round(app.steps * a.scale)))
    every = a.sync_every
    sync_each = every == 1
    warmup = app.warmup
    if every > 1:
        steps = -(-steps // every) * every  # whole runs of `every` steps
        warmup = max(warmup, 3 * every)
    words = {0: "block", 1: "each"}
    out(f"config steps {steps} pairs {a.pairs} warmup {warmup} settle 1 unit {app.unit} "
        f"units_per_step {app.units_per_step} sync {words.get(every, every)}")

    def run(n):
        """n steps, the synchronize after every `every`th (every step when
        every is 1); a step's end times in marks where every step syncs."""
        marks = [time.perf_counter()]
        for i in range(n):
            app.step()
            if every and (i + 1) % every == 0:
                app.sync()
                if sync_each:
                    marks.append(time.perf_counter())
        app.sync()
        return marks

    if every <= 1:
        for _ in range(warmup):
            app.step()
            app.sync()
    else:
        run(warmup)

    def block(paused):
        """Seconds per unit of one block, and the engine's counters' change."""
        if paused:
            shim.pause()
        try:
            app.step()  # settling step, untimed
            app.sync()
            if app.barrier is not None:
                app.barrier()
            s0 = shim.stats()
            marks = run(steps)
            dt = time.perf_counter() - marks[0]
            s1 = shim.stats()
            if app.reduce_max is not None:
                dt = app.reduce_max(dt)
        finally:
            if paused:
                shim.resume()
        if sync_each:
            out(f"steps {'A' if paused else 'B'} " +
                " ".join(f"{(b - a) * 1e6:.0f}" for a, b in zip(marks, marks[1:])))
        return dt / (steps * app.units_per_step), delta(s0, s1)

    eager, graphed, ratios = [], [], []
    a_ops = b_ops = b_replayed = 0
    counted = shim.loaded
    for k in range(a.pairs):
        order = "AB" if k % 2 == 0 else "BA"
        t = {}
        for mode in order:
            t[mode], d = block(mode == "A")
            if d is None:
                counted = False
            elif mode == "A":
                a_ops += d[0]
            else:
                b_ops += d[0]
                b_replayed += d[1]
        eager.append(t["A"])
        graphed.append(t["B"])
        ratios.append(t["A"] / t["B"])
        out(f"pair {k} {order} {t['A'] * 1e3:.4f} {t['B'] * 1e3:.4f} {t['A'] / t['B']:.4f}")

    half = a.pairs // 2
    out(f"result {name} {median(ratios):.4f} {min(ratios):.4f} {max(ratios):.4f} {a.pairs} "
        f"{median(eager) * 1e3:.4f} {median(graphed) * 1e3:.4f} "
        f"{median(ratios[:half]):.4f} {median(ratios[half:]):.4f} {app.unit}")
    if not shim.loaded:
        verdict = "not-loaded"
    elif not counted:
        verdict = "engine-off"
    elif a_ops != 0:
        verdict = "PAUSE-IGNORED"
    elif b_replayed == 0:
        verdict = "no-replays"
    else:
        verdict = "ok"
    if counted:
        out(f"pause_check {a_ops} {b_ops} {b_replayed} {verdict}")
    else:
        out(f"pause_check - - - {verdict}")
    out(f"checksum {app.checksum()}")

    if app.hand is None:
        out(f"hand - {app.hand_why}")
        return
    shim.pause()
    try:
        replay = app.hand()
        for _ in range(3):
            replay()
            app.sync()
        times = []
        for _ in range(a.pairs):
            t0 = time.perf_counter()
            for i in range(steps):
                replay()
                if every and (i + 1) % every == 0:
                    app.sync()
            app.sync()
            times.append((time.perf_counter() - t0) / (steps * app.units_per_step))
        h = median(times)
        out(f"hand {h * 1e3:.4f} {median(eager) / h:.4f}")
    except Exception as e:  # noqa: BLE001  (a failed capture costs the hand column only)
        why = " ".join(str(e).split())[:120]
        out(f"hand - failed: {type(e).__name__}: {why}")
    finally:
        shim.resume()


# --- JAX helpers -------------------------------------------------------------

def jax_env():
    """Before JAX is imported: XLA_PYTHON_CLIENT_PREALLOCATE=false, and unless
    XLA_FLAGS is set, autotuning off (the same kernels every run) and XLA's own
    command buffers off (APPS_JAX_CMDBUF=1 keeps them)."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if "XLA_FLAGS" not in os.environ:
        flags = "--xla_gpu_autotune_level=0"
        if os.environ.get("APPS_JAX_CMDBUF", "0") == "0":
            flags += " --xla_gpu_enable_command_buffer="
        os.environ["XLA_FLAGS"] = flags


def jax_setup():
    """Imports numpy and JAX; returns (np, jax, jnp, the first GPU device), or
    raises Skip when JAX or its GPU backend is missing."""
    try:
        import numpy as np
        import jax
        import jax.numpy as jnp
    except Exception as e:  # noqa: BLE001
        raise Skip(f"JAX not importable ({type(e).__name__}: {e})")
    for plat in ("cuda", "gpu"):
        try:
            devs = jax.devices(plat)
        except Exception:  # noqa: BLE001
            continue
        if devs:
            return np, jax, jnp, devs[0]
    raise Skip("no JAX GPU backend")


# --- PyTorch helpers ---------------------------------------------------------

def torch_setup():
    """Imports torch and prepares deterministic plain-FP32 runs; raises Skip
    when torch or CUDA is missing.  Seeds 0."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        raise Skip(f"torch not importable ({type(e).__name__}: {e})")
    if not torch.cuda.is_available():
        raise Skip("torch.cuda.is_available() is False")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    return torch


def torch_sha(tensors):
    """First 16 hex digits of the sha256 of the tensors' bytes (on the host)."""
    import torch
    h = hashlib.sha256()
    for t in tensors:
        c = t.detach().to("cpu").contiguous()
        try:
            b = c.numpy().tobytes()
        except Exception:  # noqa: BLE001  (numpy missing, or a dtype it lacks)
            b = bytes(c.view(torch.uint8).reshape(-1).tolist())
        h.update(b)
    return h.hexdigest()[:16]


def stream_order():
    """How the two-stream apps order one stream after another: Stream.wait_stream
    (a new event each time, as PyTorch's documentation writes it), or with
    APPS_EVENTS=kept a record of an event made once.  Returns order(waiter,
    stream, ev) and the mode's name."""
    kept = os.environ.get("APPS_EVENTS", "wait_stream") == "kept"

    def order(waiter, stream, ev):
        if kept:
            ev.record(stream)
            waiter.wait_event(ev)
        else:
            waiter.wait_stream(stream)
    return order, "kept" if kept else "wait_stream"


def linear_relu(nn, d, depth):
    """depth x (Linear(d, d), ReLU) on the GPU, eval."""
    return nn.Sequential(*[m for _ in range(depth) for m in (nn.Linear(d, d), nn.ReLU())]).cuda().eval()


def torch_capture(torch, body, prepare=None, warm=3):
    """The whole-network capture of the PyTorch documentation: `warm` calls of
    prepare() and body() on a side stream, prepare(), then body() captured by
    torch.cuda.graph.  Returns the graph's replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            if prepare is not None:
                prepare()
            body()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    if prepare is not None:
        prepare()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    torch.cuda.synchronize()
    return g.replay


def torch_train_hand(torch, params, make_opt, loss):
    """A hand-written graph of one training step: forward and loss (loss()),
    backward and a capturable optimizer's step (make_opt(params) builds it, on
    the same parameters: only called after the checksum)."""
    def hand():
        opt = make_opt(params)

        def body():
            loss().backward()
            opt.step()
        return torch_capture(torch, body, prepare=lambda: opt.zero_grad(set_to_none=True))
    return hand


def torch_mse_step(torch, forward, x, target, opt):
    """A training step: the MSE loss of forward(x) against target, backward,
    opt's step, gradients set to None."""
    def step():
        torch.nn.functional.mse_loss(forward(x), target).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def torch_train_app(torch, name, model, x, target, make_opt, steps=8, warmup=60):
    """The App of a training step: the MSE loss of model(x) against target,
    backward, make_opt(params, capturable=False)'s step, gradients set to None;
    its hand-written graph with make_opt(params, capturable=True)."""
    params = list(model.parameters())
    opt = make_opt(params, False)

    def loss():
        return torch.nn.functional.mse_loss(model(x), target)

    return App(
        name, torch_mse_step(torch, model, x, target, opt), torch.cuda.synchronize, lambda: torch_sha(params),
        steps=steps, warmup=warmup, framework=f"torch {torch.__version__}",
        hand=torch_train_hand(torch, params, lambda p: make_opt(p, True), loss))


def torch_dist_setup():
    """Joins the NCCL process group of a torchrun job, one GPU a rank, with
    deterministic plain-FP32 settings; returns (torch, dist, rank, world,
    device).  Raises Skip outside torchrun or where GPUs are fewer than ranks."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise Skip("not started by torchrun (RANK, WORLD_SIZE unset)")
    torch = torch_setup()
    import torch.distributed as dist
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if torch.cuda.device_count() < world:
        raise Skip(f"{world} ranks need {world} GPUs, this machine has {torch.cuda.device_count()}")
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    return torch, dist, rank, world, dev


def torch_dist_app(torch, dist, name, step, params, steps=8, warmup=40):
    """The App of a job's training step: barrier and slowest-rank time through
    the job's process group; checksum of rank 0's parameters (a sharded
    parameter's local shard); no hand-written graph (a capture spanning the
    ranks' collectives is a job of its own)."""
    dev = torch.device("cuda", torch.cuda.current_device())

    def reduce_max(dt):
        t = torch.tensor([dt], dtype=torch.float64, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    def local():
        return [p.to_local() if hasattr(p, "to_local") else p for p in params]

    return App(name, step, torch.cuda.synchronize, lambda: torch_sha(local()), steps=steps, warmup=warmup,
               framework=f"torch {torch.__version__}, {dist.get_world_size()} ranks over NCCL",
               hand_why="none for a job of several ranks", barrier=dist.barrier, reduce_max=reduce_max)
