"""Third-party plugins through the `ptbench.plugins` entry-point group: a package that edits no
ptbench file registers a task by being installed, and a broken plugin is one line naming it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import install_plugin_package


def _package(root: Path, body: str) -> Path:
    src = root / "pkg"
    (src / "src" / "site_plugin").mkdir(parents=True)
    (src / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "site-plugin"
        version = "0.0.1"
        [project.entry-points."ptbench.plugins"]
        site = "site_plugin"
        """)
    )
    (src / "src" / "site_plugin" / "__init__.py").write_text(textwrap.dedent(body))
    return src


def _ask(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_an_installed_plugin_registers_without_editing_ptbench(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        """
        from ptbench.tasks.arithmetic import Arithmetic
        from ptbench.tasks.base import register_task

        @register_task("site_arithmetic")
        class SiteArithmetic(Arithmetic):
            pass
        """,
    )
    env = install_plugin_package(tmp_path / "site", pkg)
    out = _ask(env, "from ptbench.tasks.base import TASKS; print('site_arithmetic' in TASKS.names())")
    assert out.stdout.strip() == "True", out.stderr
    # The suite's own interpreter never saw it.
    from ptbench.tasks.base import TASKS

    assert "site_arithmetic" not in TASKS.names()


def test_a_plugin_that_fails_to_import_is_one_line_naming_it(tmp_path: Path) -> None:
    pkg = _package(tmp_path, "raise RuntimeError('needs the site scheduler client')\n")
    env = install_plugin_package(tmp_path / "site", pkg)
    out = _ask(
        env,
        "from ptbench.core.errors import UserError\n"
        "from ptbench.tasks.base import TASKS\n"
        "try:\n    TASKS.get('gsm8k')\nexcept UserError as e:\n    print(e)\n",
    )
    line = out.stdout.strip()
    assert "plugin 'site'" in line and "site-plugin" in line and "needs the site scheduler client" in line, out
    assert "pip uninstall site-plugin" in line and "\n" not in line


TOY_CAMPAIGN = """
name: toyall
agents:
  - toy-copy
  - {name: toy-copy, label: toy-cheat, options: {plant: CHEAT}}
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: toy_parity, options: {n_test: 8}}]
budget: {hours: 1, gpus: 0, grace_seconds: 2, eval_minutes: 5}
sandbox: none
backend:
  name: toy
  options: {slots: 2, job_prefix: all}
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
integrity:
  checks: [toy_cheat]
  require: [toy_cheat]
  toy_cheat: {marker: CHEAT}
"""


@pytest.mark.slow
@pytest.mark.integration
def test_one_campaign_on_every_toy_plugin_at_once(write_campaign, tmp_path: Path) -> None:
    """The toy package's scheduler, benchmark, integrity check and agent CLI together, installed with
    pip and named by a campaign that no ptbench file knows of: submitted to the toy scheduler, each
    trial runs in a toy job, is scored by the toy benchmark and checked by the toy check, which flags
    only the trial that planted its marker; collate tabulates the toy benchmark."""
    from tests.conftest import ptbench

    env = install_plugin_package(tmp_path / "site")
    path = write_campaign(TOY_CAMPAIGN)
    assert ptbench("validate", str(path), cwd=tmp_path, env=env).returncode == 0
    run = ptbench("submit", str(path), cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    cdir = tmp_path / "results" / "toyall"
    jobs = json.loads((cdir / "jobs.json").read_text())
    assert jobs["backend"] == "toy"
    verdicts, job_ids = {}, {}
    for label in ("toy-copy", "toy-cheat"):
        trial = cdir / f"{label}__tiny__toy_parity__s0"
        result = json.loads((trial / "result.json").read_text())
        assert result["status"] == "completed", result
        assert result["task"]["name"] == "toy_parity" and result["primary_metric"]["name"] == "parity_accuracy"
        assert result["primary_metric"]["n"] == 8
        # The job the toy scheduler gave this trial (TOY_JOB_ID), read back only through its job_identity.
        prov = result["provenance"]
        assert prov["scheduler"] == "toy" and prov["job_id"] == jobs["units"][trial.name], (prov, jobs)
        state = json.loads((trial / "state.json").read_text())
        assert state["attempts"][-1]["job_id"] == prov["job_id"]
        job_ids[label] = prov["job_id"]
        verdicts[label] = json.loads((trial / "checks" / "verdicts.json").read_text())
        # The toy CLI's own output format, parsed by the parser its package registered under that name.
        traj = json.loads((trial / "agent" / "trajectory.json").read_text())
        assert traj["trace_format"] == "toy-lines" and traj["final_message"] == "copied"
        assert [step["kind"] for step in traj["steps"]] == ["message", "tool_call"]
        assert (trial / "home" / ".toy" / "session.log").is_file()
    assert sorted(job_ids.values()) == ["all-1.0", "all-1.1"]
    assert verdicts == {"toy-copy": {"toy_cheat": "clean"}, "toy-cheat": {"toy_cheat": "flagged"}}
    report = json.loads((cdir / "toy-cheat__tiny__toy_parity__s0" / "checks" / "toy_cheat.json").read_text())
    assert report["evidence"] == [{"where": "final_model/CHEAT", "match": "CHEAT"}]
    tables = ptbench("collate", str(cdir), env=env)
    assert tables.returncode == 0, tables.stderr
    assert "toy_parity" in tables.stdout
