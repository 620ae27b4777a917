"""`ptbench cache verify`: prove that the agent cache holds nothing only the evaluation may hold.

Three independent checks over every regular file under the agent cache root (not only the hub's
layout: a copy the agent put anywhere in the cache counts):
1. by repository id: no hub folder (models--org--name / datasets--org--name) of an instruct model or
   of a whole-repository test set / judge reference; a partly claimed repository (gsm8k) must have
   no claimed file in any snapshot;
2. by content: no file whose sha256 equals a test-set or judge-reference file of the evaluation cache
   (only files of an equal size are hashed, so a multi-GB model is not read for a 1 MB test file);
3. by weights: no safetensors file (found by its header, whatever its name: hub blobs have none)
   whose fingerprint equals one of an instruct model's in the evaluation cache. The fingerprint is
   the sha256 of the header and of 16 slices of 64 KiB spread over the tensor data, so a base model
   with the same architecture (same header) does not match, and a renamed copy does.

An evaluation resource missing from the evaluation cache cannot be compared by content: it is
reported as unchecked, and the proof is incomplete (exit 1) unless `allow_unchecked`.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

from ptbench.caches.resources import EvalList, Resource
from ptbench.core.files import sha256_file

SLICES, SLICE_BYTES = 16, 64 * 1024


@dataclass
class Finding:
    check: str  # repo_id | test_set_file | instruct_weights | unchecked
    path: str
    detail: str


@dataclass
class Report:
    violations: list[Finding] = field(default_factory=list)
    unchecked: list[Finding] = field(default_factory=list)
    files_scanned: int = 0
    files_hashed: int = 0

    def ok(self, allow_unchecked: bool = False) -> bool:
        return not self.violations and (allow_unchecked or not self.unchecked)


def repo_folder(kind: str, repo: str) -> str:
    return f"{kind}s--{repo.replace('/', '--')}"


def safetensors_fingerprint(path: Path) -> str | None:
    """None when the file is not a safetensors file."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                return None
            (n,) = struct.unpack("<Q", head)
            if n < 2 or 8 + n > size or n > 100 * 2**20:
                return None
            header = f.read(n)
            if not header.lstrip().startswith(b"{"):
                return None
            json.loads(header)
            h = hashlib.sha256(header)
            data_start, data_len = 8 + n, size - 8 - n
            for i in range(SLICES):
                f.seek(data_start + (data_len * i) // SLICES)
                h.update(f.read(SLICE_BYTES))
            return h.hexdigest()
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _files(root: Path):
    for dirpath, _dirs, names in os.walk(
        root
    ):  # links are not followed: snapshots link into blobs/, scanned themselves
        for name in names:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                yield p


def _snapshot_files(hub: Path, res: Resource) -> list[tuple[str, Path]]:
    """(path in repo, resolved file) of every snapshot of a repository in a hub cache."""
    out = []
    for snap in sorted((hub / repo_folder(res.kind, res.repo) / "snapshots").glob("*")):
        for p in snap.rglob("*"):
            if p.is_file():
                out.append((p.relative_to(snap).as_posix(), p.resolve()))
    return out


def verify(agent_home: str | os.PathLike[str], eval_home: str | os.PathLike[str], eval_list: EvalList) -> Report:
    agent_home, eval_home = Path(agent_home), Path(eval_home)
    agent_hub, eval_hub = agent_home / "hub", eval_home / "hub"
    report = Report()

    # 1. repository ids
    for res in eval_list.resources:
        folder = agent_hub / repo_folder(res.kind, res.repo)
        if not folder.exists():
            continue
        if eval_list.whole_repo(res.kind, res.repo):
            report.violations.append(Finding("repo_id", str(folder), f"{res.role} {res.repo} is in the agent cache"))
        else:
            for rel, _p in _snapshot_files(agent_hub, res):
                if res.claims(rel):
                    report.violations.append(
                        Finding("repo_id", f"{folder}/…/{rel}", f"{res.role} file {rel} of {res.repo}")
                    )

    # 2 and 3: what the evaluation cache holds, by content
    wanted: dict[int, dict[str, str]] = {}  # size -> sha256 -> what
    fingerprints: dict[str, str] = {}
    for res in eval_list.resources:
        files = [
            (rel, p) for rel, p in _snapshot_files(eval_hub, res) if res.role == "instruct_model" or res.claims(rel)
        ]
        if not files:
            report.unchecked.append(
                Finding(
                    "unchecked",
                    str(eval_hub / repo_folder(res.kind, res.repo)),
                    f"{res.role} {res.repo} is not in the evaluation cache: "
                    "prefetch it with --eval to compare contents",
                )
            )
            continue
        for rel, p in files:
            if res.role == "instruct_model":
                if rel.endswith(".safetensors") and (fp := safetensors_fingerprint(p)):
                    fingerprints[fp] = f"{res.repo}/{rel}"
            elif p.stat().st_size > 0:
                wanted.setdefault(p.stat().st_size, {})[sha256_file(p)] = f"{res.repo}/{rel}"

    for p in _files(agent_home):
        report.files_scanned += 1
        try:
            size = p.stat().st_size
        except OSError:
            continue
        if size in wanted:
            report.files_hashed += 1
            if (what := wanted[size].get(sha256_file(p))) is not None:
                report.violations.append(Finding("test_set_file", str(p), f"same content as {what}"))
        if fingerprints and size > 8 and (fp := safetensors_fingerprint(p)) and fp in fingerprints:
            report.violations.append(Finding("instruct_weights", str(p), f"same weights as {fingerprints[fp]}"))
    return report
