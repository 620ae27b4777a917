"""Weights of a checkpoint, read a few rows at a time (safetensors slices, or an mmapped
PyTorch file): multi-GB models are compared without loading them whole.

Which tensors and rows are read is drawn at random for each check run (the seed is reported),
so an agent that reads this code cannot tell which rows to make look like the base model.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from ptbench.integrity.report import Unchecked

_PREFIXES = ("base_model.model.", "module.")
TENSORS = 48
ROWS = 16


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
                h = safe_open(str(path), framework="pt")
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


def distances(final: Checkpoint, other: Checkpoint, plan: list[tuple[str, list[int]]]) -> dict[str, Any]:
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
