"""Shared fixtures: a tiny local model, test agents, and `require` (fail in CI, skip locally)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import require  # noqa: F401  (re-exported for test modules)

REPO = Path(__file__).resolve().parents[1]
FIXTURE_AGENTS = REPO / "tests" / "fixtures" / "agents"

# vLLM's CPU build compiles the model with inductor when it starts (42 s of an 86 s start here); the
# suite starts vLLM about ten times for a few dozen tokens each, which never repays it. Eager mode is
# the same engine and kernels without the compiled graph. Every `ptbench eval` the tests run (the
# runner passes PTBENCH_* to it) and `tests.bootcamp.test_vllm_e2e.vllm_server` take it; on a GPU
# machine (the `gpu` tests) nothing is changed. Measured here (2026-12-02): 86 s a start, 44 s eager.
VLLM_TEST_ARGS = '{"enforce_eager": true}'
if not os.path.exists("/dev/nvidia0"):
    os.environ.setdefault("PTBENCH_VLLM_ARGS", VLLM_TEST_ARGS)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A random tiny Llama + tokenizer, made once per test session (no hub download)."""
    from ptbench.demo import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("models") / "tiny-llama")


@pytest.fixture
def test_agents(monkeypatch) -> Path:
    """Make the scripted shell agents in tests/fixtures/agents visible to the launcher (and to runners it starts)."""
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(FIXTURE_AGENTS))
    return FIXTURE_AGENTS


@pytest.fixture
def write_campaign(tmp_path: Path, tiny_model: Path):
    """Write a campaign YAML into tmp_path; results go to tmp_path/results."""

    def make(body: str, name: str = "c.yaml") -> Path:
        text = textwrap.dedent(body).replace("@MODEL@", str(tiny_model)).replace("@RESULTS@", str(tmp_path / "results"))
        path = tmp_path / name
        path.write_text(text)
        return path

    return make


def ptbench(
    *args: str, cwd: Path | None = None, timeout: float = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the real `ptbench` command as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "ptbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@functools.cache
def _has_module_fixture(path: Path) -> bool:
    return 'scope="module"' in path.read_text()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the group marks
def pytest_collection_modifyitems(config, items) -> None:
    """Under pytest-xdist (`-n 2 --dist loadgroup`, scripts/test.sh) tests spread one by one over the
    workers, except: every test that uses the dev Slurm cluster runs on one worker, in order, as the
    one-node cluster expects; a file with module-scoped fixtures (trained models, servers) runs whole
    on one worker, so they are built once."""
    for item in items:
        if item.get_closest_marker("slurm"):
            item.add_marker(pytest.mark.xdist_group("slurm"))
        elif _has_module_fixture(item.path):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
