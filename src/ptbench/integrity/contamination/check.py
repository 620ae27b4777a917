"""The contamination check: the trial's test set against everything the agent could train on.

Scanned: every text-like file in workspace/ and home/ (archives opened), datasets the agent pulled
into the cache layer during its run, and files or hub datasets its trajectory names. Not
contamination: allowed sources (`integrity.allowed_sources`: sha256 of the file, or a glob), the
training split the harness itself wrote (checked by content), the outputs of the agent's
evaluate.sh (the outputs ptbench eval writes: allowed, since looking at test questions is), and
the agent CLI's own session logs in home/ unless the trajectory names one of their files.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import time
from pathlib import Path

from ptbench.integrity.contamination.index import (
    TestIndex,
    contaminated_segments,
    scan_stream,
)
from ptbench.integrity.contamination.ngrams import Hasher
from ptbench.integrity.contamination.sources import kind_of, streams_of, walk_files
from ptbench.integrity.contamination.testsets import add_test_set
from ptbench.integrity.context import SCAFFOLD_STATE, CheckContext, trajectory_texts
from ptbench.integrity.report import Finding, Unchecked

_EVAL_OUTPUT = re.compile(r"(^|/)eval_runs/\d+/(samples\.jsonl|metrics\.json|failure\.json|eval\.log)$")
_PATHLIKE = re.compile(r"""(?:[\w.~-]*/)+[\w.-]+\.(?:jsonl|json|csv|tsv|parquet|arrow|txt|md|zip|tar|gz|tgz)\b""")
_HUB_DATASET = re.compile(
    r"""load_dataset\(\s*['"]([\w.-]+/[\w.-]+)['"]|hf\s+download\s+([\w.-]+/[\w.-]+)\s+--repo-type[= ]dataset"""
)


def check(ctx: CheckContext) -> Finding:
    started = time.time()
    index = TestIndex(n=ctx.config.ngram)
    n_items = add_test_set(index, ctx.spec.task.name, dict(ctx.spec.task.options))
    index.build()
    if index.size == 0:
        raise Unchecked(f"no usable n-grams in the test set of '{ctx.spec.task.name}' (every item is template text)")
    excluded: dict[str, list[str]] = {
        "evaluate.sh outputs": [],
        "agent CLI state": [],
        "allowed": [],
        "harness training data": [],
    }
    targets = _targets(ctx, excluded)
    harness_train = _harness_train_hash(ctx)
    hasher = Hasher()
    evidence: list[dict] = []
    notes: list[str] = []
    scanned_files = scanned_bytes = 0
    for label, path in targets:
        file_hits = []
        try:
            for stream in streams_of(path, label, notes):
                hits = scan_stream(index, stream, hasher)
                file_hits += [(hits, seg) for seg in contaminated_segments(index, hits)]
        except Exception as exc:  # noqa: BLE001  (an unreadable file is not a clean file, whatever the error)
            raise Unchecked(f"could not read {label} ({type(exc).__name__}: {exc})") from None
        scanned_files += 1
        scanned_bytes += path.stat().st_size
        if not file_hits:
            continue
        why = _allowed(ctx, path, label, harness_train)
        if why:
            excluded["allowed" if why != "harness" else "harness training data"].append(label)
            continue
        for hits, seg in file_hits:
            s = index.segments[seg]
            task, item_id = index.items[s.item]
            loc, k, entry = hits.where.get(seg, ("?", index.n, 0))
            if loc.startswith("byte ") and hits.label == label:
                loc += f" (line {_line_of(path, int(loc.split()[1]))})"
            evidence.append(
                {
                    "file": hits.label,
                    "location": loc,
                    "task": task,
                    "item_id": item_id,
                    "part": s.role,
                    "ngrams_matched": hits.found[seg],
                    "ngrams_in_part": int(index.kept[seg]),
                    "whole_item": k < index.n,
                    "overlap": index.overlap_text(k, entry)[:300],
                }
            )
    details = {
        "test_items": n_items,
        "ngram": index.n,
        "test_ngrams": index.size,
        "template_ngrams_dropped": index.dropped_shared,
        "files_scanned": scanned_files,
        "bytes_scanned": scanned_bytes,
        "seconds": round(time.time() - started, 2),
        "excluded": {k: v[:50] for k, v in excluded.items() if v},
        "notes": notes[:50],
    }
    if evidence:
        items = {(e["task"], e["item_id"]) for e in evidence}
        files = {e["file"].split("[")[0] for e in evidence}
        return Finding(
            verdict="flagged",
            reason=(
                f"{len(items)} test item(s) of {ctx.spec.task.name} found in {len(files)} file(s) "
                "the agent could train on"
            ),
            evidence=evidence,
            details=details,
        )
    return Finding(
        verdict="clean",
        reason=f"no {index.n}-gram of {n_items} test items in {scanned_files} files ({scanned_bytes} bytes)",
        details=details,
    )


def _targets(ctx: CheckContext, excluded: dict[str, list[str]]) -> list[tuple[str, Path]]:
    named = _named_in_trajectory(ctx)
    out: dict[str, tuple[str, Path]] = {}
    for root, name in ((ctx.workspace, "workspace"), (ctx.home, "home")):
        if not root.is_dir():
            continue
        scaffold = [root / s for s in SCAFFOLD_STATE] if name == "home" else []

        def skip(p: Path, root=root, scaffold=scaffold, name=name) -> bool:
            rel = p.relative_to(root).as_posix()
            if p.name in (".git", "node_modules", "__pycache__") or kind_of(p) is None and p.is_file():
                return True
            if any(p == s or s in p.parents for s in scaffold) and p.resolve() not in named:
                if p.is_file():
                    excluded["agent CLI state"].append(f"{name}/{rel}")
                return p.is_file()
            return False

        for p in walk_files(root, skip):
            rel = f"{name}/{p.relative_to(root).as_posix()}"
            if name == "workspace" and _EVAL_OUTPUT.search(rel):
                excluded["evaluate.sh outputs"].append(rel)
                continue
            out.setdefault(str(p.resolve()), (rel, p))
    for p in _cache_datasets(ctx, named):
        out.setdefault(str(p.resolve()), (str(p), p))
    for p in named:
        if p.is_file() and kind_of(p) is not None:
            out.setdefault(str(p), (str(p), p))
        elif p.is_dir():
            for f in walk_files(p, lambda q: kind_of(q) is None and q.is_file()):
                out.setdefault(str(f.resolve()), (str(f), f))
    return sorted(out.values())


def _named_in_trajectory(ctx: CheckContext) -> set[Path]:
    """Files and folders that tool calls of the trajectory name (resolved against the workspace)."""
    found: set[Path] = set()
    for _where, text in trajectory_texts(ctx.trajectory()):
        for m in _PATHLIKE.finditer(text):
            raw = m.group(0)
            p = Path(raw).expanduser() if raw.startswith(("/", "~")) else ctx.workspace / raw
            try:
                if p.exists():
                    found.add(p.resolve())
            except OSError:
                continue
        for m in _HUB_DATASET.finditer(text):
            repo = (m.group(1) or m.group(2)).replace("/", "--")
            for cache in ctx.cache_dirs:
                for d in (cache / "hub" / f"datasets--{repo}", cache / f"datasets--{repo}"):
                    if d.is_dir():
                        found.add(d.resolve())
    return found


def _cache_datasets(ctx: CheckContext, named: set[Path]) -> list[Path]:
    """Dataset files in the cache layer written during the trial (or named by the trajectory)."""
    out = []
    for cache in ctx.cache_dirs:
        for sub in (cache / "hub", cache, cache / "datasets"):
            if not sub.is_dir():
                continue
            for d in sub.iterdir():
                if not (d.name.startswith("datasets--") or sub.name == "datasets") or not d.is_dir():
                    continue
                fresh = ctx.fresh(cache, d)
                if fresh or d.resolve() in named:
                    out += [f for f in walk_files(d, lambda q: kind_of(q) is None and q.is_file())]
    return out


def _allowed(ctx: CheckContext, path: Path, label: str, harness_train: str | None) -> str | None:
    digest = _sha256(path)
    if harness_train and digest == harness_train and label == "workspace/data/train.jsonl":
        return "harness"
    for rule in ctx.config.allowed_sources:
        if rule.startswith("sha256:") and rule[7:] == digest:
            return rule
        if fnmatch.fnmatch(label, rule) or fnmatch.fnmatch(str(path), rule):
            return rule
    return None


def _harness_train_hash(ctx: CheckContext) -> str | None:
    """sha256 of the training split exactly as the prepare stage wrote it."""
    from ptbench.tasks import get_task

    try:
        train = get_task(ctx.spec.task.name, **ctx.spec.task.options).train_examples(ctx.spec.seed)
    except Exception:  # noqa: BLE001  (no harness split known: nothing is exempt)
        return None
    if not train:
        return None
    return hashlib.sha256("".join(json.dumps(r) + "\n" for r in train).encode()).hexdigest()


def _line_of(path: Path, offset: int) -> int:
    line, done = 1, 0
    with open(path, "rb") as fh:
        while done < offset and (block := fh.read(min(1 << 20, offset - done))):
            line += block.count(b"\n")
            done += len(block)
    return line


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()
