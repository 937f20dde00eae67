"""CuPy set-up shared by cupy_elementwise.py and cupy_fft.py."""
import hashlib

import common


def cupy_setup():
    """Returns (numpy, cupy); raises common.Skip when either is missing or CuPy
    sees no GPU."""
    try:
        import numpy as np
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        raise common.Skip(f"CuPy not importable ({type(e).__name__}: {e})")
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        raise common.Skip(f"CuPy sees no CUDA device ({type(e).__name__}: {e})")
    if n < 1:
        raise common.Skip("CuPy sees no CUDA device")
    return np, cp


def sync(cp):
    """Waits for the current stream (the legacy default stream here)."""
    cp.cuda.get_current_stream().synchronize()


def sha(cp, arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(cp.asnumpy(a).tobytes())
    return h.hexdigest()[:16]
