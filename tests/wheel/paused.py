"""paused.py: the graphshim module in a program whose CUDA work repeats.

    python paused.py fake shim|plain     the fake CUDA driver (tests/fakecuda),
                                         driven through ctypes as cuda-python
                                         drives a real one (tests/wheel/check.sh)
    python paused.py torch shim|plain    PyTorch on a GPU (tests/wheel/gpu.sh)

shim: under `graphshim run`; plain: without graphshim.

The program runs 12 steps four times: freely, inside `with graphshim.paused():`,
between pause() and resume(), and freely again; and prints each step's result
on stdout, which must not depend on graphshim.  A step of the fake is three
kernel launches on a stream and a copy back to the host (a boundary); a step of
torch is 24 elementwise kernels and a synchronize, then the tensor's sum and
first value read back.

Under graphshim it checks that active() is True after the first CUDA call (and,
over the fake, whose first CUDA call is the program's own cuInit, False before
it), that counters() rise while graphshim is active (ops held and replayed) and
stay still while it is paused.  Without graphshim, that active() is False, that
pause(), resume() and counters() raise NotLoadedError, and that paused() runs
its block.  Each failed check is a line on stderr starting with FAIL; the exit
status is 1 if any failed.
"""
import ctypes
import sys

import graphshim

N = 16
STEPS = 12
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL {what}", file=sys.stderr)


KERNEL = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


def arg(params, i, ctype):
    return ctypes.cast(params[i], ctypes.POINTER(ctype))[0]


def floats(ptr):
    return (ctypes.c_float * N).from_address(ptr)


@KERNEL
def fill(params, dims):  # fill(float *x, float v): x[i] = v + i
    x, v = floats(arg(params, 0, ctypes.c_void_p)), arg(params, 1, ctypes.c_float)
    for i in range(N):
        x[i] = v + i


@KERNEL
def axpb(params, dims):  # axpb(float *x, float a, float b): x[i] = a * x[i] + b
    x = floats(arg(params, 0, ctypes.c_void_p))
    a, b = arg(params, 1, ctypes.c_float), arg(params, 2, ctypes.c_float)
    for i in range(N):
        x[i] = a * x[i] + b


class Fake:
    """The few driver calls a step needs; each failing call exits the program.
    Kernels are Python functions, which the fake runs when the work is issued
    (fakecuda_define_kernel)."""

    first_call_is_ours = True

    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.call("cuInit", 0)
        dev, self.ctx = ctypes.c_int(), ctypes.c_void_p()
        self.call("cuDeviceGet", ctypes.byref(dev), 0)
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), dev)
        self.call("cuCtxSetCurrent", self.ctx)
        for name, fn, sizes in ((b"gs_fill", fill, (8, 4)), (b"gs_axpb", axpb, (8, 4, 4))):
            sizes = (ctypes.c_size_t * (len(sizes) + 1))(*sizes, 0)
            if self.cu.fakecuda_define_kernel(name, fn, sizes) != 0:
                sys.exit(f"fakecuda_define_kernel({name}) failed")
        mod, self.fn = ctypes.c_void_p(), {}
        self.call("cuModuleLoadData", ctypes.byref(mod), b"image")
        for name in ("gs_fill", "gs_axpb"):
            f = ctypes.c_void_p()
            self.call("cuModuleGetFunction", ctypes.byref(f), mod, name.encode())
            self.fn[name] = f
        self.stream, self.x = ctypes.c_void_p(), ctypes.c_uint64()
        self.call("cuStreamCreate", ctypes.byref(self.stream), 1)  # CU_STREAM_NON_BLOCKING
        self.call("cuMemAlloc_v2", ctypes.byref(self.x), ctypes.c_size_t(4 * N))
        self.host = (ctypes.c_float * N)()

    def call(self, name, *args):
        rc = getattr(self.cu, name)(*args)
        if rc != 0:
            sys.exit(f"{name}: CUresult {rc}")

    def launch(self, name, *args):
        params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        self.call("cuLaunchKernel", self.fn[name], 1, 1, 1, 1, 1, 1, 0, self.stream, params, None)

    def step(self, it):
        self.launch("gs_fill", self.x, ctypes.c_float(it % 3))
        self.launch("gs_axpb", self.x, ctypes.c_float(2), ctypes.c_float(1))
        self.launch("gs_axpb", self.x, ctypes.c_float(0.5), ctypes.c_float(it % 5))
        self.call("cuMemcpyDtoH_v2", self.host, self.x, ctypes.c_size_t(4 * N))
        print(it, " ".join(f"{v:g}" for v in self.host))


