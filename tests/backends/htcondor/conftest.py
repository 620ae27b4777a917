"""Shared helpers for the HTCondor backend tests.

No HTCondor daemon can run on these machines (no package, no reachable source): descriptions are
checked with the real bindings (htcondor2 here; the v1 module of htcondor 24.x for the job ClassAds
the schedd would build), job logs are real-format files read by the real JobEventLog, and the
schedd itself is replaced by stand-in condor_submit / condor_q / condor_rm programs on PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"


def require(ok: bool, why: str) -> None:
    """In CI a missing real component fails the test; locally it skips."""
    if not ok:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(why)


def have_htcondor2() -> bool:
    try:
        import htcondor2  # noqa: F401  (only whether it imports)
    except ImportError:
        return False
    return True


@pytest.fixture
def htcondor2():
    require(have_htcondor2(), "the htcondor bindings are not installed (pip install 'ptbench[condor]')")
    import htcondor2 as mod

    return mod


@lru_cache(maxsize=1)
def v1_pythonpath() -> str | None:
    """A PYTHONPATH under which `import htcondor` gives the v1 module (htcondor 24.x), or None.

    htcondor 25.x ships only htcondor2; 24.x ships both. Looked up: the current environment,
    $PTBENCH_HTCONDOR24 (a `pip install --target` folder), then .cache/htcondor24 in the repo."""
    for extra in ("", os.environ.get("PTBENCH_HTCONDOR24", ""), str(REPO / ".cache" / "htcondor24")):
        if extra == "" or Path(extra).is_dir():
            env = dict(os.environ, PYTHONPATH=extra) if extra else dict(os.environ)
            probe = subprocess.run(
                [sys.executable, "-W", "ignore", "-c", "import htcondor; htcondor.Submit"],
                capture_output=True,
                env=env,
                timeout=120,
            )
            if probe.returncode == 0:
                return extra
    return None


@pytest.fixture
def v1_jobs():
    """Build the job ClassAds of a description offline (v1 Submit.jobs) in a subprocess."""
    path = v1_pythonpath()
    require(
        path is not None,
        "the v1 htcondor module (htcondor 24.x) is not available: "
        "pip install --target .cache/htcondor24 htcondor==24.12.24",
    )

    def run(description: Path, cluster: int = 1) -> list[dict]:
        env = dict(os.environ, PYTHONPATH=path) if path else dict(os.environ)
        proc = subprocess.run(
            [sys.executable, str(HERE / "v1_jobs.py"), str(description), str(cluster)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        data = json.loads(proc.stdout)
        assert data["version"].startswith("$CondorVersion: 24.")
        return data["jobs"]

    return run


def write_campaign(tmp_path: Path, name: str = "ct", **overrides) -> Path:
    """A small campaign file (real agents/tasks) with HTCondor options; overrides replace top-level keys."""
    (tmp_path / "tiny").mkdir(exist_ok=True)  # validate looks for a local base model's path
    data = {
        "name": name,
        "agents": [{"name": "base-model"}, {"name": "reference"}],
        "base_models": [{"id": "local/tiny-llama", "path": str(tmp_path / "tiny"), "label": "tiny-llama"}],
        "tasks": [{"name": "arithmetic", "options": {"digits": 2, "n_test": 20}}],
        "seeds": [0, 1],
        "budget": {
            "hours": 2,
            "gpus": 1,
            "gpu_type": "H100",
            "grace_seconds": 30,
            "eval_minutes": 30,
            "margin_minutes": 10,
        },
        "backend": {"name": "htcondor", "options": {"initialdir": str(tmp_path), "python": sys.executable}},
        "results_dir": str(tmp_path / "results"),
    }
    data.update(overrides)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def standin_bin(tmp_path: Path, *, cluster: int = 4242, submit_rc: int = 0, submit_err: str = "") -> Path:
    """Stand-in condor_submit / condor_q / condor_history / condor_rm that log their argv to calls.jsonl.

    condor_submit prints what the real one prints ("N job(s) submitted to cluster C.") after
    counting the rows of the description's `queue ... from` table, or fails with `submit_err`."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    calls = bindir / "calls.jsonl"
    common = f"""#!{sys.executable}
import json, os, sys
with open({str(calls)!r}, "a") as fh:
    fh.write(json.dumps({{"prog": os.path.basename(sys.argv[0]), "argv": sys.argv[1:]}}) + "\\n")
"""
    (bindir / "condor_submit").write_text(
        common
        + f"""
if {submit_rc}:
    sys.stderr.write({submit_err!r})
    sys.exit({submit_rc})
text = open(sys.argv[-1]).read()
rows = text.split(" from (\\n", 1)[1].split("\\n)")[0].splitlines() if " from (" in text else ["x"]
print("Submitting job(s)" + "." * len(rows))
print(f"{{len(rows)}} job(s) submitted to cluster {cluster}.")
"""
    )
    (bindir / "condor_rm").write_text(
        common
        + """
print("All jobs matching the given ids have been marked for removal.")
"""
    )
    table = bindir / "queue.tsv"  # what condor_q prints; tests write it
    (bindir / "condor_q").write_text(
        common
        + f"""
import pathlib
p = pathlib.Path({str(table)!r})
sys.stdout.write(p.read_text() if p.exists() else "")
"""
    )
    (bindir / "condor_history").write_text(common + "\n")
    for p in bindir.iterdir():
        p.chmod(0o755)
    return bindir


def read_calls(bindir: Path) -> list[dict]:
    path = bindir / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
