"""The base model's scores, computed once per campaign: every trial of a campaign shares the base
model, the task, the sibling set and the engine, so the memorization check's base pass (an engine
start and a prefill of every item) is the same for all of them.

Where: `<campaign>/.harness/eval-cache/memorization/` (the harness-only evaluation cache, TrialDir.
eval_cache), which is bound into no trial's sandbox. Under `sandbox: none` an agent runs as the
runner's user and could write it, so the cache is neither read nor written there (the base is scored
afresh: slower, never wrong); likewise when a sandbox option binds a path over it.

What: one file per *namespace* (everything that decides a score besides the item: the base model's
files, the task, the engine, its dtype and device, library versions, ptbench's scoring version),
mapping each item's key (sha256 of its exact token ids and prompt length) to the base model's
log-likelihood. An entry is used only if it is a regular file (not a link) owned by this user and
writable by no one else, names exactly this namespace, and its digest over namespace and scores
checks out; otherwise it is moved aside, named in the check's details, and the base is scored
afresh. The digest catches corruption and careless edits, not a forger: a forger who can write the
file can also recompute it. The protection against forgery is where the file lives.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ptbench.core.files import atomic_write_text, sha256_file, untrusted_file
from ptbench.core.locks import file_lock
from ptbench.inference.base import engine_fact
from ptbench.inference.loglik import Scored
from ptbench.sandbox.request import reach_note

FORMAT = 1
SCORING_VERSION = 2  # bump when the log-likelihood computation (inference/loglik.py) changes its numbers
SMALL_FILE = 64 << 20  # files up to this size are hashed whole; larger ones by size, mtime, head and tail
_EDGE = 1 << 20
_HUB_BLOB = re.compile(r"[0-9a-f]{64}")  # a hub cache blob named by its content's sha256 (LFS files)


def cache_dir(spec: Any, eval_cache: Path) -> tuple[Path | None, str]:
    """Where this trial's base scores are cached, or None and why not."""
    root = eval_cache / "memorization"
    why = reach_note(spec.sandbox, spec.sandbox_options, root)
    return (None, f"{why}; the base model was scored afresh") if why else (root, "")


def namespace(
    base: Path, task: str, options: dict[str, Any], engine: str, files: dict[str, str] | None = None
) -> dict[str, Any]:
    """Everything besides the item itself that decides a base score; `files`: `base_identity(base)`
    when the caller has just read it (the check reads it for the ids' key too)."""
    import ptbench

    libs: dict[str, str | None] = {}
    for lib in ("torch", "transformers", *engine_fact(engine, "libs")):
        try:
            from importlib.metadata import version

            libs[lib] = version(lib)
        except Exception:  # noqa: BLE001  (not installed: recorded as such)
            libs[lib] = None
    return {
        "format": FORMAT,
        "scoring_version": SCORING_VERSION,
        "ptbench": ptbench.__version__,
        "base": {"path": str(base.resolve()), "files": files if files is not None else base_identity(base)},
        "task": {"name": task, "options": options},
        "engine": engine,
        "dtype": engine_fact(engine, "cpu_dtype") if _device() == "cpu" else "auto",
        "device": _device(),
        "libs": libs,
    }


def base_identity(base: Path) -> dict[str, str]:
    """Each file of the base model (relative path) and its identity: a hub blob's sha256 name,
    the sha256 of a small file (config, tokenizer), or size, mtime and the sha256 of the first and
    last MiB of a large one (weights: hashing 15 GB per trial would cost more than it saves; the
    base model is read-only to every agent)."""
    out: dict[str, str] = {}
    for path in sorted(base.rglob("*")):
        if not path.is_file():
            continue
        target = path.resolve()
        st = target.stat()
        if path.is_symlink() and target.parent.name == "blobs" and _HUB_BLOB.fullmatch(target.name):
            out[path.relative_to(base).as_posix()] = f"sha256:{target.name}"
        elif st.st_size <= SMALL_FILE:
            out[path.relative_to(base).as_posix()] = f"sha256:{sha256_file(target)}"
        else:
            h = hashlib.sha256()
            with open(target, "rb") as fh:
                h.update(fh.read(_EDGE))
                fh.seek(st.st_size - _EDGE)
                h.update(fh.read(_EDGE))
            out[path.relative_to(base).as_posix()] = f"edges:{st.st_size}:{st.st_mtime_ns}:{h.hexdigest()}"
    return out


