"""Integrity checks as plugins: one `core.registry.Registry` of check classes, each registered where
it is defined (`@register_check("name")`), a third-party one by its package's `ptbench.plugins`
entry point (docs/guides/add-an-integrity-check.md).

A check is a class with a settings model (`Settings`, pydantic: the campaign's `integrity.<name>:`
mapping, validated by `validate` with file:line and again in the checks' worker process) and
`check(ctx) -> Finding`; it may say, from the campaign alone, why it has no method for a task
(`not_applicable_reason`: `validate` refuses a campaign that requires it there). The runner runs
the configured checks in one worker process (integrity/worker.py), looking each name up here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from ptbench.core.registry import Registry
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Finding


class NoSettings(BaseModel):
    """A check without settings of its own: any key under `integrity.<name>:` is a mistake."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class IntegrityCheck(ABC):
    """Subclass, set `Settings` if the check has any, write `check`, and register it. `check` is
    abstract: a subclass without it is refused by `register_check` and cannot be instantiated."""

    name: ClassVar[str] = ""
    Settings: ClassVar[type[BaseModel]] = NoSettings
    # Its facts, read by name through CHECKS and never by comparing its name elsewhere:
    # it runs after evaluation, which scores the final model in the engine it already holds
    # (runner/pipeline.py; integrity/memorization/final_scores.py), rather than with the other checks.
    runs_after_evaluation: ClassVar[bool] = False
    # Why a Harbor verifier cannot run it (export/harbor.py warns; it is unchecked there). None: it can.
    harbor_unchecked: ClassVar[str | None] = None
    # Why `ptbench selftest integrity` cannot measure its recall offline (its report's `not_measured`).
    selftest_unmeasured: ClassVar[str | None] = None

    def __init__(self, settings: BaseModel) -> None:
        self.settings = settings

    @abstractmethod
    def check(self, ctx: CheckContext) -> Finding:
        """`clean`, or `flagged` with evidence; raise `Unchecked` / `NotApplicable` (integrity.report)
        when it cannot decide. An exception or a hang becomes `unchecked`, never `clean`."""

    @classmethod
    def not_applicable_reason(cls, task_name: str, options: dict[str, Any]) -> str | None:
        """Why the check has no method for this task and these options (None: it applies)."""
        return None


def _load_builtin() -> None:
    """ptbench's own checks: every public module of `ptbench.integrity`, subpackages included (a check
    registers where it is defined, e.g. contamination/check.py), so a new built-in check is one new
    module and no list to edit. The modules import their heavy libraries only when a check runs."""
    import ptbench.integrity as package

    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            importlib.import_module(info.name)


CHECKS: Registry[type[IntegrityCheck]] = Registry(
    "integrity check",
    load=_load_builtin,
    hint="see docs/guides/add-an-integrity-check.md to add one",
)

_NAME_OK = re.compile(r"^[a-z][a-z0-9_]*$")
K = TypeVar("K", bound=type[IntegrityCheck])


def register_check(name: str) -> Callable[[K], K]:
    """Class decorator: `@register_check("my_check")` on an `IntegrityCheck` subclass."""

    if not _NAME_OK.match(name):
        # It is a YAML key under `integrity:` and the file name checks/<name>.json.
        raise ValueError(f"integrity check name {name!r}: use lower-case letters, digits and '_'")

    def deco(cls: K) -> K:
        if not (isinstance(cls, type) and issubclass(cls, IntegrityCheck)):
            raise TypeError(f"integrity check '{name}': {cls!r} is not an IntegrityCheck subclass")
        if not (isinstance(cls.Settings, type) and issubclass(cls.Settings, BaseModel)):
            raise TypeError(f"integrity check '{name}': Settings must be a pydantic model")
        if inspect.isabstract(cls):  # refused where it is defined, not when a trial first runs it
            missing = ", ".join(sorted(cls.__abstractmethods__))
            raise TypeError(f"integrity check '{name}': {cls.__qualname__} does not define {missing}(ctx)")
        cls.name = name
        CHECKS.add(name, cls)
        return cls

    return deco


def raw_settings(integrity: Any, name: str) -> Any:
    """The campaign's `integrity.<name>:` mapping (None when absent)."""
    return (integrity.model_extra or {}).get(name)


def settings_for(cls: type[IntegrityCheck], integrity: Any) -> BaseModel:
    """The check's settings from the campaign, validated by its model (raises ValidationError)."""
    raw = raw_settings(integrity, cls.name)
    return cls.Settings.model_validate({} if raw is None else raw)
