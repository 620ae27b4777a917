"""Evaluation out of the agent's reach: the agent's evaluate.sh shows scores but writes no test
references into the workspace; the final evaluation uses the harness's cache and template; the
evaluating installation is checked against its distribution RECORD (a real dist-info on a
temporary sys.path entry, then one file changed)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys

import pytest

from ptbench.core.errors import UserError
from ptbench.runner.installation import check_distribution, verify_installation
from tests.conftest import ptbench

from .conftest import FIXTURES

CAMPAIGN = """
name: reach
agents: [{name: self-eval}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: gsm8k, options: @OPTIONS@}]
budget: {hours: 1, gpus: 0, eval_minutes: 10}
evaluation: {engine: transformers, batch_size: 4, limit: 2, chat_template: llama3}
results_dir: "@RESULTS@"
"""


@pytest.mark.slow
def test_agents_evaluate_sh_shows_scores_without_references(write_campaign, test_agents, tmp_path):
    options = {"data_path": str(FIXTURES / "gsm8k"), "max_new_tokens": 2}
    path = write_campaign(CAMPAIGN.replace("@OPTIONS@", json.dumps(options)))
    run = ptbench("run", str(path), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    trial = tmp_path / "results" / "reach" / "self-eval__tiny__gsm8k__s0"
    assert json.loads((trial / "result.json").read_text())["status"] == "completed"
    # The agent's run (its workspace moved final_model out; eval_runs stayed) has scores ...
    runs = list((trial / "workspace" / "eval_runs").iterdir())
    assert len(runs) == 1, (trial / "workspace" / "self_eval.log").read_text()
    metrics = json.loads((runs[0] / "metrics.json").read_text())
    assert metrics["primary"]["n"] == 2 and metrics["settings"]["chat_template"]["family"] == "llama3"
    # ... and no references: samples keep only ids, completions and scores.
    rows = [json.loads(line) for line in (runs[0] / "samples.jsonl").read_text().splitlines()]
    assert rows and all(set(r) == {"id", "completion", "finish_reason", "score"} for r in rows)
    # The harness's own evaluation keeps everything, outside the workspace.
    final = [json.loads(line) for line in (trial / "eval" / "samples.jsonl").read_text().splitlines()]
    assert all("reference" in r and "prompt" in r for r in final)
    caches = json.loads((trial / "result.json").read_text())["evaluation"]["caches"]
    assert caches["HF_HUB_CACHE"] == str((trial.parent / ".harness" / "eval-cache" / "hf-hub").resolve())


def test_harness_caches_are_what_huggingface_reads(tmp_path):
    """Test sets load through the harness-only HF caches, not the agent-writable shared one."""
    code = (
        "import sys; from ptbench.runner.eval_stage import use_harness_caches; use_harness_caches(sys.argv[1]); "
        "import huggingface_hub.constants as c, datasets.config as d; print(c.HF_HUB_CACHE); print(d.HF_DATASETS_CACHE)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "ec")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_CACHE": "/agent/writable/hub", "HF_DATASETS_CACHE": "/agent/writable/ds"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(tmp_path / "ec" / "hf-hub"), str(tmp_path / "ec" / "hf-datasets")]


def _fake_dist(root, name="ptbench_probe"):
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("SCORE = 1\n")
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    data = (pkg / "__init__.py").read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    (info / "RECORD").write_text(f"{name}/__init__.py,sha256={digest},{len(data)}\n{name}-1.0.dist-info/RECORD,,\n")
    return pkg


def test_installation_checked_against_record(tmp_path, monkeypatch):
    pkg = _fake_dist(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert check_distribution("ptbench_probe") == {
        "version": "1.0",
        "files": 1,
        "changed": [],
        "missing": [],
        "editable": False,
    }
    assert verify_installation(("ptbench_probe",)) == {"ptbench_probe": {"version": "1.0", "files_verified": 1}}
    (pkg / "__init__.py").write_text("SCORE = 100  # patched by an agent\n")
    with pytest.raises(UserError, match="ptbench_probe: ptbench_probe/__init__.py changed"):
        verify_installation(("ptbench_probe",))
    (pkg / "__init__.py").unlink()
    assert check_distribution("ptbench_probe")["missing"] == ["ptbench_probe/__init__.py"]
    assert check_distribution("no-such-distribution") is None


def _verify(cache_file):
    return verify_installation(("ptbench_probe",), cache_file=cache_file)


def test_the_hash_cache_is_reused_only_while_a_file_is_untouched(tmp_path, monkeypatch):
    """The honest control reuses its hashes; a file rewritten in place with its size and mtime
    restored (os.utime, as an agent covering its tracks would) is hashed afresh and refused: its
    ctime moved, which no unprivileged process can set back."""
    pkg = _fake_dist(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    cache_file = tmp_path / "eval-cache" / "install-hashes.json"
    first = _verify(cache_file)
    assert first["ptbench_probe"]["files_verified"] == 1
    assert first["hash_cache"] == {"file": str(cache_file), "reused": 0, "note": "empty: first use"}
    assert cache_file.stat().st_mode & 0o777 == 0o600
    assert _verify(cache_file)["hash_cache"]["reused"] == 1  # untouched: not hashed again
    target = pkg / "__init__.py"
    before = target.stat()
    with open(target, "r+b") as fh:  # same inode, same size
        fh.write(b"SCORE = 9\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    with pytest.raises(UserError, match="ptbench_probe/__init__.py changed"):
        _verify(cache_file)
    with pytest.raises(UserError, match="ptbench_probe/__init__.py changed"):  # and on every later run
        _verify(cache_file)


@pytest.mark.parametrize("how", ["writable by others", "not a regular file"])
def test_a_hash_cache_another_could_write_is_not_read(tmp_path, monkeypatch, how):
    """A poisoned cache (the tampered file's exact identity with the RECORD's hash) is never read
    unless it is a regular file of this user that no one else can write: the tamper is found."""
    pkg = _fake_dist(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    target = pkg / "__init__.py"
    record = (tmp_path / "ptbench_probe-1.0.dist-info" / "RECORD").read_text().split(",")[1].removeprefix("sha256=")
    target.write_text("SCORE = 9\n")
    st = target.stat()
    identity = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    poison = json.dumps({"format": 1, "files": {str(target): [*identity, record]}})
    cache_file = tmp_path / "install-hashes.json"
    if how == "not a regular file":
        (tmp_path / "elsewhere.json").write_text(poison)
        cache_file.symlink_to(tmp_path / "elsewhere.json")
    else:
        cache_file.write_text(poison)
        cache_file.chmod(0o664)
    with pytest.raises(UserError, match="ptbench_probe/__init__.py changed"):
        _verify(cache_file)
    # The control: the same poison where only this user can write it IS read (so the refusals above
    # are what kept it out): the place is what protects the cache, runner/eval_stage.py.
    trusted = tmp_path / "trusted.json"
    trusted.write_text(poison)
    trusted.chmod(0o600)
    assert _verify(trusted)["hash_cache"]["reused"] == 1


def test_the_runner_keeps_the_hash_cache_only_out_of_the_agents_reach(tmp_path):
    """--install-cache is given under an isolating sandbox, never under sandbox: none (the agent runs
    as the runner's user) nor where a sandbox option binds the evaluation cache into the sandbox."""
    from ptbench.runner.eval_stage import INSTALL_HASHES, evaluation_argv
    from tests.integrity.conftest import make_trial

    trial = make_trial(tmp_path, task="arithmetic", options={"n_test": 4})

    def argv(**spec):
        trial.trial_json.write_text(trial.spec.model_copy(update=spec).model_dump_json())
        return evaluation_argv(type(trial)(trial.path), sys.executable)

    hashes = str(trial.eval_cache / INSTALL_HASHES)
    assert argv(sandbox="bwrap")[-2:] == ["--install-cache", hashes]
    assert "--install-cache" not in argv(sandbox="none")
    bound = argv(sandbox="bwrap", sandbox_options={"binds": [f"{trial.eval_cache.parent}:/data"]})
    assert "--install-cache" not in bound
