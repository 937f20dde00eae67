"""torch_adamw_bench.py: a PyTorch training step with AdamW, eager or as a
hand-written CUDA graph.

    python3 torch_adamw_bench.py --mode eager|graph --d 256 --layers 8 --batch 32

The MLP of torch_mlp_bench.py (blocks of LayerNorm -> Linear(d, 4d) -> GELU ->
Linear(4d, d) with a residual) learns to map a fixed batch to a fixed target:
forward, MSE loss, backward, AdamW step, gradients set to None.  One step per
iteration, then torch.cuda.synchronize().

eager  AdamW as constructed by default (foreach, not capturable): its step count
       lives on the host, so the scalar arguments of its kernels (bias
       corrections, step sizes) change every step, and the caching allocator
       hands out the gradients anew every step.
graph  the step captured once with torch.cuda.graph and replayed, which needs
       AdamW(capturable=True): the step count lives on the GPU.

The first --warmup steps (100; graphshim learns during them) are followed by a
sha256 of all parameters (`checksum`), then reps x iters timed steps
(`us_per_iter`, the median over reps).  Eager with and without graphshim must
print the same checksum.  graph's may differ in the last bits: capturable AdamW
computes its bias corrections on the GPU in float32, the default one on the host
in double.
"""
import hashlib

import torch

from torch_mlp_bench import Block, options, print_time


def main():
    ap = options(batch=32, iters=100)
    ap.add_argument("--warmup", type=int, default=100)
    a = ap.parse_args()

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(a.d) for _ in range(a.layers)]).cuda().train()
    x = torch.randn(a.batch, a.d, device="cuda")
    target = torch.randn(a.batch, a.d, device="cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=a.mode == "graph")

    def eager_step():
        torch.nn.functional.mse_loss(model(x), target).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    if a.mode == "graph":
        # Three eager steps on a side stream before the capture, as the PyTorch
        # documentation's whole-network capture does; they count as warm-up steps.
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                eager_step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            torch.nn.functional.mse_loss(model(x), target).backward()
            opt.step()
        step, done = g.replay, 3
    else:
        step, done = eager_step, 0
    for _ in range(a.warmup - done):
        step()
        torch.cuda.synchronize()
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().float().cpu().numpy().tobytes())
    print_time(step, a.iters, a.reps)
    print(f"checksum {h.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
