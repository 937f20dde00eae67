#!/usr/bin/env python3
"""torch_bail_sites: a step of elementwise ops that a call of the program cuts
in the middle, for the report's bail sites (GRAPHSHIM_BAIL_SITES, docs/report.md):

  item   (the default) every 4th step reads a value back with .item() in its middle (a
         copy to the host and a synchronize: PyTorch's
         at::native::_local_scalar_dense_cuda)
  alloc  every 3rd step empties the caching allocator's cache in its middle,
         so the next tensors are allocated anew (cudaFree, cudaMalloc)

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
    ap.add_argument("mode", nargs="?", default="item", choices=["item", "alloc"])
    ap.add_argument("--iters", type=int, default=200)
    args = ap.parse_args()
    require_cuda("torch_bail_sites")
    x = torch.linspace(0, 1, 4096, device="cuda")
    seen = 0.0
    for i in range(args.iters):
        # The cut comes after another op each time it comes (a prefix cut at
        # one place every time would be learned as a sequence of its own).
        cut = (i // 4) % 15 + 1 if args.mode == "item" and i % 4 == 3 else \
              (i // 3) % 15 + 1 if args.mode == "alloc" and i % 3 == 2 else -1
        for j in range(16):
            if j == cut and args.mode == "item":
                seen += x[7].item()
            if j == cut and args.mode == "alloc":
                torch.cuda.empty_cache()
            x = torch.sin(x) * 0.5 + 0.25 if j % 2 else torch.cos(x) * 0.5 + 0.25
        torch.cuda.synchronize()
    print("out.sha256", sha256_of(x))
    print("seen", seen.hex())


if __name__ == "__main__":
    main()
