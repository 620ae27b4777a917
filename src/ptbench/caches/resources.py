"""The lists of what goes into the two caches.

- The agent cache: models and datasets the agents may train on. The default list is the reference's
  (`data/ptb_hf_resources.json`: {"models": [id | {id, revision}], "datasets": [{dataset, revision?, ...}]}).
- The evaluation cache: test sets, judge references and instruct models (`data/eval_resources.json`).
  Prefetching into the agent cache never downloads a file the evaluation list claims; `verify` proves it.

Revisions are pinned: an entry without one is resolved on its first download, and the commit is
written to the cache's `ptbench-pins.json`, which later prefetches (and other nodes sharing the
cache) follow instead of the moving branch.
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field
from importlib import resources as package_data
from pathlib import Path
from typing import Any, Literal

from ptbench.core.errors import UserError

Kind = Literal["model", "dataset"]
PINS_FILE = "ptbench-pins.json"


@dataclass(frozen=True)
class Resource:
    kind: Kind
    repo: str
    revision: str | None = None
    patterns: tuple[str, ...] = ()  # eval list: the files it claims ("*" = all)
    role: str = "agent"  # agent | test_set | judge_reference | instruct_model

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.repo}"

    def claims(self, path: str) -> bool:
        return any(fnmatch.fnmatch(path, p) for p in self.patterns)


@dataclass
class EvalList:
    resources: list[Resource] = field(default_factory=list)

    def for_repo(self, kind: str, repo: str) -> list[Resource]:
        return [r for r in self.resources if r.kind == kind and r.repo.lower() == repo.lower()]

    def whole_repo(self, kind: str, repo: str) -> bool:
        return any("*" in r.patterns or r.role == "instruct_model" for r in self.for_repo(kind, repo))

    def ignore_patterns(self, kind: str, repo: str) -> list[str]:
        return [p for r in self.for_repo(kind, repo) for p in r.patterns]


def _read_json(path: str | os.PathLike[str] | None, default: str) -> tuple[Any, str]:
    if path is None:
        text = package_data.files("ptbench.caches").joinpath("data", default).read_text()
        return json.loads(text), f"ptbench:caches/data/{default}"
    p = Path(path)
    try:
        return json.loads(p.read_text()), str(p)
    except OSError as exc:
        raise UserError(
            f"{p}: cannot read the resources list ({exc.strerror}); give a JSON file like ptbench's "
            f"caches/data/{default}"
        ) from None
    except ValueError as exc:
        raise UserError(f"{p}: not valid JSON ({exc}); fix the file") from None


def agent_resources(path: str | os.PathLike[str] | None = None) -> list[Resource]:
    data, where = _read_json(path, "ptb_hf_resources.json")
    if not isinstance(data, dict) or not ({"models", "datasets"} & set(data)):
        raise UserError(f"{where}: expected an object with 'models' and/or 'datasets' lists")
    out: list[Resource] = []
    for i, m in enumerate(data.get("models", [])):
        entry = {"id": m} if isinstance(m, str) else m
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise UserError(f"{where}: models[{i}]: expected a hub id or {{id, revision}}")
        out.append(Resource("model", entry["id"], entry.get("revision")))
    for i, d in enumerate(data.get("datasets", [])):
        entry = {"dataset": d} if isinstance(d, str) else d
        if not isinstance(entry, dict) or not isinstance(entry.get("dataset"), str):
            raise UserError(f"{where}: datasets[{i}]: expected a hub id or {{dataset, revision}}")
        out.append(Resource("dataset", entry["dataset"], entry.get("revision")))
    return out


def eval_resources(path: str | os.PathLike[str] | None = None) -> EvalList:
    data, where = _read_json(path, "eval_resources.json")
    out: list[Resource] = []
    sections = (
        ("test_sets", "dataset", "test_set"),
        ("judge_references", "dataset", "judge_reference"),
        ("instruct_models", "model", "instruct_model"),
    )
    for key, kind, role in sections:
        for i, e in enumerate(data.get(key, []) if isinstance(data, dict) else []):
            if not isinstance(e, dict) or not isinstance(e.get("repo"), str):
                raise UserError(f"{where}: {key}[{i}]: expected {{repo, revision?, patterns?}}")
            patterns = tuple(e.get("patterns", ["*"]))
            out.append(Resource(e.get("kind", kind), e["repo"], e.get("revision"), patterns, role))
    if not out:
        raise UserError(f"{where}: no test_sets, judge_references or instruct_models listed")
    return EvalList(out)


def load_pins(cache_home: Path) -> dict[str, str]:
    try:
        data = json.loads((cache_home / PINS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
