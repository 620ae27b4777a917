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

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ptbench.bootcamp.config import BootcampConfig, load_bootcamp
from ptbench.core.errors import UserError


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
    try:
        suite = Suite.model_validate(yaml.safe_load(path.read_text()))
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UserError(f"{path}: {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}") from None
    return [_scaled(load_bootcamp(path.parent / e.config), e.weight) for e in suite.bootcamps]
