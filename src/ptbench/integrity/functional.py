"""A functional fingerprint: what a model predicts on probe inputs only the harness chooses.

Every reparametrization that keeps a model's function (permuted units, rescaled SwiGLU pairs,
rotations inside heads, a rotated residual stream) keeps its next-token distributions. The
probes are fixed texts (prose, code, numbers, a chat turn in the base's own template) and random
token sequences drawn from a seed chosen per check run, tokenized by the base's tokenizer (the
vocabulary check has established that every base token keeps its id in final_model). Each model
is loaded by the evaluation engine's transformers loader, one at a time, on the GPU where there is
one; log-probabilities over the base's vocabulary are compared on the tokens the base and the
forbidden model consider likely (their mean distribution weights every comparison).
"""

from __future__ import annotations

import gc
import random
from pathlib import Path
from typing import Any

from ptbench.integrity.report import Unchecked

TEXTS = (
    "The committee met on Tuesday to review the budget, and after a long discussion it decided to postpone",
    "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
    "Question: A train travels 120 km in 2 hours. What is its average speed?\nAnswer: 60 km/h because",
    "In 1905 Einstein published four papers; the third introduced special relativity, which",
)
RANDOM_PROBES = 4
PROBE_TOKENS = 48
TOP_TOKENS = 64  # per position: the tokens the base and the forbidden model find most likely


def probes(base: Path, seed: int, vocab: int) -> list[list[int]]:
    """Token ids of the probe inputs (the base's tokenizer; random sequences from `seed`)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(base))
    texts = list(TEXTS)
    if tok.chat_template:
        turn = tok.apply_chat_template(
            [{"role": "user", "content": "Name three primary colors."}], tokenize=False, add_generation_prompt=True
        )
        texts.append(str(turn) + "Red, yellow and blue.")
    out = [[i for i in tok(t, add_special_tokens=True)["input_ids"] if i < vocab][:PROBE_TOKENS] for t in texts]
    special = set(tok.all_special_ids)
    ordinary = [i for i in range(min(len(tok), vocab)) if i not in special]
    rng = random.Random(seed)
    out += [[rng.choice(ordinary) for _ in range(PROBE_TOKENS)] for _ in range(RANDOM_PROBES)]
    return [p for p in out if len(p) >= 2]


def log_probs(model_dir: Path, inputs: list[list[int]], vocab: int) -> Any:
    """[positions, vocab] log-probabilities of the next token, over the base's `vocab` (added tokens left out)."""
    import torch

    from ptbench.inference.hf import TransformersEngine

    try:
        engine = TransformersEngine(str(model_dir))
    except Exception as exc:  # noqa: BLE001  (any failure to load is a comparison that cannot be made)
        raise Unchecked(f"functional fingerprint: {model_dir} does not load ({type(exc).__name__}: {exc})") from None
    model = engine.model
    out = []
    with torch.inference_mode():
        for ids in inputs:
            logits = model(torch.tensor([ids], device=engine.device)).logits[0].float()
            if logits.shape[-1] < vocab:
                raise Unchecked(f"functional fingerprint: {model_dir} predicts {logits.shape[-1]} tokens, base {vocab}")
            out.append(torch.log_softmax(logits[:, :vocab], dim=-1).cpu())
    del engine, model
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return torch.cat(out)


def compare(final: Any, base: Any, other: Any) -> dict[str, float]:
    """Distances and the projection coefficient in function space, in units of |other - base|:
    distance_to_base / distance_to_forbidden (0: the same function), alpha (how much of the
    forbidden model's change in predictions final carries) and the largest log-prob difference
    from the forbidden model on the compared tokens."""
    w_full = (base.exp() + other.exp()) / 2
    idx = w_full.topk(min(TOP_TOKENS, base.shape[1]), dim=1).indices
    w = w_full.gather(1, idx)
    w = w / w.sum(1, keepdim=True)

    def centered(lp: Any) -> Any:
        g = lp.gather(1, idx)
        return g - (w * g).sum(1, keepdim=True)  # a per-position constant is not a difference in prediction

    cx, cb, cf = centered(final), centered(base), centered(other)
    dx, df = cx - cb, cf - cb
    nf = float((w * df * df).sum())
    if nf <= 0:
        raise Unchecked("functional fingerprint: the forbidden model predicts exactly as the base does")
    return {
        "alpha": float((w * dx * df).sum()) / nf,
        "distance_to_base": (float((w * dx * dx).sum()) / nf) ** 0.5,
        "distance_to_forbidden": (float((w * (cx - cf) ** 2).sum()) / nf) ** 0.5,
        "max_logprob_diff_to_forbidden": float((cx - cf).abs().max()),
        "rms_logprob_change_forbidden_vs_base": (nf / len(base)) ** 0.5,
        "positions": len(base),
    }


def vocab_size(base_dir: Path) -> int:
    from ptbench.integrity.fingerprint import read_config

    cfg = read_config(base_dir)
    v = cfg.get("vocab_size") or (cfg.get("text_config") or {}).get("vocab_size")
    if not isinstance(v, int):
        raise Unchecked(f"functional fingerprint: {base_dir}/config.json has no vocab_size")
    return v
