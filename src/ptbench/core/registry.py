"""One registry type: name -> thing, for tasks, agents and bootcamp environments (generators, tools,
interactions, rewards).

Three ways in, combined: classes register themselves with `@registry.register(name)` when their
module is imported (`load` imports the built-in ones on first use); third-party packages name a
module in the `ptbench.plugins` entry-point group, imported before the first lookup of any registry,
whose imports register the same way (a site's scheduler or benchmark lives in its own package and
edits no ptbench file); and things found on disk are offered by `discover` (agents: folders with an
agent.yaml), asked again at each lookup because the search path can change. A registered name wins
over a discovered one. An unknown name is the user's mistake: one line naming what is known and,
with `hint`, how to add one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from ptbench.core.errors import UserError

PLUGIN_GROUP = "ptbench.plugins"
"""Entry-point group: each entry names a module (`name = "pkg.module"`) whose import registers plugins."""
_plugins_loaded = False


def load_plugins() -> None:
    """Import every installed plugin module once. A plugin that fails to import is one line naming its
    package and the error: a registry that silently lacks a site's scheduler would run elsewhere."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            importlib.import_module(ep.value.split(":")[0])
        except Exception as exc:
            dist = ep.dist.name if ep.dist is not None else ep.name
            _plugins_loaded = False  # the next lookup says it again rather than run without the plugin
            raise UserError(
                f"ptbench plugin '{ep.name}' (package {dist}) failed to import: {type(exc).__name__}: {exc}; "
                f"fix or uninstall it (pip uninstall {dist})"
            ) from exc


T = TypeVar("T")
C = TypeVar("C")


class Registry(Generic[T]):
    def __init__(
        self,
        kind: str,
        *,
        load: Callable[[], None] | None = None,
        discover: Callable[[], Mapping[str, T]] | None = None,
        hint: str = "",
        on_register: Callable[[str, T], None] | None = None,
    ) -> None:
        """`hint` is formatted with `name` (the unknown one) and appended to the unknown-name error."""
        self.kind = kind
        self._items: dict[str, T] = {}
        self._load, self._discover, self._hint, self._on_register = load, discover, hint, on_register
        self._loading = False

    def add(self, name: str, item: T) -> T:
        if name in self._items and self._items[name] is not item:
            raise ValueError(f"{self.kind} '{name}' registered twice")
        self._items[name] = item
        if self._on_register is not None:
            self._on_register(name, item)
        return item

    def register(self, name: str) -> Callable[[C], C]:
        """Class decorator: `@TASKS.register("gsm8k")`."""

        def deco(item: C) -> C:
            self.add(name, item)  # type: ignore[arg-type]
            return item

        return deco

    def _all(self) -> dict[str, T]:
        load_plugins()
        if self._load is not None and not self._loading:
            self._loading = True  # a built-in module that looks names up while it registers must not recurse
            try:
                self._load()
            finally:
                self._loading = False
        found = dict(self._discover()) if self._discover is not None else {}
        return {**found, **self._items}

    def get(self, name: str) -> T:
        items = self._all()
        try:
            return items[name]
        except KeyError:
            known = ", ".join(sorted(items)) or "none"
            hint = f"; {self._hint.format(name=name)}" if self._hint else ""
            raise UserError(f"unknown {self.kind} '{name}' (known: {known}){hint}") from None

    def names(self) -> list[str]:
        return sorted(self._all())

    def __contains__(self, name: object) -> bool:
        return name in self._all()
