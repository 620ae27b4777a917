"""Undo function-preserving reparametrizations before weights are compared row by row.

A transformer computes the same function after (1) a permutation of the residual stream's hidden
units (embedding columns, norm weights, every projection's input columns and output rows), (2) a
permutation of each layer's MLP units (gate/up rows with down columns), (3) a per-unit rescaling of
a SwiGLU pair (up row * c, down column / c) and (4) a permutation of attention heads (key/value
groups with their query heads, query heads within a group; o_proj columns follow). An agent can
submit a forbidden model so disguised: no sampled row of it lines up with the forbidden model's.

`align(model, base)` finds, for every unit of the base, the unit of `model` that plays its role:
hidden units by their embedding columns, MLP units by their gate rows (the one vector of a SwiGLU
unit no rescaling can touch), heads by their key/value and query blocks; then each pair's scale
from its up row and down column. `Aligned` reads `model` in the base's coordinates, so an honest
fine-tune (nothing moved: the identity is found) and a disguised copy are measured alike.

Not undone (documented in docs/integrity.md): rotations inside a head (v/o mixing, RoPE-plane
rotations), rotations of the residual stream with folded norms, per-hidden-unit sign flips. The
functional fingerprint (`functional.py`) sees those, as long as the function itself is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ptbench.integrity.fingerprint import Checkpoint

_LAYER = re.compile(r"^(?P<pre>.*layers\.(?P<i>\d+)\.)(?P<rest>.+)$")
_PROJECT_ABOVE = 512  # dims above which candidate vectors are compared in a random projection
_KEEP_OWN = 0.1  # a unit whose own cosine is within this of its best match's is not moved
_IDENTITY_COS = 0.9  # a layer whose every unit still matches itself this well is taken as not permuted


@dataclass
class Alignment:
    """Indices into the model for each base index (`hidden[j]`: the model's hidden unit playing base unit j)."""

    hidden: Any = None  # LongTensor [h] or None (identity)
    mlp: dict[str, Any] = field(default_factory=dict)  # layer prefix -> LongTensor [I]
    scale: dict[str, Any] = field(default_factory=dict)  # layer prefix -> FloatTensor [I] (up row = c * base's)
    q_heads: dict[str, Any] = field(default_factory=dict)  # layer prefix -> LongTensor [n_heads]
    kv_heads: dict[str, Any] = field(default_factory=dict)  # layer prefix -> LongTensor [n_kv]
    head_dim: int = 0
    stats: dict[str, Any] = field(default_factory=dict)

    def moved(self) -> dict[str, Any]:
        """How much of the model had to be moved to line up with the base (all zero for a fine-tune)."""
        import torch

        def off(perms: list[Any]) -> tuple[int, int]:
            n = sum(len(p) for p in perms)
            return int(sum(int((p != torch.arange(len(p))).sum()) for p in perms)), n

        out: dict[str, Any] = {}
        for what, perms in (
            ("hidden_units", [self.hidden] if self.hidden is not None else []),
            ("mlp_units", list(self.mlp.values())),
            ("query_heads", list(self.q_heads.values())),
            ("kv_heads", list(self.kv_heads.values())),
        ):
            k, n = off(perms)
            out[what] = f"{k}/{n}"
        scales = [s for s in self.scale.values()]
        if scales:
            s = torch.cat(scales).abs().log()
            out["mlp_scale_log_abs_max"] = round(float(s.abs().max()), 4)
            out["mlp_units_rescaled"] = f"{int((s.abs() > 0.05).sum())}/{len(s)}"
        return {**out, **self.stats}


def align(model: Checkpoint, base: Checkpoint, config: dict[str, Any], seed: int) -> Alignment:
    """The model's units for each of the base's (see the module docstring)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    al = Alignment()
    names = model.names() & base.names()
    heads = int(config.get("num_attention_heads") or 0)
    kv = int(config.get("num_key_value_heads") or heads)
    hidden = int(config.get("hidden_size") or 0)
    al.head_dim = int(config.get("head_dim") or (hidden // heads if heads else 0))
    emb = next((n for n in sorted(names) if n.endswith("embed_tokens.weight")), None)
    if emb is not None:
        rows = min(model.shape(emb)[0], base.shape(emb)[0])
        pick = torch.randperm(rows, generator=gen)[: min(rows, 8192)].sort().values.tolist()
        mb = model.matrix(emb, pick).T  # hidden units as vectors over sampled tokens
        bb = base.matrix(emb, pick).T
        al.hidden, al.stats["hidden_match_cos_min"] = _match(bb, mb, gen)
    layers = sorted({m["pre"] for n in names if (m := _LAYER.match(n))}, key=lambda p: (len(p), p))
    cos_mlp, cos_heads = [], []
    for pre in layers:
        gate, up, down = (pre + f"mlp.{p}_proj.weight" for p in ("gate", "up", "down"))
        if {gate, up, down} <= names:
            perm, c = _match(_cols(base, gate, None), _cols(model, gate, al.hidden), gen)
            cos_mlp.append(c)
            al.mlp[pre] = perm
            al.scale[pre] = _scales(model, base, up, down, perm, al.hidden)
        k, v, q = (pre + f"self_attn.{p}_proj.weight" for p in ("k", "v", "q"))
        if heads and al.head_dim and {k, v, q} <= names:
            d, g = al.head_dim, heads // kv
            kb = torch.cat([_blocks(base, k, None, d), _blocks(base, v, None, d)], dim=1)
            km = torch.cat([_blocks(model, k, al.hidden, d), _blocks(model, v, al.hidden, d)], dim=1)
            kperm, c1 = _match(kb, km, gen)
            qb, qm = _blocks(base, q, None, d), _blocks(model, q, al.hidden, d)
            qperm = torch.empty(heads, dtype=torch.long)
            cmin = c1
            for j in range(kv):  # query heads follow their key/value group, then may move within it
                src = int(kperm[j])
                within, c2 = _match(qb[j * g : (j + 1) * g], qm[src * g : (src + 1) * g], gen)
                qperm[j * g : (j + 1) * g] = within + src * g
                cmin = min(cmin, c2)
            cos_heads.append(cmin)
            al.kv_heads[pre], al.q_heads[pre] = kperm, qperm
    if cos_mlp:
        al.stats["mlp_match_cos_min"] = round(min(cos_mlp), 4)
    if cos_heads:
        al.stats["head_match_cos_min"] = round(min(cos_heads), 4)
    if al.hidden is not None:
        al.stats["hidden_match_cos_min"] = round(al.stats["hidden_match_cos_min"], 4)
    return al


def _match(base_vecs: Any, model_vecs: Any, gen: Any) -> tuple[Any, float]:
    """For each base vector, the index of the model vector most like it (cosine), and the worst such
    cosine. The identity is kept where every vector still matches itself well (an unpermuted model)."""
    import torch

    b = torch.nn.functional.normalize(base_vecs.float(), dim=1)
    m = torch.nn.functional.normalize(model_vecs.float(), dim=1)
    n = len(b)
    if len(m) == n:
        diag = (b * m).sum(1)
        if float(diag.min()) >= _IDENTITY_COS:
            return torch.arange(n), float(diag.min())
    if b.shape[1] > _PROJECT_ABOVE:  # a random projection keeps cosines to ~1/sqrt(dims): plenty to tell a match
        proj = torch.randn(b.shape[1], _PROJECT_ABOVE, generator=gen) / _PROJECT_ABOVE**0.5
        bp, mp = b @ proj, m @ proj
    else:
        bp, mp = b, m
    best = torch.empty(n, dtype=torch.long)
    for s in range(0, n, 1024):
        best[s : s + 1024] = (bp[s : s + 1024] @ mp.T).argmax(1)
    if len(m) == n:
        # A vector that still matches itself about as well as its best match stays put: an honest
        # fine-tune moves no unit; a permuted model's units match themselves at chance level (~0).
        own, found = (b * m).sum(1), (b * m[best]).sum(1)
        best = torch.where(own >= found - _KEEP_OWN, torch.arange(n), best)
    return best, float((b * m[best]).sum(1).min())


def _cols(ckpt: Checkpoint, name: str, hidden: Any) -> Any:
    """The whole matrix, its input (hidden) columns put in the base's order."""
    t = ckpt.matrix(name)
    return t if hidden is None else t[:, hidden]


def _blocks(ckpt: Checkpoint, name: str, hidden: Any, head_dim: int) -> Any:
    """One flattened vector per head (its head_dim rows)."""
    t = _cols(ckpt, name, hidden)
    return t.reshape(t.shape[0] // head_dim, -1)


def _scales(model: Checkpoint, base: Checkpoint, up: str, down: str, perm: Any, hidden: Any) -> Any:
    """c per base unit, where the model's up row is c times the base's and its down column 1/c times:
    the geometric mean of the two least-squares factors, so neither side's fine-tuning dominates."""
    import torch

    ub, um = base.matrix(up), _cols(model, up, hidden)[perm]
    db, dm = base.matrix(down), model.matrix(down)[:, perm]
    if hidden is not None:
        dm = dm[hidden]
    a = (um * ub).sum(1) / (ub * ub).sum(1).clamp_min(1e-30)
    b = (dm * db).sum(0) / (db * db).sum(0).clamp_min(1e-30)
    ratio = a / torch.where(b == 0, torch.full_like(b, 1e-30), b)
    c = torch.sign(a) * ratio.abs().sqrt()
    return torch.where(torch.isfinite(c) & (c != 0), c, torch.ones_like(c))


class Aligned:
    """A checkpoint read in the base's coordinates (same interface as `Checkpoint` for `distances`)."""

    def __init__(self, ckpt: Checkpoint, al: Alignment) -> None:
        self.ckpt, self.al = ckpt, al

    def names(self) -> set[str]:
        return self.ckpt.names()

    def shape(self, name: str) -> tuple[int, ...]:
        return self.ckpt.shape(name)

    def rows(self, name: str, rows: list[int]) -> Any:
        import torch

        al, m = self.al, _LAYER.match(name)
        pre, rest = (m["pre"], m["rest"]) if m else ("", name)
        shape = self.ckpt.shape(name)
        d = al.head_dim
        row_map = torch.tensor(rows, dtype=torch.long)
        col_map = None
        col_scale = None
        row_scale = None
        hidden_in = al.hidden
        if len(shape) == 1:  # biases and norm weights: read whole
            if rest.startswith("self_attn.q_proj") and pre in al.q_heads:
                return self.ckpt.matrix(name)[_expand(al.q_heads[pre], d)]
            if rest.startswith(("self_attn.k_proj", "self_attn.v_proj")) and pre in al.kv_heads:
                return self.ckpt.matrix(name)[_expand(al.kv_heads[pre], d)]
            if al.hidden is not None and shape[0] == len(al.hidden) and "q_norm" not in rest and "k_norm" not in rest:
                return self.ckpt.matrix(name)[al.hidden]
            return self.ckpt.rows(name, rows)
        if rest.startswith(("mlp.gate_proj", "mlp.up_proj")) and pre in al.mlp:
            row_map = al.mlp[pre][row_map]
            if rest.startswith("mlp.up_proj"):
                row_scale = 1 / al.scale[pre][torch.tensor(rows, dtype=torch.long)]
        elif rest.startswith("mlp.down_proj") and pre in al.mlp:
            row_map = al.hidden[row_map] if al.hidden is not None else row_map
            col_map, col_scale, hidden_in = al.mlp[pre], al.scale[pre], None
        elif rest.startswith("self_attn.q_proj") and pre in al.q_heads:
            row_map = _expand(al.q_heads[pre], d)[row_map]
        elif rest.startswith(("self_attn.k_proj", "self_attn.v_proj")) and pre in al.kv_heads:
            row_map = _expand(al.kv_heads[pre], d)[row_map]
        elif rest.startswith("self_attn.o_proj") and pre in al.q_heads:
            row_map = al.hidden[row_map] if al.hidden is not None else row_map
            col_map, hidden_in = _expand(al.q_heads[pre], d), None
        elif "embed" in name or "lm_head" in name:
            pass  # rows are tokens (same ids: the vocabulary check); columns are hidden units
        elif al.hidden is not None and shape[0] == len(al.hidden):
            row_map, hidden_in = al.hidden[row_map], None  # an unknown writer into the residual stream
        t = self.ckpt.matrix(name, row_map.tolist())
        if hidden_in is not None and t.shape[1] == len(hidden_in):
            t = t[:, hidden_in]
        if col_map is not None:
            t = t[:, col_map]
        if col_scale is not None:
            t = t * col_scale
        if row_scale is not None:
            t = t * row_scale[:, None]
        return t.reshape(-1)


def _expand(heads: Any, head_dim: int) -> Any:
    """Row indices of whole heads."""
    import torch

    return (heads[:, None] * head_dim + torch.arange(head_dim)).reshape(-1)
