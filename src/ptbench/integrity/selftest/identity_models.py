"""Honest fine-tunes and disguised copies of a forbidden model, made from a tiny GQA Llama here.

Used by the integrity self-test (ptbench.integrity.selftest), tests/integrity/test_model_identity_disguises.py
and scripts/bench_model_identity.py. `python -m ptbench.integrity.selftest.identity_models ROOT
TOKENIZER_DIR` writes every model under ROOT (`build(..., names=...)`: only those and what they need):

- base: a random tiny Llama (4 query heads in 2 key/value groups, SwiGLU MLP);
- instruct: the forbidden model, a real TRL SFT of the base on a chat task (it learns it);
- honest: sft_long (TRL, other instruction data, 3x the steps), lora (a low-rank update trained
  with plain torch and merged back: peft is not installed here), added_tokens (sft_long + 2 tokens);
- cheats: merge_<a> (a * instruct + (1 - a) * base), permuted (hidden, MLP and head units of the
  instruct model permuted), rescaled (SwiGLU up rows * c, down columns / c, some c < 0),
  disguised (permuted + rescaled + a little noise), merge_0.45_permuted, merge_0.45_sft (the 0.45
  merge, then the same long SFT as sft_long).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MERGES = (0.1, 0.25, 0.45, 0.7, 0.9)
HONEST = ("sft_long", "lora", "added_tokens")
CHEATS = (*(f"merge_{a}" for a in MERGES), "merge_0.45_sft", "permuted", "rescaled", "disguised", "merge_0.45_permuted")
WORDS = "red green blue cat dog sun moon tree fish bird star lake".split()


def _data(root: Path, name: str, rows: list[dict]) -> str:
    p = root / f"{name}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(p)


def make_base(out: Path, tokenizer_dir: Path) -> Path:
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=256,
        tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return out


def _sft(root: Path, model: Path, rows: str, out: str, steps: int, lr: float, seed: int) -> Path:
    from ptbench.training.reference_sft import parse_args, train

    argv = ["--base-model", str(model), "--train-file", rows, "--output", str(root / out), "--seed", str(seed)]
    argv += ["--max-steps", str(steps), "--learning-rate", str(lr), "--batch-size", "8"]
    return train(parse_args(argv))


def _load(path: Path):
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32)


def _save(model, src: Path, out: Path) -> Path:
    from transformers import AutoTokenizer

    model.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(str(src)).save_pretrained(str(out))
    return out


def merge(base: Path, other: Path, a: float, out: Path) -> Path:
    import torch

    m, o = _load(base), _load(other)
    with torch.no_grad():
        for (_, p), (_, q) in zip(m.named_parameters(), o.named_parameters(), strict=True):
            p.copy_((1 - a) * p + a * q)
    return _save(m, other, out)


def permute(src: Path, out: Path, seed: int, *, rescale: bool = False, noise: float = 0.0, perm: bool = True) -> Path:
    """A function-preserving disguise of `src` (plus, with `noise`, a little noise on every weight)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    m = _load(src)
    c = m.config
    h, nh, nkv, d = c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim
    grp = nh // nkv

    def heads(p):  # row indices of whole heads
        return (p[:, None] * d + torch.arange(d)).reshape(-1)

    with torch.no_grad():
        sigma = torch.randperm(h, generator=g) if perm else torch.arange(h)
        m.model.embed_tokens.weight.data = m.model.embed_tokens.weight.data[:, sigma].contiguous()  # tied: lm_head too
        m.model.norm.weight.data = m.model.norm.weight.data[sigma].contiguous()
        for layer in m.model.layers:
            at, mlp = layer.self_attn, layer.mlp
            layer.input_layernorm.weight.data = layer.input_layernorm.weight.data[sigma].contiguous()
            layer.post_attention_layernorm.weight.data = layer.post_attention_layernorm.weight.data[sigma].contiguous()
            kappa = torch.randperm(nkv, generator=g) if perm else torch.arange(nkv)
            qp = torch.cat(
                [kappa[j] * grp + (torch.randperm(grp, generator=g) if perm else torch.arange(grp)) for j in range(nkv)]
            )
            at.q_proj.weight.data = at.q_proj.weight.data[heads(qp)][:, sigma].contiguous()
            at.k_proj.weight.data = at.k_proj.weight.data[heads(kappa)][:, sigma].contiguous()
            at.v_proj.weight.data = at.v_proj.weight.data[heads(kappa)][:, sigma].contiguous()
            at.o_proj.weight.data = at.o_proj.weight.data[sigma][:, heads(qp)].contiguous()
            inter = mlp.gate_proj.weight.shape[0]
            pi = torch.randperm(inter, generator=g) if perm else torch.arange(inter)
            scale = torch.ones(inter)
            if rescale:
                scale = torch.exp(torch.empty(inter).uniform_(-1.5, 1.5, generator=g))
                scale *= torch.where(torch.rand(inter, generator=g) < 0.2, -1.0, 1.0)
            mlp.gate_proj.weight.data = mlp.gate_proj.weight.data[pi][:, sigma].contiguous()
            mlp.up_proj.weight.data = (mlp.up_proj.weight.data[pi][:, sigma] * scale[:, None]).contiguous()
            mlp.down_proj.weight.data = (mlp.down_proj.weight.data[sigma][:, pi] / scale).contiguous()
        if noise:
            for p in m.parameters():
                p.add_(torch.randn(p.shape, generator=g) * p.std() * noise)
    return _save(m, src, out)


