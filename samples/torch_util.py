"""Helpers shared by the PyTorch samples (no CUDA work here)."""
import hashlib
import sys


def tensor_bytes(t):
    """Raw bytes of a tensor (copied to the CPU, contiguous)."""
    import torch
    c = t.detach().to("cpu").contiguous()
    try:
        return c.numpy().tobytes()
    except Exception:  # numpy missing: go through a uint8 view
        return bytes(c.view(torch.uint8).reshape(-1).tolist())


def sha256_of(t):
    return hashlib.sha256(tensor_bytes(t)).hexdigest()


def print_values(label, t, idxs):
    """Print a few values exactly (float.hex) of a float32 tensor."""
    flat = t.detach().to("cpu").reshape(-1)
    for i in idxs:
        v = float(flat[i].item())
        print(f"{label}[{i}] {v.hex()}")


def require_cuda(name):
    import torch
    if not torch.cuda.is_available():
        print(f"{name}: FAILED: torch.cuda.is_available() is False", file=sys.stderr)
        sys.exit(2)


# Exit code of a sample whose framework (JAX, CuPy, torchvision) is not
# installed: gpu-test.sh reports the sample as SKIP when the plain run exits
# with it.
SKIP_RC = 77


def skip(name, why):
    print(f"{name}: SKIP: {why}", file=sys.stderr)
    sys.exit(SKIP_RC)


def init_distributed(name):
    """Joins the NCCL process group of a torchrun job on this rank's GPU.
    Returns (rank, world size, local rank, device); SKIP (exit 77) where the
    machine has fewer GPUs than the job has processes."""
    import os
    import torch
    import torch.distributed as dist
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        print(f"{name}: FAILED: run it with torchrun --nproc-per-node 2", file=sys.stderr)
        sys.exit(2)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    require_cuda(name)
    if torch.cuda.device_count() < world:
        skip(name, f"{world} processes need {world} GPUs, this machine has {torch.cuda.device_count()}")
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    return rank, world, local, dev


def deterministic_torch(strict=False):
    """Plain FP32 everywhere (no TF32), deterministic cuDNN algorithm choice;
    with strict, torch.use_deterministic_algorithms(True) too (needs
    CUBLAS_WORKSPACE_CONFIG set before torch initialises cuBLAS)."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    if strict:
        torch.use_deterministic_algorithms(True)


def print_array_values(label, arr, idxs):
    """Print a few values exactly (float.hex) of a host (numpy) array."""
    flat = arr.reshape(-1)
    for i in idxs:
        print(f"{label}[{i}] {float(flat[i]).hex()}")


def frac_steps(x, it, salt, count=8):
    """count tiny kernels each (mul, add, floor, sub): x = frac(a*x + b), a and
    b of period 4 in the iteration it, exact in binary."""
    import torch
    for k in range(count):
        a = 1.25 + ((it % 4) * 5 + k * 3 + salt) % 12 / 16.0
        b = ((it % 4) * 7 + k * 5 + salt) % 23 / 32.0
        x = x * a + b
        x = x - torch.floor(x)
    return x


def print_job(name, steps, world, total):
    """Rank 0 of a job: its time per step on stderr, then its name, steps and
    world size on stdout."""
    print(f"{name}: {steps} steps on {world} ranks, {1e6 * total / steps:.1f} us/step", file=sys.stderr)
    print(f"sample {name}")
    print(f"steps {steps}")
    print(f"world {world}")


def print_losses(label, losses):
    """Every step's loss, exactly (float.hex)."""
    for i, v in enumerate(losses):
        print(f"{label}[{i}] {v.hex()}")


def maybe_die(rank, step):
    """GS_SAMPLE_KILL=RANK:STEP kills this process (SIGKILL) at that step of
    that rank: samples/ranks-test.sh's rank that dies mid-job."""
    import os
    import signal
    want = os.environ.get("GS_SAMPLE_KILL", "")
    if want and want == f"{rank}:{step}":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def fail_if_not_finite(name, ok):
    if not ok:
        print(f"{name}: FAILED: non-finite values in the output", file=sys.stderr)
        sys.exit(1)
