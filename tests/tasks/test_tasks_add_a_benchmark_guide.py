"""docs/guides/add-a-benchmark.md is followed against the toy benchmark: every fact its table names is
one of `TaskFacts` (and none is left out), the class skeleton's methods and the facts it shows are
the toy's own, the entry point it shows is the toy package's, its campaign snippet is a task list
`validate` accepts, and its links resolve. A guide that drifts from the code fails here."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import yaml

from ptbench.tasks.base import TaskFacts
from tests.support import TOY_PLUGINS, install_plugin_package
from tests.test_docs import broken_links

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "add-a-benchmark.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", GUIDE.read_text(), re.S | re.M)


def table_facts() -> list[str]:
    return re.findall(r"^\| `(\w+)(?:\([^)]*\))?` \|", GUIDE.read_text(), re.M)


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> dict:
    """The toy class as a process that sees the installed package reads it."""
    env = install_plugin_package(tmp_path_factory.mktemp("toy"))
    code = textwrap.dedent("""
        import json
        from ptbench.tasks.base import task_class
        from ptbench.tasks.options import check_task_options
        cls = task_class("toy_parity")
        check_task_options("toy_parity", {"n_test": 24})
        print(json.dumps({"module": cls.__module__, "attrs": sorted(dir(cls)),
                          "values": {k: repr(getattr(cls, k)) for k in dir(cls) if not k.startswith("_")}}))
    """)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_fact_table_is_exactly_the_task_facts() -> None:
    facts = [k for k in vars(TaskFacts) if not k.startswith("_")]
    assert sorted(table_facts()) == sorted(facts)


def test_the_skeleton_and_the_facts_shown_are_the_toys(toy: dict) -> None:
    skeleton, facts = blocks("python")[:2]
    cls = next(n for n in ast.parse(skeleton).body if isinstance(n, ast.ClassDef))
    assert cls.decorator_list and ast.unparse(cls.decorator_list[0]) == "register_task('toy_parity')"
    assert toy["module"] == "ptbench_toy.benchmark"
    shown = [n.name for n in cls.body if isinstance(n, ast.FunctionDef)]
    assert {"train_examples", "test_examples", "generation", "score"} <= set(shown) <= set(toy["attrs"])
    for node in ast.parse(textwrap.dedent(facts)).body:
        (target,) = node.targets  # type: ignore[attr-defined]
        value = ast.literal_eval(node.value)  # type: ignore[attr-defined]
        assert target.id in toy["attrs"] and target.id in vars(TaskFacts)
        got = toy["values"][target.id]
        assert got == repr(value) or (value.endswith("...") and value[:-3] in got), (target.id, got)


def test_the_entry_point_and_campaign_shown_are_the_toys(toy: dict) -> None:
    (entry,) = blocks("toml")
    shown = tomllib.loads(entry)["project"]["entry-points"]["ptbench.plugins"]
    real = tomllib.loads((TOY_PLUGINS / "pyproject.toml").read_text())["project"]["entry-points"]["ptbench.plugins"]
    assert shown == real
    (campaign,) = blocks("yaml")
    (task,) = yaml.safe_load(campaign)["tasks"]
    assert task == {"name": "toy_parity", "options": {"n_test": 24}}  # the options the fixture validated


def test_the_guides_links_resolve() -> None:
    assert broken_links(GUIDE) == []
