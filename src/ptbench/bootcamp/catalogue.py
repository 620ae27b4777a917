"""The catalogue of shipped environments: domain and extra per environment, tools and levels read from
its example YAML (campaigns/bootcamp/<name>.yaml), so what `ptbench bootcamp list` prints is what runs.
Each row also names its task family (bootcamp/families.py)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ptbench.bootcamp.config import load_bootcamp


@dataclass(frozen=True)
class Entry:
    name: str
    domain: str
    extra: str | None
    """`pip install 'ptbench[<extra>]'`; None: the core bootcamp extra is enough."""
    needs: tuple[str, ...] = ()
    """Modules the extra provides (to say whether it is installed here)."""


CATALOGUE = (
    Entry("arithmetic", "math (calculator tool)", None),
    Entry("mastermind", "game (multi-turn feedback)", None),
    Entry("sql_explore", "data (stateful SQLite tool)", None),
    Entry("battery", "science: battery design (PyBaMM SPM)", "bootcamp-battery", ("pybamm",)),
    Entry("poker", "game: heads-up limit hold'em (pokerkit)", "bootcamp-poker", ("pokerkit",)),
    Entry("robot_arm", "robotics: planar arm trajectories (numpy)", None, ("numpy",)),
    Entry("combinatorial", "optimisation: knapsack / TSP (OR-Tools)", "bootcamp-combinatorial", ("ortools",)),
    Entry("forecasting", "statistics: ARMA forecasting (statsmodels)", "bootcamp-forecasting", ("statsmodels",)),
)

# ptbench's own environments of a task family another environment is counted as (bootcamp/families.py).
# None now: where a library's game is ptbench's own family, the library's adapter says so (TextArena's
# Mastermind is counted as `mastermind`), so no name of a plugin is written outside it (test_plugin_names).
SAME_FAMILY: dict[str, str] = {}


def default_campaigns_dir() -> Path:
    here = Path("campaigns") / "bootcamp"
    return here if here.is_dir() else Path(__file__).resolve().parents[3] / "campaigns" / "bootcamp"


def rows(campaigns: Path | None = None) -> list[dict[str, str]]:
    """One row per environment: name, domain, tools, levels, extra, installed, config, source, family."""
    from ptbench.bootcamp.families import with_families

    campaigns = campaigns or default_campaigns_dir()
    out = []
    for e in CATALOGUE:
        path = campaigns / f"{e.name}.yaml"
        if path.is_file():
            cfg = load_bootcamp(path)
            tools = ", ".join(t.name for t in cfg.tools) or "-"
            levels = ", ".join(lv.name for lv in cfg.levels)
        else:
            tools = levels = "(no example YAML)"
        installed = all(importlib.util.find_spec(m) is not None for m in e.needs)
        out.append(
            {
                "name": e.name,
                "domain": e.domain,
                "tools": tools,
                "levels": levels,
                "extra": f"ptbench[{e.extra}]" if e.extra else "ptbench[bootcamp]",
                "installed": "yes" if installed else "no",
                "config": str(path),
                "source": "ptbench",
            }
        )
    return with_families(out + adapted_rows())


def adapted_rows() -> list[dict[str, str]]:
    """One row per environment an installed adapter library offers; one row per adapter that is not
    installed (its environments cannot be listed without it), naming the pip command."""
    from ptbench.bootcamp.adapters import ADAPTERS, installed

    out = []
    for prefix in ADAPTERS.names():
        adapter = ADAPTERS.get(prefix)
        if not installed(adapter):
            out.append({"name": f"{prefix}*", "domain": adapter.DOMAIN, "tools": "-", "levels": "-",
                        "extra": f"ptbench[{adapter.EXTRA}]", "installed": "no", "config": "-",
                        "source": adapter.SOURCE})  # fmt: skip
            continue
        for name in adapter.names():
            out.append({**adapter.describe(name), "extra": f"ptbench[{adapter.EXTRA}]", "installed": "yes",
                        "config": f"{prefix}{name}", "name": f"{prefix}{name}", "source": adapter.SOURCE})  # fmt: skip
    return out
