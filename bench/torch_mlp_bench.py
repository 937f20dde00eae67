"""torch_mlp_bench.py: PyTorch MLP inference, eager or as a hand-written CUDA graph.

    python3 torch_mlp_bench.py --mode eager|graph --d 256 --layers 8 --batch 1

Blocks of LayerNorm -> Linear(d, 4d) -> GELU -> Linear(4d, d) with a residual; one
forward per iteration, then torch.cuda.synchronize().  `graph` captures one forward
with torch.cuda.graph and replays it.  Prints us_per_iter (median over reps) and a
sha256 of the output, which eager, graphshim and graph must agree on.
"""
import argparse
import hashlib
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def options(batch, iters):
    """The options of the PyTorch benchmarks, with their defaults of batch and iters."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["eager", "graph"], default="eager")
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--iters", type=int, default=iters)
    ap.add_argument("--reps", type=int, default=5)
    return ap


def print_time(step, iters, reps):
    """Times reps rounds of iters calls of step(), each followed by
    torch.cuda.synchronize(), and prints the median time per call, and the
    median host time of step() alone (issuing, before the synchronize)."""
    per, hosts = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        host = 0.0
        for _ in range(iters):
            t1 = time.perf_counter()
            step()
            host += time.perf_counter() - t1
            torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) / iters * 1e6)
        hosts.append(host / iters * 1e6)
    per.sort()
    hosts.sort()
    print(f"us_per_iter {per[len(per) // 2]:.3f}")
    print(f"host_us_per_iter {hosts[len(hosts) // 2]:.3f}")


def main():
    a = options(batch=1, iters=300).parse_args()

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(a.d) for _ in range(a.layers)]).cuda().eval()
    x = torch.randn(a.batch, a.d, device="cuda")
    with torch.no_grad():
        if a.mode == "graph":
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    model(x)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                y = model(x)
            step = g.replay
        else:
            def step():
                global y_eager
                y_eager = model(x)
        for _ in range(20):
            step()
            torch.cuda.synchronize()
        print_time(step, a.iters, a.reps)
        out = y if a.mode == "graph" else y_eager
        print(f"checksum {hashlib.sha256(out.float().cpu().numpy().tobytes()).hexdigest()[:16]}")


if __name__ == "__main__":
    main()
