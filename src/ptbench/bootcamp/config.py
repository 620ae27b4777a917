"""The bootcamp YAML file as a pydantic model. Unknown keys are rejected; errors name file and line."""

from __future__ import annotations

import hashlib
import importlib
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ptbench.bootcamp.api import canonical_json
from ptbench.core.errors import UserError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Level(_Strict):
    """One generator configuration; `weight` is its share of every split (normalised)."""

    name: str
    generator: str
    weight: float = Field(default=1.0, gt=0)
    params: dict[str, Any] = Field(default_factory=dict)


class ComponentRef(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class ToolRef(ComponentRef):
    remote: bool = False
    """Run this tool on the shared tool server (`ptbench bootcamp serve-tools`) instead of in the shard."""
    timeout_s: float = Field(default=30.0, gt=0)
    """Per-call limit; a call that takes longer returns an error to the model."""


class Limits(_Strict):
    max_assistant_turns: int = Field(default=8, ge=1)
    max_tool_calls: int = Field(default=16, ge=0)


class Sampling(_Strict):
    temperature: float = 0.0
    max_tokens: int = Field(default=512, ge=1)
    top_p: float | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra top-level request fields, e.g. `{chat_template_kwargs: {enable_thinking: false}}` or `top_k`."""

    @field_validator("extra_body")
    @classmethod
    def _no_overrides(cls, v: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(v) & {"model", "messages", "tools", "stream"})
        if clash:
            raise ValueError(f"extra_body must not set {', '.join(clash)} (the harness sets them)")
        return v


class BootcampConfig(_Strict):
    name: str
    seed: int
    data_source: str | None = None
    imports: list[str] = Field(default_factory=list)
    """Python modules to import before resolving names (they register custom environments)."""
    system_prompt: str | None = None
    levels: list[Level] = Field(min_length=1)
    splits: dict[str, int]
    """Split name -> number of cases. Earlier splits claim cases first; later ones never repeat them."""
    tools: list[ToolRef] = Field(default_factory=list)
    interaction: ComponentRef | None = None
    reward: ComponentRef
    limits: Limits = Field(default_factory=Limits)
    sampling: Sampling = Field(default_factory=Sampling)

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", v):
            raise ValueError("use letters, digits, '_', '.', '-' only")
        return v

    @field_validator("splits")
    @classmethod
    def _splits(cls, v: dict[str, int]) -> dict[str, int]:
        if not v:
            raise ValueError("name at least one split, e.g. {train: 100, test: 20}")
        for name, n in v.items():
            if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
                raise ValueError(f"split name '{name}': use letters, digits, '_', '-'")
            if n < 0:
                raise ValueError(f"split '{name}' has a negative size")
        return v

    @model_validator(mode="after")
    def _unique_names(self) -> BootcampConfig:
        for what, names in (("level", [lv.name for lv in self.levels]), ("tool", [t.name for t in self.tools])):
            dup = {n for n in names if names.count(n) > 1}
            if dup:
                raise ValueError(f"{what} names must be unique; repeated: {', '.join(sorted(dup))}")
        return self

    @property
    def source(self) -> str:
        return self.data_source or f"bootcamp/{self.name}"

    def data_hash(self) -> str:
        """Hash of everything that shapes the generated dataset (limits and sampling excluded)."""
        keys = {
            "name",
            "seed",
            "data_source",
            "system_prompt",
            "levels",
            "splits",
            "tools",
            "interaction",
            "reward",
            "imports",
        }
        return _sha(canonical_json(self.model_dump(mode="json", include=keys)))

    def config_hash(self) -> str:
        """Hash of the whole config; recorded in every trace."""
        return _sha(canonical_json(self.model_dump(mode="json")))

    def import_modules(self) -> None:
        for mod in self.imports:
            try:
                importlib.import_module(mod)
            except ImportError as exc:
                raise UserError(
                    f"bootcamp '{self.name}': cannot import '{mod}' listed in imports ({exc}); check PYTHONPATH"
                ) from None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_bootcamp(path: str | Path) -> BootcampConfig:
    """Read and validate a bootcamp YAML; every problem becomes one `UserError` naming file:line and field."""
    from ptbench.bootcamp.adapters import config_dict
    from ptbench.core.yamlio import load_located_yaml

    if not Path(path).exists() and (adapted := config_dict(str(path))) is not None:
        cfg = BootcampConfig.model_validate(adapted)  # an adapted library's environment, by its name
        _check_names(cfg, path)
        return cfg
    located = load_located_yaml(path)
    if not isinstance(located.data, dict):
        raise UserError(f"{path}: a bootcamp file must be a mapping (name, seed, levels, splits, reward, ...)")
    try:
        cfg = BootcampConfig.model_validate(located.data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        line = located.line_of(loc)
        field = ".".join(str(p) for p in loc) or "(top level)"
        msg = "unknown key (remove it or check its spelling)" if err["type"] == "extra_forbidden" else err["msg"]
        where = f"{path}:{line}" if line else str(path)
        more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise UserError(f"{where}: {field}: {msg}{more}") from None
    cfg.import_modules()
    _check_names(cfg, path)
    return cfg


def _check_names(cfg: BootcampConfig, path: str | Path) -> None:
    from ptbench.bootcamp.api import GENERATORS, INTERACTIONS, REWARDS, TOOLS

    for lv in cfg.levels:
        check = getattr(GENERATORS.get(lv.generator), "check_params", None)
        if check is not None:  # an adapter's generator: its library installed, the dataset or game known
            try:
                check(lv.params)
            except UserError as exc:
                raise UserError(f"{path}: level '{lv.name}': {exc}") from None
    for t in cfg.tools:
        TOOLS.get(t.name)
    if cfg.interaction:
        INTERACTIONS.get(cfg.interaction.name)
    REWARDS.get(cfg.reward.name)
