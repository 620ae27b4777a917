"""The one registry type (core.registry) behind tasks, agents and bootcamp environments."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptbench.agents.spec import AGENTS
from ptbench.bootcamp.api import GENERATORS, TOOLS
from ptbench.core.errors import UserError
from ptbench.core.registry import Registry
from ptbench.tasks.base import TASKS


def test_register_get_names_and_one_line_for_an_unknown_name() -> None:
    loads: list[int] = []
    disk = {"b": "from-disk", "c": "from-disk"}
    reg: Registry[str] = Registry("widget", load=lambda: loads.append(1), discover=lambda: disk, hint="add {name}.w")
    reg.add("a", "code")
    reg.add("c", "code")  # a registered name wins over a discovered one
    assert reg.names() == ["a", "b", "c"] and reg.get("c") == "code" and reg.get("b") == "from-disk"
    assert "b" in reg and "z" not in reg and loads
    with pytest.raises(UserError) as exc:
        reg.get("zz")
    assert str(exc.value) == "unknown widget 'zz' (known: a, b, c); add zz.w"
    reg.add("a", "code")  # the same thing again (a module imported twice) is fine
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("a", "other")


def test_the_three_kinds_share_it() -> None:
    assert all(isinstance(r, Registry) for r in (TASKS, AGENTS, GENERATORS, TOOLS))
    assert "arithmetic" in TASKS.names() and TASKS.get("arithmetic").name == "arithmetic"
    assert "reference" in AGENTS.names() and (AGENTS.get("reference") / "agent.yaml").is_file()
    assert "arithmetic" in GENERATORS.names()


def test_agents_are_found_on_the_search_path_at_each_lookup(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "agent.yaml").write_text("name: mine\ncommand: [echo]\n")
    assert "mine" not in AGENTS
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(tmp_path))
    assert AGENTS.get("mine") == tmp_path / "mine"
