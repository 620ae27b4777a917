"""Test support: `require` (fail in CI, skip locally), `npm_bin`, and the `scripted_provider` fixture
(a scripted provider on a free port, in-process). Kept out of the package: ptbench does not import pytest.

Use it from a conftest with `from tests.support import scripted_provider  # noqa: F401`::

    def test_x(scripted_provider):
        provider = scripted_provider({"turns": [{"shell": "echo hi"}, {"message": "done"}]})
        run_cli(base_url=provider.base_url)
        assert provider.requests[-1]["tool_outputs"]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from ptbench.testing.script import Script
from ptbench.testing.server import ScriptedProvider, provider_in_thread

StartProvider = Callable[..., ScriptedProvider]


def own_sandbox_uid(uid: int) -> bool:
    """Whether `uid` is one of the spare uids this process's code sandbox hands out
    (ptbench.sandbox.codeexec._sandbox_uid): a leak sweep counts only its own, not a concurrent
    test's (pytest-xdist runs another worker beside this one)."""
    base = 2_000_000 + (os.getpid() % 4000) * 1000
    return base <= uid < base + 1000


def require(ok: bool, why: str) -> None:
    """In CI (CI=true) a missing real component fails the test; locally it skips."""
    if not ok:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(why)


def npm_bin() -> Path:
    """Where tests look for the agent CLIs: $PTBENCH_NPM_PREFIX or the repo's .cache/npm, then PATH."""
    default = Path(__file__).resolve().parents[1] / ".cache" / "npm"
    return Path(os.environ.get("PTBENCH_NPM_PREFIX", default)) / "node_modules" / ".bin"


@pytest.fixture
def scripted_provider(tmp_path: Path) -> Iterator[StartProvider]:
    """A factory: call it with a Script (or its dict form) to start a provider; stopped after the test.

    Requests are recorded in `provider.requests` and in `tmp_path/provider-requests.jsonl`.
    """
    with ExitStack() as stack:

        def start(script: Script | dict[str, Any] | list[Any], secrets: tuple[str, ...] = ()) -> ScriptedProvider:
            if isinstance(script, list):
                script = {"turns": script}
            parsed = script if isinstance(script, Script) else Script.model_validate(script)
            record = tmp_path / "provider-requests.jsonl"
            return stack.enter_context(provider_in_thread(parsed, record_path=record, secrets=secrets))

        yield start


def assert_run_exit(out: Any, results_dir: Path) -> None:
    """`ptbench run` exits 0 when every trial of the campaign has a scored result (completed,
    timed_out) and 1 when some has none (cancelled, agent_failed, …: docs/campaigns.md); a campaign
    whose agents are meant to fail exits 1, and that is not a crash."""
    import json

    from ptbench.results.policy import SCORED_STATUSES

    statuses = [json.loads(p.read_text()).get("status") for p in Path(results_dir).glob("*/*/result.json")]
    want = 0 if statuses and all(s in SCORED_STATUSES for s in statuses) else 1
    assert out.returncode == want, (statuses, out.stdout[-3000:], out.stderr[-3000:])


TOY_PLUGINS = Path(__file__).parent / "plugins" / "ptbench-toy"


def install_plugin_package(target: Path, package: Path = TOY_PLUGINS) -> dict[str, str]:
    """Install a plugin package as a user would (pip, from its own pyproject, entry points and all)
    into `target`, and return an environment whose Python sees it: the suite's own interpreter keeps
    no trace of it, so other tests' registries stay as shipped."""
    import shutil
    import subprocess
    import sys

    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources, which would land
    # in the tree (and stale files there in later installs), and two workers would race on them.
    source = target.parent / f"{target.name}-source"
    shutil.copytree(
        package, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"), dirs_exist_ok=True
    )
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*cmd, "--target", str(target), str(source)], check=True, capture_output=True, text=True)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH", "")]))}
