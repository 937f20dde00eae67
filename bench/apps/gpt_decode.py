#!/usr/bin/env python3
"""gpt_decode: token-by-token greedy generation with a growing KV cache, from
a GPT-2-like decoder written here and initialised from seed 0 (4 layers,
d_model 256, 4 heads, MLP 1024, vocabulary 1000, learned positions; pre-norm
blocks; scaled_dot_product_attention).  A step is one generation: a fixed
prompt of 2 x 16 tokens runs once (causal attention), then 63 more tokens one
at a time, each appending its keys and values to every layer's cache
(torch.cat: the cache grows every token), each picking the argmax and, as
generation loops do, reading on the host whether every sequence hit the end
token (a synchronize per token; the end token is never produced, so every
generation has 64 tokens).  Times are per token (prefill included).  No
hand-written graph: the shapes change every token.  Checksum: the last
generation's tokens and logits."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

NAME = "gpt_decode"
LAYERS, D, HEADS, FF, VOCAB, MAXPOS = 4, 256, 4, 1024, 1000, 128
BATCH, PROMPT, NEW = 2, 16, 64
EOS = VOCAB  # no such token: generations never stop early


def build():
    torch = common.torch_setup()
    nn = torch.nn
    F = nn.functional
    HD = D // HEADS

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)

        def forward(self, x, cache):
            B, T, _ = x.shape
            q, k, v = self.qkv(x).split(D, dim=2)
            q = q.view(B, T, HEADS, HD).transpose(1, 2)
            k = k.view(B, T, HEADS, HD).transpose(1, 2)
            v = v.view(B, T, HEADS, HD).transpose(1, 2)
            if cache is not None:
                k = torch.cat([cache[0], k], dim=2)
                v = torch.cat([cache[1], v], dim=2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
            return self.proj(y.transpose(1, 2).reshape(B, T, D)), (k, v)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(D)
            self.up = nn.Linear(D, FF)
            self.down = nn.Linear(FF, D)

        def forward(self, x, cache):
            a, cache = self.attn(self.ln1(x), cache)
            x = x + a
            return x + self.down(F.gelu(self.up(self.ln2(x)))), cache

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, D)
            self.pos = nn.Embedding(MAXPOS, D)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln = nn.LayerNorm(D)
            self.head = nn.Linear(D, VOCAB, bias=False)

        def forward(self, idx, caches, start):
            T = idx.shape[1]
            h = self.tok(idx) + self.pos.weight[start:start + T]
            new = []
            for i, blk in enumerate(self.blocks):
                h, c = blk(h, None if caches is None else caches[i])
                new.append(c)
            return self.head(self.ln(h[:, -1:])), new

    model = GPT().cuda().eval()
    prompt = torch.randint(0, VOCAB, (BATCH, PROMPT), device="cuda")
    state = {}

    def step():
        with torch.no_grad():
            logits, caches = model(prompt, None, 0)
            tok = logits[:, -1].argmax(dim=-1, keepdim=True)
            toks = [tok]
            for i in range(NEW - 1):
                logits, caches = model(tok, caches, PROMPT + i)
                tok = logits[:, -1].argmax(dim=-1, keepdim=True)
                toks.append(tok)
                if bool((tok == EOS).all()):
                    break
            state["tokens"] = torch.cat(toks, dim=1)
            state["logits"] = logits

    return common.App(
        NAME, step, torch.cuda.synchronize,
        lambda: common.torch_sha([state["tokens"], state["logits"]]),
        steps=1, warmup=6, unit="token", units_per_step=NEW,
        hand_why="the KV cache grows every token", framework=f"torch {torch.__version__}")


if __name__ == "__main__":
    common.main(NAME, build)
