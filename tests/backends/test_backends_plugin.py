"""A scheduler from outside ptbench (tests/plugins/ptbench-toy, `ptbench_toy/scheduler.py`), installed
as a site would install its own: `doctor` asks its preflight, `validate` knows its name and options,
and a campaign with `backend: {name: toy}` is submitted to it (with every toy plugin at once, in
tests/core/test_registry_plugins.py): each trial records the toy job it ran in, learnt only through
the backend's `job_identity`. Without the package the same
campaign is refused, and a misspelt name is one line with file:line and did-you-mean."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import ptbench
from tests.support import install_plugin_package
from tests.test_doctor import WIDE, rows

CAMPAIGN = """\
name: toyrun
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
seeds: [0, 1]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
sandbox: none
backend:
  name: toy
  options: {slots: 3, job_prefix: site}
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
"""


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a user who installed ptbench-toy (the suite's own interpreter never sees it)."""
    return install_plugin_package(tmp_path_factory.mktemp("site-packages"))


def _campaign(tmp_path: Path, model: Path, text: str = CAMPAIGN, **replace: str) -> Path:
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "c.yaml"
    path.write_text(text.replace("@MODEL@", str(model)).replace("@RESULTS@", str(tmp_path / "results")))
    return path


def _one_line(out, *needles: str) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def test_doctor_and_validate_know_the_plugin_scheduler(toy_env, test_agents, tmp_path):
    model = tmp_path / "tiny"
    model.mkdir()  # validate looks for a local base model's path; nothing here loads it
    env = {**toy_env, "PTBENCH_AGENTS_PATH": str(test_agents)}
    good = _campaign(tmp_path, model)
    ok = ptbench("validate", str(good), env=env)
    assert ok.returncode == 0, ok.stderr
    # doctor: the plugin's own preflight, with the campaign's options (slots: 3)
    doc = ptbench("doctor", str(good), env={**env, **WIDE})
    assert "3 slot(s)" in rows(doc.stdout)["scheduler (toy)"], doc.stdout
    _one_line(ptbench("doctor", "--backend", "tyo", env=env), "--backend tyo", "did you mean 'toy'")
    # the plugin's options model: a misspelt option is its key's line and the nearest option
    bad = _campaign(tmp_path, model, **{"{slots: 3,": "{slot: 3,"})
    _one_line(ptbench("validate", str(bad), env=env), "c.yaml:10", "backend.options.slot", "did you mean 'slots'")
    # a misspelt backend name: file:line and did-you-mean, exit 2
    bad = _campaign(tmp_path, model, **{"name: toy": "name: tyo"})
    _one_line(ptbench("validate", str(bad), env=env), "c.yaml:9", "unknown backend 'tyo'", "did you mean 'toy'")
    # the control: without the package nothing knows `toy`
    plain = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    if os.environ.get("PYTHONPATH"):
        plain["PYTHONPATH"] = os.environ["PYTHONPATH"]
    good = _campaign(tmp_path, model)
    _one_line(ptbench("validate", str(good), env=plain), "c.yaml:9", "unknown backend 'toy'")
    from ptbench.backends.registry import BACKENDS

    assert "toy" not in BACKENDS.names()


# The campaign submitted to the toy scheduler (its jobs, job identity, results) runs once for every toy
# plugin together: tests/core/test_registry_plugins.py::test_one_campaign_on_every_toy_plugin_at_once.
