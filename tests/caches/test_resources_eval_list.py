"""The evaluation cache's list is generated from the registered benchmarks: a site's benchmark that
states its held-out Hub data (`eval_resources`) in its own package is kept out of the agent cache by
being installed, with no list edited. `ptbench cache verify` (the real command, in a process that sees
the plugin) finds its test file planted in the agent cache, and passes the same cache holding only the
repository's training file (the honest control); without the plugin the file is not claimed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import ptbench
from tests.support import install_plugin_package

PLUGIN = """
from ptbench.caches.resources import Resource
from ptbench.tasks.arithmetic import Arithmetic
from ptbench.tasks.base import register_task


@register_task("site_bench")
class SiteBench(Arithmetic):
    eval_resources = (Resource("dataset", "site/bench", None, ("test-*",), "test_set"),)
"""


def _package(root: Path) -> Path:
    src = root / "pkg"
    (src / "src" / "site_bench").mkdir(parents=True)
    (src / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "site-bench"
        version = "0.0.1"
        [project.entry-points."ptbench.plugins"]
        site = "site_bench"
        """)
    )
    (src / "src" / "site_bench" / "__init__.py").write_text(PLUGIN)
    return src


def _agent_cache(root: Path, files: dict[str, str]) -> Path:
    snap = root / "hub" / "datasets--site--bench" / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    for name, text in files.items():
        (snap / name).write_text(text)
    return root


def _verify(agent: Path, tmp_path: Path, env: dict[str, str] | None = None):
    args = ("cache", "verify", "--agent-cache", str(agent), "--eval-cache", str(tmp_path / "eval-hf"))
    return ptbench(*args, "--allow-unchecked", env=env)


def test_a_plugin_benchmarks_held_out_data_is_kept_out_of_the_agent_cache(tmp_path: Path) -> None:
    env = install_plugin_package(tmp_path / "site", _package(tmp_path))
    (tmp_path / "eval-hf" / "hub").mkdir(parents=True)
    planted = _agent_cache(tmp_path / "planted", {"train-0.csv": "q,a\n1,2\n", "test-0.csv": "q,a\n3,4\n"})
    out = _verify(planted, tmp_path, env)
    assert out.returncode == 1 and "FOUND" in out.stdout and "test-0.csv" in out.stdout, out.stdout + out.stderr
    assert "train-0.csv" not in out.stdout  # only what the benchmark claims
    honest = _agent_cache(tmp_path / "honest", {"train-0.csv": "q,a\n1,2\n"})
    out = _verify(honest, tmp_path, env)
    assert out.returncode == 0 and "FOUND" not in out.stdout, out.stdout + out.stderr
    # The plugin is what claims it: ptbench alone does not know the repository.
    out = _verify(planted, tmp_path)
    assert out.returncode == 0 and "FOUND" not in out.stdout, out.stdout + out.stderr
