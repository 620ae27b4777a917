"""Weights of a checkpoint, read a few rows at a time (safetensors slices, or an mmapped
PyTorch file): multi-GB models are compared without loading them whole.

Which tensors and rows are read is drawn at random for each check run (the seed is reported),
so an agent that reads this code cannot tell which rows to make look like the base model.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Protocol

from ptbench.integrity.report import Unchecked

_PREFIXES = ("base_model.model.", "module.")
TENSORS = 48
ROWS = 16


class RowSource(Protocol):
    """What distances and projections read: a `Checkpoint`, or one seen in the base's coordinates."""

    def shape(self, name: str) -> tuple[int, ...]: ...

    def rows(self, name: str, rows: list[int]) -> Any: ...


def _canonical(name: str) -> str:
    for p in _PREFIXES:
        name = name.removeprefix(p)
    return name


class Checkpoint:
    """Tensor names, shapes and row slices of one model folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._files: dict[str, tuple[Path, str]] = {}  # canonical name -> (file, stored name)
        self._handles: dict[Path, Any] = {}
        st = sorted(folder.glob("*.safetensors"))
        st = [p for p in st if not p.name.startswith("adapter_")]
        if st:
            from safetensors import safe_open

            for path in st:
                try:
                    h = safe_open(str(path), framework="pt")
                except Exception as exc:  # noqa: BLE001  (a file that cannot be read cannot be compared)
                    raise Unchecked(f"{path}: unreadable safetensors ({type(exc).__name__}: {exc})") from None
                self._handles[path] = h
                for name in h.keys():  # noqa: SIM118  (a safetensors handle, not a dict)
                    self._files[_canonical(name)] = (path, name)
        else:
            bins = sorted(p for p in folder.glob("*.bin") if p.name.startswith("pytorch_model"))
            if not bins:
                what = (
                    "a LoRA adapter only"
                    if (folder / "adapter_config.json").exists()
                    else "no *.safetensors or pytorch_model*.bin"
                )
                raise Unchecked(f"{folder}: {what}; cannot fingerprint its weights")
            import torch

            for path in bins:
                sd = torch.load(str(path), map_location="cpu", mmap=True, weights_only=True)
                self._handles[path] = sd
                for name in sd:
                    self._files[_canonical(name)] = (path, name)

    def names(self) -> set[str]:
        return set(self._files)

    def shape(self, name: str) -> tuple[int, ...]:
        path, stored = self._files[name]
        h = self._handles[path]
        if isinstance(h, dict):
            return tuple(h[stored].shape)
        return tuple(h.get_slice(stored).get_shape())

    def rows(self, name: str, rows: list[int]):
        """The given rows (first dimension) of a tensor as float32; a 1-D tensor whole."""
        import torch

        path, stored = self._files[name]
        h = self._handles[path]
        if isinstance(h, dict):
            t = h[stored]
            return (t if t.dim() <= 1 else t[rows]).to(torch.float32).reshape(-1)
        sl = h.get_slice(stored)
        if len(sl.get_shape()) <= 1:
            return sl[:].to(torch.float32).reshape(-1)
        return torch.cat([sl[r : r + 1].to(torch.float32).reshape(-1) for r in rows])

    def matrix(self, name: str, rows: list[int] | None = None):
        """A tensor (or the given rows of it) as float32, in its own shape."""
        import torch

        path, stored = self._files[name]
        h = self._handles[path]
        if isinstance(h, dict):
            t = h[stored]
            t = t if rows is None or t.dim() <= 1 else t[rows]
        else:
            sl = h.get_slice(stored)
            t = sl[:] if rows is None or len(sl.get_shape()) <= 1 else torch.stack([sl[r] for r in rows])
        return t.to(torch.float32)


def read_config(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise Unchecked(f"{folder}/config.json unreadable ({type(exc).__name__})") from None


def plan_sample(
    final: Checkpoint, others: list[Checkpoint], seed: int
) -> tuple[list[tuple[str, list[int]]], list[str]]:
    """(tensor, rows) to compare, and the names whose shapes disagree beyond added-token rows."""
    rng = random.Random(seed)
    common = final.names()
    for o in others:
        common &= o.names()
    mismatched, usable = [], []
    for name in sorted(common):
        shapes = [final.shape(name)] + [o.shape(name) for o in others]
        other_dims_differ = any(len(s) != len(shapes[0]) or s[1:] != shapes[0][1:] for s in shapes)
        rows_differ = len({s[0] if s else 0 for s in shapes}) > 1
        if other_dims_differ or (rows_differ and not _vocab_rows(name)):
            mismatched.append(name)
        else:
            usable.append((name, min(s[0] if s else 1 for s in shapes)))
    chosen = rng.sample(usable, min(TENSORS, len(usable)))
    plan = [(name, sorted(rng.sample(range(n), min(ROWS, n)))) for name, n in chosen]
    return plan, mismatched


def _vocab_rows(name: str) -> bool:
    """Embedding and output matrices may grow by added tokens."""
    return any(k in name for k in ("embed", "lm_head", "wte", "output.weight"))


def distances(final: RowSource, other: RowSource, plan: list[tuple[str, list[int]]]) -> dict[str, Any]:
    """Relative L2 distance ||final - other|| / ||other|| and cosine similarity over the sampled rows."""
    import torch

    diff2 = ref2 = fin2 = dot = 0.0
    per_tensor_closer = []
    for name, rows in plan:
        f, o = final.rows(name, rows), other.rows(name, rows)
        d = float(torch.sum((f - o) ** 2))
        diff2 += d
        ref2 += float(torch.sum(o * o))
        fin2 += float(torch.sum(f * f))
        dot += float(torch.sum(f * o))
        per_tensor_closer.append(d)
    rel = (diff2**0.5) / (ref2**0.5) if ref2 > 0 else float("inf")
    cos = dot / ((fin2 * ref2) ** 0.5) if fin2 > 0 and ref2 > 0 else 0.0
    return {"l2": diff2**0.5, "relative_l2": rel, "cosine": cos, "_per_tensor": per_tensor_closer}


def projection(
    final: RowSource, base: RowSource, other: RowSource, plan: list[tuple[str, list[int]]]
) -> dict[str, Any]:
    """How much of other's change from the base final's change carries, over the sampled rows:
    alpha = <final - base, other - base> / |other - base|^2 (1: all of it, as in a copy; 0.45: a merge
    of 0.45 other + 0.55 base; ~0: an independent fine-tune) and the cosine of the two changes,
    overall, over the layers' projection matrices only (`matrices_*`: norms and embeddings, which any
    two fine-tunes of one base tend to move alike, left out) and per tensor. `final` and `other` are
    read in the base's coordinates (`Aligned`)."""
    import torch

    tot = [0.0, 0.0, 0.0]  # <dx, df>, |df|^2, |dx|^2: all tensors
    mat = [0.0, 0.0, 0.0]  # the same over 2-D tensors other than the embedding and output matrices
    per: list[tuple[str, float, float]] = []
    for name, rows in plan:
        b = base.rows(name, rows)
        dx, df = final.rows(name, rows) - b, other.rows(name, rows) - b
        t = (float(torch.sum(dx * df)), float(torch.sum(df * df)), float(torch.sum(dx * dx)))
        tot = [a + v for a, v in zip(tot, t, strict=True)]
        if len(base.shape(name)) == 2 and not _vocab_rows(name):
            mat = [a + v for a, v in zip(mat, t, strict=True)]
        if t[1] > 0:
            per.append((name, t[0] / t[1], t[0] / ((t[1] * t[2]) ** 0.5) if t[2] > 0 else 0.0))
    per.sort(key=lambda x: -x[1])

    def ratio(dot: float, nf: float, nx: float) -> tuple[float, float]:
        if nf <= 0:
            return float("nan"), float("nan")
        return dot / nf, (dot / ((nf * nx) ** 0.5) if nx > 0 else 0.0)

    alpha, cos = ratio(*tot)
    m_alpha, m_cos = ratio(*mat)
    return {
        "alpha": alpha,
        "cosine": cos,
        "matrices_alpha": m_alpha,
        "matrices_cosine": m_cos,
        "per_tensor": [{"tensor": n, "alpha": round(a, 4), "cosine": round(c, 4)} for n, a, c in per],
    }
