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
