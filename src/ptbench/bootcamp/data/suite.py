"""A suite: several bootcamp configs with weights, mixed into one dataset.

```yaml
suite: math-and-sql
bootcamps:
  - {config: arithmetic.yaml, weight: 2}     # paths relative to this file
  - {config: sql_explore.yaml}               # weight 1
```
A weight scales that bootcamp's split sizes (rounded, at least 1 for a non-empty split), so weight 2
puts twice its configured number of cases into the mixture. A plain bootcamp YAML is a suite of one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ptbench.bootcamp.config import BootcampConfig, load_bootcamp
from ptbench.bootcamp.rollout.merge import merge
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_bytes, atomic_write_json


class SuiteEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    config: str
    weight: float = Field(default=1.0, gt=0)


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid")
    suite: str
    bootcamps: list[SuiteEntry] = Field(min_length=1)


def is_suite(path: str | Path) -> bool:
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "bootcamps" in data


def _scaled(cfg: BootcampConfig, weight: float) -> BootcampConfig:
    if weight == 1.0:
        return cfg
    splits = {s: (max(1, round(n * weight)) if n else 0) for s, n in cfg.splits.items()}
    return cfg.model_copy(update={"splits": splits})


def load_configs(path: str | Path) -> list[BootcampConfig]:
    """The bootcamps a YAML names: itself, or a suite's members with their weights applied."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file; pass a bootcamp or suite YAML")
    if not is_suite(path):
        return [load_bootcamp(path)]
    suite = load_suite(path)
    return [_scaled(load_bootcamp(path.parent / e.config), e.weight) for e in suite.bootcamps]


def load_suite(path: str | Path) -> Suite:
    try:
        return Suite.model_validate(yaml.safe_load(Path(path).read_text()))
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UserError(f"{path}: {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}") from None


# ------------------------------------------------------------------------------ suite rollouts

SUITE_MARKER = "suite.json"


def suite_name(path: str | Path) -> str:
    return load_suite(path).suite


def write_members(path: str | Path, out: Path) -> list[tuple[str, Path]]:
    """Each member's effective config (weights applied) as OUT/<name>/bootcamp.yaml, and OUT/suite.json;
    a member rollout is then an ordinary rollout of that file into OUT/<name>."""
    configs = load_configs(path)
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: bootcamp names repeat ({', '.join(names)}); each member needs its own name")
    members = []
    for cfg in configs:
        target = out / cfg.name / "bootcamp.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False).encode())
        members.append((cfg.name, target))
    atomic_write_json(out / SUITE_MARKER, {"suite": suite_name(path), "members": names})
    return members


def is_suite_rollout(out: str | Path) -> bool:
    return (Path(out) / SUITE_MARKER).is_file()


def merge_suite(out_dir: str | Path) -> dict:
    """Merge every member rollout, then one summary (and traces file) over them all: per data source
    and per generator level, with each member's own summary kept."""
    out = Path(out_dir)
    info = json.loads((out / SUITE_MARKER).read_text())
    members = {name: merge(out / name) for name in info["members"]}
    data = b"".join((out / name / "merged" / "traces.jsonl").read_bytes() for name in info["members"])
    (out / "merged").mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out / "merged" / "traces.jsonl", data)
    summary = {
        "suite": info["suite"],
        "episodes": sum(s["episodes"] for s in members.values()),
        "expected": sum(s["expected"] for s in members.values()),
        "missing": sum(s["missing"] for s in members.values()),
        "model": ", ".join(sorted({s["model"] for s in members.values()})),
        "traces_sha256": hashlib.sha256(data).hexdigest(),
        "by_data_source": {k: v for s in members.values() for k, v in s["by_data_source"].items()},
        "by_level": {k: v for s in members.values() for k, v in s["by_level"].items()},
        "members": members,
    }
    atomic_write_json(out / "merged" / "summary.json", summary)
    return summary