class Torch:
    """A tensor of 1024 floats through tanh, eight times three kernels a step."""

    first_call_is_ours = False

    def __init__(self):
        import torch
        self.torch = torch
        if not torch.cuda.is_available():
            sys.exit("paused.py: torch.cuda.is_available() is False")
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(1024, generator=g).to("cuda")

    def step(self, it):
        x = self.x
        for _ in range(8):
            x = self.torch.tanh(x * 1.01 + 0.01 * (it % 3))
        self.torch.cuda.synchronize()
        self.x = x
        print(it, float(x.sum().item()).hex(), float(x[0].item()).hex())


def steps(drv, first):
    for it in range(first, first + STEPS):
        drv.step(it)


def held_and_replayed(c):
    return (c["ops"], c["ops_held"], c["ops_replayed"], c["replays"])


def under_graphshim(backend):
    if backend.first_call_is_ours:
        check(not graphshim.active(), "active() is True before the first CUDA call")
    drv = backend()
    check(graphshim.active(), "active() is False after the first CUDA call under graphshim")
    c0 = graphshim.counters()
    steps(drv, 0)
    c1 = graphshim.counters()
    check(c1["ops"] > c0["ops"], f"ops did not rise while active: {c0} -> {c1}")
    check(c1["ops_held"] > c0["ops_held"], f"ops_held did not rise while active: {c0} -> {c1}")
    check(c1["ops_replayed"] > c0["ops_replayed"], f"ops_replayed did not rise while active: {c0} -> {c1}")
    with graphshim.paused():
        steps(drv, STEPS)
    c2 = graphshim.counters()
    check(held_and_replayed(c2) == held_and_replayed(c1), f"counters moved inside paused(): {c1} -> {c2}")
    graphshim.pause()
    steps(drv, 2 * STEPS)
    graphshim.resume()
    c3 = graphshim.counters()
    check(held_and_replayed(c3) == held_and_replayed(c2), f"counters moved between pause() and resume(): {c2} -> {c3}")
    steps(drv, 3 * STEPS)
    c4 = graphshim.counters()
    check(c4["ops_held"] > c3["ops_held"], f"ops_held did not rise after resume(): {c3} -> {c4}")
    check(c4["ops_replayed"] > c3["ops_replayed"], f"ops_replayed did not rise after resume(): {c3} -> {c4}")
    print(f"counters: {c0} {c1} {c2} {c3} {c4}", file=sys.stderr)


def without_graphshim(backend):
    check(not graphshim.active(), "active() is True without graphshim")
    for name in ("pause", "resume", "counters"):
        try:
            getattr(graphshim, name)()
            check(False, f"{name}() without graphshim raised nothing")
        except graphshim.NotLoadedError as e:
            check("not loaded" in str(e), f"{name}() without graphshim: unclear message {e}")
    drv = backend()
    steps(drv, 0)
    ran = False
    with graphshim.paused():
        steps(drv, STEPS)
        ran = True
    check(ran, "paused() without graphshim did not run its block")
    steps(drv, 2 * STEPS)
    steps(drv, 3 * STEPS)


if __name__ == "__main__":
    backends = {"fake": Fake, "torch": Torch}
    modes = {"shim": under_graphshim, "plain": without_graphshim}
    if len(sys.argv) != 3 or sys.argv[1] not in backends or sys.argv[2] not in modes:
        sys.exit("usage: paused.py fake|torch shim|plain")
    modes[sys.argv[2]](backends[sys.argv[1]])
    sys.exit(1 if failures else 0)