def lora(base: Path, rows: str, out: Path, *, rank: int = 4, steps: int = 60, lr: float = 1e-2) -> Path:
    """Train a rank-`rank` update of every attention and MLP projection with plain torch, merge it back."""
    import torch
    from transformers import AutoTokenizer

    torch.manual_seed(2)
    m, tok = _load(base), AutoTokenizer.from_pretrained(str(base))
    for p in m.parameters():
        p.requires_grad_(False)
    adapters = []
    for name, mod in m.named_modules():
        if isinstance(mod, torch.nn.Linear) and name.split(".")[-1].endswith("_proj"):
            a = torch.nn.Parameter(torch.randn(rank, mod.in_features) / mod.in_features**0.5)
            b = torch.nn.Parameter(torch.zeros(mod.out_features, rank))
            mod.register_forward_hook(lambda mod, inp, outp, a=a, b=b: outp + inp[0] @ a.T @ b.T * 2.0)
            adapters.append((mod, a, b))
    opt = torch.optim.AdamW([p for _, a, b in adapters for p in (a, b)], lr=lr)
    texts = [json.loads(line) for line in Path(rows).read_text().splitlines()]
    for step in range(steps):
        batch = texts[(step * 8) % len(texts) :][:8]
        enc = tok([r["prompt"] + r["completion"] + tok.eos_token for r in batch], return_tensors="pt", padding=True)
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        loss = m(**enc, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    fresh = _load(base)
    mods = dict(fresh.named_modules())
    with torch.no_grad():
        for name, mod in m.named_modules():
            for sub, a, b in adapters:
                if sub is mod:
                    mods[name].weight.add_(b @ a * 2.0)
    return _save(fresh, base, out)


def build(root: Path, tokenizer_dir: Path, names: tuple[str, ...] | None = None) -> dict[str, Path]:
    """Every model (or only `names`, with the base and the instruct model they are made from)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    want = set(names if names is not None else ("instruct", *HONEST, *CHEATS))
    if "merge_0.45_sft" in want or "merge_0.45_permuted" in want:
        want.add("merge_0.45")
    if "added_tokens" in want:
        want.add("sft_long")
    root.mkdir(parents=True, exist_ok=True)
    base = make_base(root / "base", tokenizer_dir)
    chat = _data(
        root, "chat", [{"prompt": f"<|user|>say {w}\n<|assistant|>", "completion": f"{w} {w}!"} for w in WORDS]
    )
    other = [{"prompt": f"<|user|>spell {w}\n<|assistant|>", "completion": "-".join(w)} for w in WORDS]
    other += [{"prompt": f"<|user|>reverse {w}\n<|assistant|>", "completion": w[::-1]} for w in WORDS]
    instr = _data(root, "instructions", other)
    _sft(root, base, chat, "instruct", 120, 3e-3, 0)
    if "sft_long" in want:
        _sft(root, base, instr, "sft_long", 120, 3e-3, 1)
    if "lora" in want:
        lora(base, instr, root / "lora")
    if "added_tokens" in want:
        tok = AutoTokenizer.from_pretrained(str(root / "sft_long"))
        model = AutoModelForCausalLM.from_pretrained(str(root / "sft_long"))
        tok.add_tokens(["<tool_call>", "</tool_call>"])
        model.resize_token_embeddings(len(tok))
        model.save_pretrained(str(root / "added_tokens"))
        tok.save_pretrained(str(root / "added_tokens"))
    instruct = root / "instruct"
    for a in MERGES:
        if f"merge_{a}" in want:
            merge(base, instruct, a, root / f"merge_{a}")
    if "merge_0.45_sft" in want:  # the merge, then the honest SFT
        _sft(root, root / "merge_0.45", instr, "merge_0.45_sft", 120, 3e-3, 1)
    if "permuted" in want:
        permute(instruct, root / "permuted", 1)
    if "rescaled" in want:
        permute(instruct, root / "rescaled", 2, rescale=True, perm=False)
    if "disguised" in want:
        permute(instruct, root / "disguised", 3, rescale=True, noise=0.01)
    if "merge_0.45_permuted" in want:
        permute(root / "merge_0.45", root / "merge_0.45_permuted", 4)
    return {p.name: p for p in root.iterdir() if (p / "config.json").exists()}


if __name__ == "__main__":
    build(Path(sys.argv[1]), Path(sys.argv[2]))
