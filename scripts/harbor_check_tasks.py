"""Loads exported Harbor task directories with harbor's own loader; fails on unknown keys.

Run with the Harbor venv's interpreter (harbor needs Python >= 3.12):
    .venv-harbor/bin/python scripts/harbor_check_tasks.py OUT
harbor's TaskConfig ignores unknown keys, so each task.toml is also walked against the pydantic
models harbor validates it with: a key that no model field (or alias) knows is an error.
Prints one JSON line per task and exits 1 if any task has a problem.
"""

from __future__ import annotations

import json
import sys
import tomllib
import types
import typing
from pathlib import Path

from harbor.models.task.config import TaskConfig
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_verifier_environment_definition
from pydantic import BaseModel


def _models(annotation) -> list[type[BaseModel]]:
    """The pydantic models an annotation can hold (through Optional, unions, lists, dict values)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out = []
    for arg in typing.get_args(annotation):
        out += _models(arg)
    return out


def _free_form(annotation) -> bool:
    origin = typing.get_origin(annotation)
    if origin is dict or annotation is dict or annotation is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_free_form(a) for a in typing.get_args(annotation))
    return False


def unknown_keys(data, model: type[BaseModel], where: str = "") -> list[str]:
    problems = []
    if not isinstance(data, dict):
        return problems
    fields = model.model_fields
    names = {n: f for n, f in fields.items()} | {f.alias: f for f in fields.values() if f.alias}
    for key, value in data.items():
        f = names.get(key)
        if f is None:
            problems.append(f"{where}{key}: unknown key for harbor's {model.__name__}")
            continue
        if _free_form(f.annotation) and not _models(f.annotation):
            continue
        for sub in _models(f.annotation):
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    problems += unknown_keys(item, sub, f"{where}{key}{f'[{i}]' if isinstance(value, list) else ''}.")
            break
    return problems


def check(task_dir: Path) -> dict:
    report = {"task": task_dir.name, "problems": []}
    try:
        task = Task(task_dir)  # parses task.toml, checks the tests and input paths
        report["name"] = task.name
        report["instruction_chars"] = len(task.instruction)
        verifier = resolve_verifier_environment_definition(task.config, task.paths)
        report["verifier"] = "separate" if verifier else "shared"
        if verifier is not None:
            report["verifier_dir"] = verifier.directory.name
    except Exception as exc:
        report["problems"].append(f"harbor could not load it: {type(exc).__name__}: {exc}")
        return report
    raw = tomllib.loads((task_dir / "task.toml").read_text())
    report["problems"] += unknown_keys(raw, TaskConfig)
    for need in ("environment/Dockerfile", "tests/test.sh", "instruction.md"):
        if not (task_dir / need).is_file():
            report["problems"].append(f"{need} missing")
    return report


def main(root: str) -> int:
    dirs = sorted(p.parent for p in Path(root).glob("*/task.toml"))
    if not dirs:
        print(json.dumps({"error": f"no task directories in {root}"}))
        return 1
    bad = 0
    for d in dirs:
        r = check(d)
        bad += bool(r["problems"])
        print(json.dumps(r))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
