"""`ptbench bootcamp list`: every shipped environment with its domain, tools, levels and extra; the suite mixes them."""

from __future__ import annotations

import json
import tomllib

import yaml
from typer.testing import CliRunner

from ptbench.bootcamp.catalogue import CATALOGUE, rows
from ptbench.cli.bootcamp import app

from .conftest import CAMPAIGNS, REPO


def test_list_shows_every_environment_with_tools_levels_and_extra() -> None:
    res = CliRunner().invoke(app, ["list", "--json", "--campaigns", str(CAMPAIGNS)])
    assert res.exit_code == 0, res.output
    entries = {e["name"]: e for e in json.loads(res.output)}
    assert {"battery", "poker", "robot_arm", "combinatorial", "forecasting"} <= set(entries)
    assert entries["battery"]["tools"] == "simulate_cell" and entries["battery"]["levels"] == "easy, medium, hard"
    assert entries["battery"]["extra"] == "ptbench[bootcamp-battery]"
    table = CliRunner().invoke(app, ["list", "--campaigns", str(CAMPAIGNS)])
    assert "ptbench[bootcamp-poker]" in table.output and "forward_kinematics, check_path" in table.output


def test_every_extra_is_declared_and_every_example_yaml_is_listed() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for e in CATALOGUE:
        assert e.extra is None or e.extra in extras, e.extra
    listed = {e.name for e in CATALOGUE}
    examples = {p.stem for p in CAMPAIGNS.glob("*.yaml") if p.stem != "suite"}
    assert examples == listed
    assert all("(no example YAML)" not in r["tools"] for r in rows(CAMPAIGNS))


def test_suite_mixes_the_catalogue() -> None:
    suite = yaml.safe_load((CAMPAIGNS / "suite.yaml").read_text())
    members = {b["config"].removesuffix(".yaml") for b in suite["bootcamps"]}
    assert members == {e.name for e in CATALOGUE}
    assert all(b.get("weight", 1) > 0 for b in suite["bootcamps"])
