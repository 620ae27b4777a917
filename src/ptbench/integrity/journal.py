"""The run journal on disk, and what the contamination check reads of it.

The runner (runner/journal.py) keeps, outside the sandbox, a copy of every file a process of the
trial closes after writing, so a file the agent deletes, renames or overwrites later is still
evidence. Layout, in the trial directory (never bound into the sandbox):

  journal/objects/<sha256>   one copy per distinct content
  journal/records.jsonl      one line per capture: kept, skipped (weights, cap) or missed
  journal/summary.json       per run of the agent: what was watched, what the journal cannot see,
                             counts, and every reason it may be incomplete (`gaps`)

`read_journal` turns it into files to scan (skipping copies of files that are still in place,
unchanged, where the final scan reads them anyway, and naming copies equal to a file of the
submitted final_model/, which the check reads there) and into `gaps`: evidence the journal knows it
could not keep. A check with gaps and no finding is `unchecked`, never `clean`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptbench.core.files import sha256_file
from ptbench.launch.solve_launch import SANDBOX_SHM, SANDBOX_TMP
from ptbench.sandbox.request import sandbox_facts

JOURNAL = "journal"
OBJECTS, RECORDS, SUMMARY = "objects", "records.jsonl", "summary.json"
# Where each writable place of the sandbox lives in the trial directory, and how evidence names it.
HF_UPPER = "hf-layer/upper"  # SANDBOX_TMP and SANDBOX_SHM: launch/solve_launch.py, which makes them
LABELS = {SANDBOX_TMP: "/tmp", SANDBOX_SHM: "/dev/shm", HF_UPPER: "hf-cache"}
# What the final scan reads in place: a copy of a file still there, unchanged, is not scanned twice.
FINAL_SCANNED = ("workspace/", "home/")

CANNOT_SEE_ALWAYS = [
    "data a process keeps only in memory, in an unnamed file (memfd_create, O_TMPFILE) or in a file it "
    "unlinked while still writing to it",
    "model weights (safetensors, GGUF, torch and numpy tensors, HDF5) of 1 MiB or more: kept out by content "
    "type; the model is judged by the memorization and identity checks",
    "what the agent sends over the network (the gateway transcript covers model calls)",
    "a file (or a version of one) that exists for less than the journal's reaction time — removed or rewritten "
    "within about a millisecond of being written; such a file is no better a hiding place than memory, and "
    "each one is counted in missed_short_lived",
    "the login files the harness copies into HOME for login-credential agents (never copied: they hold credentials)",
]


_TORCH_LEGACY = bytes.fromhex("800a8a0a6cfc9c46f9206aa8501970")[1:]


def weight_kind(head: bytes) -> str | None:
    """The tensor format a file's first bytes announce, if any (a name proves nothing)."""
    if head.startswith(b"GGUF"):
        return "gguf"
    if len(head) >= 9 and head[8:9] == b"{" and 2 <= int.from_bytes(head[:8], "little") < 1 << 30:
        return "safetensors"
    if head.startswith(b"\x93NUMPY"):
        return "numpy"
    if head.startswith(b"\x89HDF\r\n\x1a\n"):
        return "hdf5"
    if head.startswith(b"PK\x03\x04") and len(head) > 30:
        n = int.from_bytes(head[26:28], "little")
        name = head[30 : 30 + n]
        if name.endswith((b"/data.pkl", b"/.format_version", b"/byteorder", b"/version")):
            return "torch"
    if head[2:].startswith(_TORCH_LEGACY[1:12]):
        return "torch"
    return None


def label_of(trial_dir: Path, path: Path) -> str:
    """How evidence names a file the agent wrote: its path as the agent saw it where that differs."""
    try:
        rel = path.relative_to(trial_dir).as_posix()
    except ValueError:
        return str(path)
    for prefix, shown in LABELS.items():
        if rel == prefix or rel.startswith(prefix + "/"):
            return shown + rel[len(prefix) :]
    return rel


@dataclass
class JournalView:
    targets: list[tuple[list[str], Path]] = field(default_factory=list)  # (names written under, copy) to scan
    gaps: list[str] = field(default_factory=list)  # why the journal may lack evidence
    details: dict[str, Any] = field(default_factory=dict)
    notice: str = ""  # said in the check's reason (what the journal could not see)
    # (names written under, final_model/<path>): copies with the bytes of a file of the submitted model
    in_final_model: list[tuple[list[str], str]] = field(default_factory=list)


