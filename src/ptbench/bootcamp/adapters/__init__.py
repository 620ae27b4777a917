"""Environment libraries brought in as ptbench environments, each behind its own pinned extra.

An adapter names a family of environments by a prefix (`rg.<dataset>` reasoning-gym, `spiel.<game>`
OpenSpiel, `ta.<game>` TextArena, `minigrid.<env id>` MiniGrid/BabyAI, `gym.<family>` Gymnasium
toy-text, `pz.<game>` PettingZoo classic, `chess.<family>`, ..., or a third-party plugin's own) and
registers its generators, interactions and rewards (importing its library only when a case is made or
scored). Such a name stands wherever a bootcamp YAML path is accepted (`ptbench bootcamp generate
rg.leg_counting`), and `ptbench bootcamp list` shows them all.

Every adapter is one entry of the `ADAPTERS` registry, keyed by its prefix, checked against the
`Adapter` protocol when it registers (a missing fact is an error at import, not a KeyError at `list`).
A module or any object with those attributes is an adapter: ptbench's own are the modules of
this package that name a `PREFIX`; a third-party package calls `register_adapter(obj)` from its
`ptbench.plugins` entry point.

An adapter may also name, in `SAME_FAMILY` (optional, default none), its environments that are the same
task family as another environment: a parameter variant, or a family another source already has
(full name -> the environment the family is counted as; see bootcamp/families.py). `bootcamp list`
shows each environment's family and `bootcamp list --totals` counts each family once.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from ptbench.core.errors import UserError
from ptbench.core.registry import Registry


@runtime_checkable
class Adapter(Protocol):
    """What an adapter tells ptbench about its environments (a module with these names qualifies)."""

    PREFIX: str  # "<short>." : its environments are PREFIX + name
    SOURCE: str  # the library's name, the `source` column of `bootcamp list` and `bootcamp verify`
    EXTRA: str  # pip install 'ptbench[EXTRA]' installs the library
    DOMAIN: str  # one line: what kind of environments these are

    def names(self) -> list[str]: ...  # its environments (without the prefix); needs the library

    def describe(self, name: str) -> dict[str, str]: ...  # domain, tools, levels of one environment

    def bootcamp_dict(self, name: str) -> dict[str, Any]: ...  # the bootcamp config of one environment

    def library(self) -> ModuleType: ...  # the library, or UserError naming the extra (see load_library)

    # SAME_FAMILY: dict[str, str] is optional (default {}), so no member here: `same_family` reads it.


def _load_builtin() -> None:
    """ptbench's own adapters: every public module of this package that names a `PREFIX` (the shared
    helpers name none; a module run elsewhere, like the mathematics_dataset worker, is private), so a
    new adapter module needs no edit here; and ptbench's own environments, whose adapter-shaped
    packages (envs/pencil) register themselves when imported."""
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            if hasattr(module, "PREFIX"):
                register_adapter(module)
    # ptbench's own environment packages shaped as adapters (envs/pencil) register themselves on import
    importlib.import_module("ptbench.bootcamp.envs")


ADAPTERS: Registry[Adapter] = Registry(
    "environment adapter",
    load=_load_builtin,
    hint="an adapter registers with bootcamp.adapters.register_adapter (docs/guides/add-an-environment.md)",
)


def register_adapter(adapter: Any) -> Any:
    """Check `adapter` (a module or object) against the `Adapter` protocol and register it under its
    prefix; registering the same object again is a no-op. Returns it, so it can end a module."""
    missing = [a for a in ("PREFIX", "SOURCE", "EXTRA", "DOMAIN", "names", "describe", "bootcamp_dict", "library")
               if not hasattr(adapter, a)]  # fmt: skip
    label = getattr(adapter, "__name__", type(adapter).__name__)
    if missing or not isinstance(adapter, Adapter):
        raise TypeError(f"environment adapter {label} lacks {', '.join(missing)} (see bootcamp.adapters.Adapter)")
    prefix = adapter.PREFIX
    if not (isinstance(prefix, str) and prefix.endswith(".") and len(prefix) > 1 and "/" not in prefix):
        raise TypeError(f"environment adapter {label}: PREFIX {prefix!r} must be a short name ending in '.'")
    same_family(adapter)
    for name in ADAPTERS._items:  # a prefix inside another would make `adapter_for` ambiguous
        if name != prefix and (name.startswith(prefix) or prefix.startswith(name)):
            raise TypeError(f"environment adapter {label}: PREFIX {prefix!r} overlaps the registered {name!r}")
    return ADAPTERS.add(prefix, adapter)


def same_family(adapter: Any) -> dict[str, str]:
    """The adapter's `SAME_FAMILY` ({} if it declares none): environment -> the environment its task family
    is counted as. Each key must be one of its own names (PREFIX + name); TypeError otherwise."""
    declared = getattr(adapter, "SAME_FAMILY", None) or {}
    label = getattr(adapter, "__name__", type(adapter).__name__)
    if not isinstance(declared, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in declared.items()
    ):
        raise TypeError(f"environment adapter {label}: SAME_FAMILY must map environment names to environment names")
    for name in declared:
        if not (name.startswith(adapter.PREFIX) and len(name) > len(adapter.PREFIX)):
            raise TypeError(f"environment adapter {label}: SAME_FAMILY names {name!r}, not one of its own "
                            f"environments ({adapter.PREFIX}<name>)")  # fmt: skip
    return declared


def load_library(module: str, name: str, extra: str) -> ModuleType:
    """The adapted library's module, or one line naming the pip command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(f"{name} is not installed; pip install 'ptbench[{extra}]'") from None


def installed(adapter: Adapter) -> bool:
    """Whether the adapter's library can be loaded here (`bootcamp list`'s installed column)."""
    try:
        adapter.library()
    except UserError:
        return False
    return True


def adapter_for(name: str) -> Adapter | None:
    """The adapter whose environments `name` names (None: not an adapter's name)."""
    for prefix in ADAPTERS.names():
        if name.startswith(prefix):
            return ADAPTERS.get(prefix)
    return None


def config_dict(name: str) -> dict[str, Any] | None:
    """The bootcamp config of an adapted environment, e.g. `rg.leg_counting` (None: not one)."""
    adapter = adapter_for(name)
    if adapter is None:
        return None
    return adapter.bootcamp_dict(name[len(adapter.PREFIX) :])


def register_all() -> None:
    """Import every adapter, so their generators, interactions and rewards are registered."""
    importlib.import_module("ptbench.bootcamp.adapters.outcome")
    importlib.import_module("ptbench.bootcamp.adapters.internbootcamp")
    ADAPTERS.names()