def item_key(item: Scored) -> str:
    return hashlib.sha256(json.dumps([item.n_prompt, item.ids]).encode()).hexdigest()[:40]


class BaseScores:
    """The cached base scores of one namespace."""

    def __init__(self, root: Path, ns: dict[str, Any]) -> None:
        self.ns = ns
        self.ns_hash = digest(ns)[:24]
        self.path = root / f"{self.ns_hash}.json"
        self.note = ""  # why an entry found was not used

    def lookup(self, items: list[Scored], score: Callable[[list[Scored]], list[float]]) -> tuple[list[float], int]:
        """Base scores of `items`: cached ones read, missing ones computed with `score` and stored.
        Returns the scores and how many were read from the cache."""
        keys = [item_key(s) for s in items]
        cached = self._read()
        hits = sum(k in cached for k in keys)
        todo = list(dict.fromkeys(k for k in keys if k not in cached))  # each missing item once, in order
        if todo:
            first = {k: i for i, k in reversed(list(enumerate(keys)))}
            new = dict(zip(todo, score([items[first[k]] for k in todo]), strict=True))
            if all(math.isfinite(v) for v in new.values()):  # never cache what the check rejects
                self._merge(new)
            cached = {**cached, **new}
        return [cached[k] for k in keys], hits

    def _read(self) -> dict[str, float]:
        reason = untrusted_file(self.path)
        if reason is None:
            try:
                data = json.loads(self.path.read_text())
                scores = data["scores"]
                if data.get("namespace") != self.ns:
                    reason = "it names another namespace"
                elif data.get("digest") != digest({"namespace": self.ns, "scores": scores}):
                    reason = "its digest does not match its contents"
                elif not all(isinstance(v, float) and math.isfinite(v) for v in scores.values()):
                    reason = "it holds a non-finite or non-float score"
                else:
                    return dict(scores)
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                reason = f"it is unreadable ({type(exc).__name__})"
        if reason and reason != "missing":
            aside = self.path.with_name(f"{self.path.name}.rejected.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}")
            try:
                shutil.move(str(self.path), str(aside))  # kept for inspection, never read again
            except OSError:
                pass
            self.note = f"cache entry {self.path.name} rejected ({reason}; moved to {aside.name})"
        return {}

    def _merge(self, new: dict[str, float]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with file_lock(self.path.with_suffix(".lock")):
            scores = {**self._read(), **new}  # another trial may have added items meanwhile
            body = {"namespace": self.ns, "scores": scores}
            data = {**body, "digest": digest(body), "written_at": time.time()}
            atomic_write_text(self.path, json.dumps(data, sort_keys=True), mode=0o600)


def sibling_seed(root: Path) -> int | None:
    """The campaign's secret for drawing siblings (so every trial compares the same siblings and
    their base scores can be cached): created once, 0600, in the harness-only cache. None (the caller
    draws afresh) when it cannot be made or is not trustworthy."""
    path = root / "sibling-secret"
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        with file_lock(root / "sibling-secret.lock"):
            if untrusted_file(path) == "missing":
                atomic_write_text(path, os.urandom(16).hex(), mode=0o600)
            if untrusted_file(path) is not None:
                return None
            text = path.read_text().strip()
        return int(text, 16) if re.fullmatch(r"[0-9a-f]{32}", text) else None
    except OSError:
        return None


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


_DEVICE: list[str] = []


def _device() -> str:
    """cpu, or cuda:<the first GPU's name> (from nvidia-smi: no CUDA context in this process)."""
    if not _DEVICE:
        name = "cpu"
        if shutil.which("nvidia-smi"):
            run = subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True
            )
            if run.returncode == 0 and run.stdout.strip():
                name = "cuda:" + run.stdout.strip().splitlines()[0]
        _DEVICE.append(name)
    return _DEVICE[0]
