"""Environment libraries brought in as ptbench environments, each behind its own pinned extra.

An adapter module registers its generators, interactions and rewards (importing its library only
when a case is made or scored) and names its environments: `rg.<dataset>` (reasoning-gym),
`spiel.<game>` (OpenSpiel), `ta.<game>` (TextArena), `gym.<family>` (Gymnasium toy-text),
`minigrid.<env id>` (MiniGrid/BabyAI), `pz.<game>` (PettingZoo classic), `chess.<family>`. Such a
name stands wherever a bootcamp YAML path is accepted (`ptbench bootcamp generate rg.leg_counting`),
and `ptbench bootcamp list` shows them all.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ptbench.core.errors import UserError

ADAPTERS = {
    "rg.": "ptbench.bootcamp.adapters.reasoning_gym",
    "spiel.": "ptbench.bootcamp.adapters.openspiel",
    "ta.": "ptbench.bootcamp.adapters.textarena",
    "gym.": "ptbench.bootcamp.adapters.gymnasium_toytext",
    "minigrid.": "ptbench.bootcamp.adapters.minigrid_text",
    "pz.": "ptbench.bootcamp.adapters.pettingzoo_classic",
    "chess.": "ptbench.bootcamp.adapters.chess_positions",
}


def load_library(module: str, name: str, extra: str) -> ModuleType:
    """The adapted library's module, or one line naming the pip command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(f"{name} is not installed; pip install 'ptbench[{extra}]'") from None


def installed(adapter: ModuleType) -> bool:
    """Whether the adapter's library can be loaded here (`bootcamp list`'s installed column)."""
    try:
        adapter.library()
    except UserError:
        return False
    return True


def adapter_for(name: str) -> ModuleType | None:
    """The adapter module whose environments `name` names (None: not an adapter's name)."""
    for prefix, module in ADAPTERS.items():
        if name.startswith(prefix):
            return importlib.import_module(module)
    return None


def config_dict(name: str) -> dict[str, Any] | None:
    """The bootcamp config of an adapted environment, e.g. `rg.leg_counting` (None: not one)."""
    adapter = adapter_for(name)
    if adapter is None:
        return None
    return adapter.bootcamp_dict(name[len(adapter.PREFIX) :])


def register_all() -> None:
    """Import every adapter module, so their generators, interactions and rewards are registered."""
    importlib.import_module("ptbench.bootcamp.adapters.outcome")
    importlib.import_module("ptbench.bootcamp.adapters.internbootcamp")
    for module in ADAPTERS.values():
        importlib.import_module(module)