def read_journal(trial_dir: Path) -> JournalView:
    view = JournalView()
    root = trial_dir / JOURNAL
    expected = _launch_journal(trial_dir)
    if not root.is_dir():
        if expected:
            view.gaps.append("the run journal is missing, though the agent ran with one")
        view.details = {"state": "absent" if not expected else "missing"}
        view.notice = "" if expected else "no run journal (the agent never ran with one)"
        return view
    try:
        summary = json.loads((root / SUMMARY).read_text())
        runs = list(summary["runs"])
    except (OSError, ValueError, KeyError, TypeError):
        view.gaps.append("the run journal has no valid summary (the runner stopped before closing it)")
        runs = []
    records = _records(root / RECORDS, view.gaps)
    by_sha: dict[str, list[str]] = {}
    skipped: list[dict[str, Any]] = []
    missed: list[dict[str, Any]] = []  # not readable: a gap
    raced: list[dict[str, Any]] = []  # lived shorter than the journal's reaction time: counted, said
    for r in records:
        if r.get("kind") == "kept" and r.get("sha256"):
            if not _in_place(trial_dir, r):
                by_sha.setdefault(str(r["sha256"]), []).append(str(r["label"]))
        elif r.get("kind") == "skipped":
            if r.get("why") != "weights" and not _in_place(trial_dir, r):
                skipped.append(r)
        elif r.get("kind") == "missed":
            (raced if r.get("race") else missed).append(r)
    copies = []
    for sha, labels in sorted(by_sha.items(), key=lambda kv: kv[1][0]):
        obj = root / OBJECTS / sha
        if not obj.is_file():
            view.gaps.append(f"the journal's copy of {labels[0]} is gone")
            continue
        copies.append((sha, sorted(set(labels)), obj))
    submitted = _final_model_files(trial_dir, {obj.stat().st_size for _, _, obj in copies})
    for sha, labels, obj in copies:
        if sha in submitted:  # read there (with what the check knows of the base), not twice
            view.in_final_model.append((labels, submitted[sha]))
        else:
            view.targets.append((labels, obj))
    for run in runs:
        view.gaps += [f"run {run.get('run')}: {g}" for g in run.get("gaps") or []]
    # A runner killed during the solve left its run open: what it had copied is in records.jsonl;
    # only files still being written then, and deleted by the agent before it died, may be missing.
    unclosed = [r.get("run") for r in runs if r.get("ended") is None]
    if skipped:
        names = ", ".join(f"{r['label']} ({r.get('size', '?')} bytes, {r.get('why')})" for r in skipped[:5])
        view.gaps.append(f"{len(skipped)} written file(s) were not kept and are gone or changed since: {names}")
    if missed:
        names = ", ".join(f"{r['label']} ({r.get('why')})" for r in missed[:5])
        view.gaps.append(f"{len(missed)} written file version(s) the journal could not read: {names}")
    if raced:
        view.notice = f"the run journal missed {len(raced)} file version(s) that lived shorter than its reaction time"
    cannot = sorted({c for run in runs for c in run.get("cannot_see") or []})
    sandboxes = sorted({str(run.get("sandbox")) for run in runs})
    view.details = {
        "state": "read",
        "runs": len(runs),
        "sandbox": sandboxes,
        "watched": sorted({w for run in runs for w in run.get("watched") or []}),
        "cannot_see": cannot,
        "copies_scanned": len(view.targets),
        "copies_of_final_model_files": [f"{', '.join(n[:3])} = {f}" for n, f in view.in_final_model[:50]],
        "records": len(records),
        "bytes_kept": sum(int(run.get("bytes_kept", 0)) for run in runs),
        "skipped_weights": sum(1 for r in records if r.get("kind") == "skipped" and r.get("why") == "weights"),
        "skipped_cap": sum(1 for r in records if r.get("kind") == "skipped" and r.get("why") == "cap"),
        "missed": len(missed),
        "missed_short_lived": len(raced),
        "missed_short_lived_names": [f"{r.get('label')} ({r.get('why')})" for r in raced[:20]],
        "gaps": view.gaps[:20],
        "runs_not_closed": unclosed,
    }
    if unisolated := [s for s in sandboxes if not sandbox_facts(s).isolates]:
        none = f"sandbox {unisolated[0]}: the run journal saw only workspace/ and home/ (details.journal.cannot_see)"
        view.notice = f"{none}; {view.notice}" if view.notice else none
    return view


def _records(path: Path, gaps: list[str]) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for i, line in enumerate(lines):
        try:
            rec = json.loads(line)
        except ValueError:
            if i < len(lines) - 1:  # only the last line may be cut short (a runner killed mid-write)
                gaps.append(f"journal records line {i + 1} is unreadable")
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _in_place(trial_dir: Path, rec: dict[str, Any]) -> bool:
    """Whether the file is still where it was written, unchanged (same inode, size, mtime), and the
    final scan reads it there."""
    label = str(rec.get("label", ""))
    if not label.startswith(FINAL_SCANNED):
        return False
    try:
        st = os.lstat(trial_dir / label)
    except OSError:
        return False
    return (st.st_ino, st.st_size, st.st_mtime_ns) == (rec.get("ino"), rec.get("size"), rec.get("mtime_ns"))


def _final_model_files(trial_dir: Path, sizes: set[int]) -> dict[str, str]:
    """sha256 -> final_model/<path> of the collected final_model/'s files whose size is one of `sizes`
    (the journal's copies: only those can be equal). A copy with the bytes of a file of the submitted
    model is that file, which the contamination check reads in final_model/ (model_files.py)."""
    out: dict[str, str] = {}
    root = trial_dir / "final_model"
    if not sizes or not root.is_dir() or root.is_symlink():
        return out
    for p in sorted(root.rglob("*")):
        try:
            if p.is_symlink() or not p.is_file() or p.stat().st_size not in sizes:
                continue
            out.setdefault(sha256_file(p), f"final_model/{p.relative_to(root).as_posix()}")
        except OSError:
            continue
    return out


def _launch_journal(trial_dir: Path) -> bool:
    try:
        return bool(json.loads((trial_dir / "agent" / "launch.json").read_text()).get("journal"))
    except (OSError, ValueError, AttributeError):
        return False
