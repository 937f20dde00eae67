#!/usr/bin/env python3
"""torch_bail_sites: a step of elementwise ops that a call of the program cuts
in the middle, for the report's bail sites (GRAPHSHIM_BAIL_SITES, docs/report.md):

  item   every 4th step reads a value back with .item() after half its ops
         (a copy to the host and a synchronize: PyTorch's
         at::native::_local_scalar_dense_cuda)
  alloc  every 3rd step empties the caching allocator's cache after half its
         ops, so the next tensors are allocated anew (cudaFree, cudaMalloc)

Prints a deterministic checksum on stdout.  Run it under graphshim and read the
sites of the reasons that cut it:

  GRAPHSHIM_REPORT=r.json build/graphshim run -- python3 samples/torch_bail_sites.py item
  build/graphshim report r.json | sed -n '/^bails by/,$p'
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch_util import require_cuda, sha256_of  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["item", "alloc"])
    ap.add_argument("--iters", type=int, default=200)
    args = ap.parse_args()
    require_cuda("torch_bail_sites")
    x = torch.linspace(0, 1, 4096, device="cuda")
    seen = 0.0
    for i in range(args.iters):
        for _ in range(8):
            x = torch.sin(x) * 0.5 + 0.25
        if args.mode == "item" and i % 4 == 3:
            seen += x[7].item()
        if args.mode == "alloc" and i % 3 == 2:
            torch.cuda.empty_cache()
        for _ in range(8):
            x = torch.cos(x) * 0.5 + 0.25
        torch.cuda.synchronize()
    print("sha256", sha256_of(x))
    print("seen", seen.hex())


if __name__ == "__main__":
    main()
