"""Under `sandbox: none` the agent can write the harness's Python: what it wrote there while it ran
is not trusted by the integrity and evaluation processes (runner/pipeline.py, `_guard_python`;
runner/installation.py, `written_since`)."""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import time

import pytest

from ptbench.runner.installation import written_since
from tests.conftest import ptbench

CAMPAIGN = """
name: guard
agents: [{name: python-planter, options: {folder: "@FOLDER@", plant: @PLANT@}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0}
sandbox: none
results_dir: "@RESULTS@"
"""


def test_a_planted_bytecode_file_runs_though_its_source_is_intact_and_a_fresh_cache_folder_stops_it(tmp_path):
    """The attack, for real: Python loads a cached file whose header matches its source, whatever it
    holds. Written after `since`, written_since names it; older bytecode and hooks are not named."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "scorer.py").write_text("SCORE = 0.1\n")
    old_hook = root / "sitecustomize.py"
    old_hook.write_text("")
    py_compile.compile(str(root / "scorer.py"), doraise=True)  # honest bytecode, before the agent
    time.sleep(0.05)
    since = time.time()
    assert written_since(since, [str(root)]) == ([], [])
    cached = next((root / "__pycache__").glob("scorer.*.pyc"))
    header = cached.read_bytes()[:16]
    forged = root / "forged.py"
    forged.write_text("SCORE = 1.0\n")
    py_compile.compile(str(forged), cfile=str(tmp_path / "forged.pyc"), doraise=True)
    cached.write_bytes(header + (tmp_path / "forged.pyc").read_bytes()[16:])  # the source's header, other code
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("PYTHONPYCACHEPREFIX", None)
    read = [sys.executable, "-c", "import scorer; print(scorer.SCORE)"]
    assert subprocess.run(read, env=env, capture_output=True, text=True).stdout.strip() == "1.0"  # it ran
    assert (root / "scorer.py").read_text() == "SCORE = 0.1\n"  # its RECORD hash would still match
    bytecode, hooks = written_since(since, [str(root)])
    assert bytecode == [str(cached)] and hooks == []
    fresh = {**env, "PYTHONPYCACHEPREFIX": str(tmp_path / "fresh")}
    assert subprocess.run(read, env=fresh, capture_output=True, text=True).stdout.strip() == "0.1"
    old_hook.write_text("print('planted')\n")  # rewritten: its ctime moves, whatever its mtime says
    os.utime(old_hook, (since - 100, since - 100))
    assert written_since(since, [str(root)])[1] == [str(old_hook)]


def test_hooks_hidden_behind_a_broken_link_a_sourceless_file_or_a_linked_cache_folder_are_named(tmp_path):
    """The ways round a first version of the look: a dangling `.pth` link beside a live one (reading
    the folder must not stop at it), a sourceless sitecustomize.pyc (Python runs it), a `__pycache__`
    that is a link (Python reads through it), each written after `since`."""
    root, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    root.mkdir()
    (elsewhere / "pkg").mkdir(parents=True)
    (root / "pkg").mkdir()
    since = time.time() - 1
    (root / "aaa.pth").symlink_to(tmp_path / "missing")
    (root / "zzz.pth").write_text("import os\n")
    (root / "sitecustomize.pyc").write_bytes(b"")
    (root / "pkg" / "__pycache__").symlink_to(elsewhere / "pkg")
    bytecode, hooks = written_since(since, [str(root)])
    assert hooks == [str(root / n) for n in ("aaa.pth", "sitecustomize.pyc", "zzz.pth")]
    assert bytecode == [str(root / "pkg" / "__pycache__")]


@pytest.mark.parametrize("plant", ["hook", "bytecode"])
def test_what_the_agent_planted_in_the_harness_python_fails_the_trial_or_is_compiled_afresh(
    write_campaign, test_agents, tmp_path, plant
):
    """A startup hook fails the trial (it would run inside every check); bytecode only makes the
    harness's later processes compile from source, and the trial goes on to its result. The agent
    also rewrote agent/launch.json to claim bwrap: the runner goes by the campaign's sandbox."""
    folder = tmp_path / "on-path"
    folder.mkdir()
    path = write_campaign(CAMPAIGN.replace("@FOLDER@", str(folder)).replace("@PLANT@", plant))
    pythonpath = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH", "")]))
    env = {"PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"}  # the planted file is the only new bytecode
    run = ptbench("run", str(path), cwd=tmp_path, env=env)
    trial = tmp_path / "results" / "guard" / "python-planter__tiny__arithmetic__s0"
    assert (trial / "state.json").is_file(), run.stdout[-2000:] + run.stderr[-2000:]
    state = json.loads((trial / "state.json").read_text())
    events = [json.loads(line) for line in (trial / "events.jsonl").read_text().splitlines()]
    if plant == "hook":
        assert run.returncode != 0 and state["failure"]["kind"] == "harness_python_changed", run.stdout[-2000:]
        assert str(folder / "sitecustomize.py") in state["failure"]["message"]
        assert not any(e.get("event") == "bytecode_not_trusted" for e in events)
    else:
        result = json.loads((trial / "result.json").read_text())
        assert state["failure"] is None and result["status"] == "no_model"
        assert result["sandbox"] == "none" and result["sandbox_isolated"] is False  # not the forged launch.json
        (seen,) = [e for e in events if e.get("event") == "bytecode_not_trusted"]
        assert seen["first"] == [str(folder / "__pycache__" / "probe.cpython-311.pyc")]
