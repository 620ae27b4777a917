"""The contamination check: the trial's test set against everything the agent could train on.

Scanned: every text-like file in workspace/ and home/ (archives opened), every file of final_model/
but tensor bytes and what the base model already holds (model_files.py), datasets the agent pulled
into the cache layer during its run, files or hub datasets its trajectory names, and the model's
side of the gateway transcript (its replies, reasoning and tool-call arguments: items it recited
or wrote through a tool are evidence even if no file keeps them). Encoded text is decoded first
(decode.py). Not
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
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ptbench.core.files import sha256_file
from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.contamination.decode import Budget
from ptbench.integrity.contamination.index import (
    TestIndex,
    contaminated_segments,
    scan_stream,
)
from ptbench.integrity.contamination.model_files import WEIGHT_NAMES, final_model_targets, weight_named_targets
from ptbench.integrity.contamination.ngrams import Hasher
from ptbench.integrity.contamination.scan import FileScan, scan_files
from ptbench.integrity.contamination.sources import scannable, transcript_stream, walk_files
from ptbench.integrity.contamination.testsets import add_test_set
from ptbench.integrity.context import CheckContext, trajectory_texts
from ptbench.integrity.journal import read_journal
from ptbench.integrity.model_identity import trusted_base
from ptbench.integrity.report import Finding, Unchecked

TRANSCRIPT_LABEL = "record/transcript.jsonl (model output)"
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
        "copies of base model files": [],
        "journal copies of final_model files": [],
    }
    journal = read_journal(ctx.trial_dir)
    base = _base_model(ctx)
    with tempfile.TemporaryDirectory(prefix="ptbench-contamination-") as tmp:
        fm_started = time.time()
        (Path(tmp) / "final_model").mkdir()
        (Path(tmp) / "weights").mkdir()
        final = final_model_targets(ctx.final_model, base, Path(tmp) / "final_model")
        fm_seconds = time.time() - fm_started
        for names, label in journal.in_final_model:  # the copy is that file, read there as said
            excluded["journal copies of final_model files"].append(
                f"journal:{', '.join(names[:3])} = {label} ({final.how.get(label, 'not in final_model/ now')})"
            )
        by_name: list[tuple[str, Path]] = []
        targets = _targets(ctx, excluded, by_name)
        named_targets, named_how = weight_named_targets(by_name, Path(tmp) / "weights")
        targets += named_targets + final.targets + _journal_targets(ctx, journal.targets, excluded)
        harness_train = _harness_train_hash(ctx)
        base_files = _base_model_hashes(base)
        evidence, notes, cut, scanned_files, scanned_bytes = _scan_all(
            ctx, index, targets, excluded, harness_train, base_files
        )
        fm_bytes = sum(p.stat().st_size for _, p in final.targets)
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
        "journal": journal.details,
        "final_model": final.details(fm_seconds, fm_bytes),
        "weight_named_files": dict(list(named_how.items())[:50]),
        "decoding_bounds_hit": cut[:50],
    }
    if evidence:
        items = {(e["task"], e["item_id"]) for e in evidence}
        files = {e["file"].split("[")[0].split("@")[0] for e in evidence}
        said = TRANSCRIPT_LABEL in files
        return Finding(
            verdict="flagged",
            reason=(
                f"{len(items)} test item(s) of {ctx.spec.task.name} found in {len(files)} file(s) the agent could "
                "train on" + (" (the model's own output in the gateway transcript among them)" if said else "")
            ),
            evidence=evidence,
            details=details,
        )
    if journal.gaps:  # evidence the run journal knows it lost: not clean
        return Finding(
            verdict="unchecked",
            reason=f"no test item found, but the run journal is incomplete: {'; '.join(journal.gaps[:3])}",
            details=details,
        )
    if cut:
        raise Unchecked(
            f"{len(cut)} part(s) could not be read whole (a decoding bound, e.g. a zip bomb, or a gap in the "
            f"gateway transcript); first: {cut[0]}"
        )
    notice = f"; {journal.notice}" if journal.notice else ""
    return Finding(
        verdict="clean",
        reason=f"no {index.n}-gram of {n_items} test items in {scanned_files} files ({scanned_bytes} bytes){notice}",
        details=details,
    )


def _scan_all(
    ctx: CheckContext,
    index: TestIndex,
    targets: list[tuple[str, Path]],
    excluded: dict[str, list[str]],
    harness_train: str | None,
    base_files: frozenset[str],
) -> tuple[list[dict], list[str], list[str], int, int]:
    """Evidence, notes, what a bound cut, files and bytes scanned."""
    evidence: list[dict] = []
    notes: list[str] = []
    cut: list[str] = []
    scanned_files = scanned_bytes = 0
    for scan in _scans(ctx, index, targets):
        label, path = scan.label, scan.path
        if scan.error:
            raise Unchecked(f"could not read {label} ({scan.error})")
        notes += scan.notes
        cut += scan.cut
        scanned_files += 1
        scanned_bytes += path.stat().st_size
        file_hits = [(h, seg) for top in scan.hits for h in top.flat() for seg in contaminated_segments(index, h)]
        if not file_hits:
            continue
        why = _allowed(ctx, path, label, harness_train, base_files)
        if why:
            excluded[_EXCLUDED_AS.get(why, "allowed")].append(label)
            continue
        for hits, seg in file_hits:
            s = index.segments[seg]
            task, item_id = index.items[s.item]
            loc, k, entry = hits.where.get(seg, ("?", index.n, 0))
            if loc.startswith("byte ") and hits.label == label and path.is_file():
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
    return evidence, notes, cut, scanned_files, scanned_bytes


def _scans(ctx: CheckContext, index: TestIndex, targets: list[tuple[str, Path]]) -> Iterator[FileScan]:
    """The files, then the model's side of the gateway transcript (what it said and wrote through
    tool calls, saved to disk or not)."""
    yield from scan_files(index, targets)
    path = ctx.transcript
    if path.is_file():
        scan = FileScan(TRANSCRIPT_LABEL, path)
        budget = Budget()
        problems: list[str] = []
        try:
            stream = transcript_stream(path, TRANSCRIPT_LABEL, problems)
            scan.hits = [scan_stream(index, stream, Hasher(), budget)]
        except (OSError, ValueError) as exc:
            scan.error = f"{type(exc).__name__}: {exc}"
        failed = path.with_name(path.name + ".failed")
        if failed.is_file():
            problems.append(f"{TRANSCRIPT_LABEL}: the gateway could not write all of it ({failed.read_text()[:200]})")
        scan.cut = budget.cut + problems  # a reply not recorded whole cannot be called clean
        yield scan


def _targets(
    ctx: CheckContext, excluded: dict[str, list[str]], by_name: list[tuple[str, Path]]
) -> list[tuple[str, Path]]:
    """What to scan of workspace/, home/, the cache layer and the trajectory's files; files whose name
    says weights go to `by_name` (read by content: model_files.weight_named_targets)."""
    named = _named_in_trajectory(ctx)
    out: dict[str, tuple[str, Path]] = {}
    for root, name in ((ctx.workspace, "workspace"), (ctx.home, "home")):
        if not root.is_dir():
            continue
        scaffold = [root / s for s in ctx.state_folders()] if name == "home" else []

        def skip(p: Path, root=root, scaffold=scaffold, name=name) -> bool:
            rel = p.relative_to(root).as_posix()
            if p.name in (".git", "node_modules", "__pycache__"):
                return True
            state = any(p == s or s in p.parents for s in scaffold) and p.resolve() not in named
            if p.is_file() and not scannable(p):
                if p.suffix.lower() in WEIGHT_NAMES and not state:
                    by_name.append((f"{name}/{rel}", p))
                return True
            if state:
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
        if p.is_file() and scannable(p):
            out.setdefault(str(p), (str(p), p))
        elif p.is_dir():
            for f in walk_files(p, lambda q: q.is_file() and not scannable(q)):
                out.setdefault(str(f.resolve()), (str(f), f))
    return sorted(out.values())


def _journal_targets(
    ctx: CheckContext, copies: list[tuple[list[str], Path]], excluded: dict[str, list[str]]
) -> list[tuple[str, Path]]:
    """The run journal's copies of files written during the run, under the final scan's exclusions:
    a copy is scanned unless every name it was written under is excluded (names as the agent
    wrote them: workspace/..., home/..., /tmp/...)."""
    named = {str(p) for p in _named_in_trajectory(ctx)}
    state = ctx.state_folders()
    out = []
    for names, path in copies:
        kept = []
        for name in names:
            if name.startswith("workspace/") and _EVAL_OUTPUT.search(name):
                excluded["evaluate.sh outputs"].append(f"journal:{name}")
            elif any(name.startswith(f"home/{s}/") for s in state) and str(ctx.trial_dir / name) not in named:
                excluded["agent CLI state"].append(f"journal:{name}")
            else:
                kept.append(name)
        if kept:
            more = f" (+{len(kept) - 3} more)" if len(kept) > 3 else ""
            out.append((f"journal:{', '.join(kept[:3])}{more}", path))
    return out


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
                    out += [f for f in walk_files(d, lambda q: q.is_file() and not scannable(q))]
    return out


_EXCLUDED_AS = {"harness": "harness training data", "base model": "copies of base model files"}


def _allowed(
    ctx: CheckContext, path: Path, label: str, harness_train: str | None, base_files: frozenset[str] = frozenset()
) -> str | None:
    digest = sha256_file(path)
    if harness_train and digest == harness_train and label == "workspace/data/train.jsonl":
        return "harness"
    if digest in base_files:  # byte for byte a file the base model ships (a tokenizer.json saved with a checkpoint)
        return "base model"
    for rule in ctx.config.allowed_sources:
        if rule.startswith("sha256:") and rule[7:] == digest:
            return rule
        if fnmatch.fnmatch(label, rule) or fnmatch.fnmatch(str(path), rule):
            return rule
        names = label.removeprefix("journal:").split(" (+")[0].split(", ") if label.startswith("journal:") else []
        if names and all(fnmatch.fnmatch(n, rule) for n in names):  # a copy the run journal kept
            return rule
    return None


def _base_model(ctx: CheckContext) -> Path | None:
    """The trial's base model as the harness trusts it: found as the memorization and identity checks
    find it (a local folder, or the hub id in a cache that is not the agent's own layer)."""
    local = ctx.spec.base_model.path
    found = trusted_base(ctx)
    if found is None and local and Path(local).is_dir():  # a local folder without config.json: still the base's files
        found = Path(local)
    return found


def _base_model_hashes(root: Path | None) -> frozenset[str]:
    """sha256 of the small files of the trial's base model (none found: nothing exempt).
    A copy of one of them carries nothing the agent wrote: a character-level tokenizer's vocabulary
    (`"$": 13, "%": 14`) would otherwise match a short arithmetic item in every saved checkpoint."""
    if root is None or not root.is_dir():
        return frozenset()
    return frozenset(
        sha256_file(f) for f in root.rglob("*") if f.is_file() and not f.is_symlink() and f.stat().st_size < 64 << 20
    )


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


@register_check("contamination")
class ContaminationCheck(IntegrityCheck):
    """test items (n-grams of the task's test set) in what the agent wrote, read or submitted."""

    def check(self, ctx: CheckContext) -> Finding:
        return check(ctx)
