"""Every registered backend carries its facts (backends/registry.py), and they are true: its name is
the registered one, its options model parses its defaults, its pip extra is one pyproject.toml
declares, its preflight answers with doctor's rows. A class that lacks a fact is refused where it
registers (the plugin author's mistake, said at import)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from ptbench.backends.registry import BACKENDS
from ptbench.core.preflight import Check
from ptbench.core.registry import Registry

EXTRAS = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"][
    "optional-dependencies"
]


@pytest.mark.parametrize("name", ["local", "slurm", "htcondor"])
def test_each_built_in_backend_carries_true_facts(name: str) -> None:
    cls = BACKENDS.get(name)
    assert cls.name == name
    assert issubclass(cls.options_model, BaseModel)
    assert cls.extra is None or cls.extra in EXTRAS, cls.extra
    backend = cls()  # the options model's defaults are valid options
    checks = backend.preflight()
    assert checks and all(isinstance(c, Check) and c.status in ("ready", "warn", "fail") for c in checks)
    assert any(c.area == f"scheduler ({name})" for c in checks)


def test_a_backend_without_its_facts_is_refused_where_it_registers() -> None:
    from ptbench.backends import registry

    # the same check BACKENDS runs on registration, on a registry of its own (the suite's stays as shipped)
    probe: Registry[type] = Registry("backend", on_register=registry._check_facts)

    class Bare:
        name = "bare"

    with pytest.raises(TypeError, match="lacks options_model, extra, job_identity, preflight"):
        probe.add("bare", Bare)

    class Misnamed:
        name = "other"
        options_model = BaseModel
        extra = None

        @staticmethod
        def job_identity(environ):
            return None

        def preflight(self):
            return []

    with pytest.raises(TypeError, match="named 'other' but registered as 'misnamed'"):
        probe.add("misnamed", Misnamed)
