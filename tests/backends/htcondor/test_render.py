"""Rendered HTCondor descriptions, checked by the real parsers.

No schedd runs here (see conftest): htcondor2.Submit parses every description and expands its
`queue ... from` table; the v1 module of htcondor 24.x builds the job ClassAds the schedd would see.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ptbench.backends import get_backend
from ptbench.backends.htcondor.options import HTCondorOptions
from ptbench.backends.htcondor.render import render_shards, render_trials
from ptbench.core.errors import UserError
from ptbench.plan import expand
from ptbench.spec import load_campaign

from .conftest import GOLDEN, REPO, write_campaign

CANARY = "sk-ant-canary-0123456789abcdef"


def _paper(tmp_path: Path, **options):
    c = load_campaign(REPO / "campaigns" / "paper.yaml")
    opts = {**c.backend.options, "initialdir": str(tmp_path), **options}
    return c.model_copy(update={"results_dir": str(tmp_path / "results")}), opts


def test_paper_campaign_renders_336_rows_the_real_parser_accepts(tmp_path: Path, htcondor2, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY + "-openai")
    (tmp_path / ".env").write_text("GEMINI_API_KEY=gm-canary-abcdef123456\n")
    c, opts = _paper(tmp_path)
    out = get_backend("htcondor", opts).render(c, expand(c), str(tmp_path / "paper.sub"))
    text = Path(out).read_text()
    assert CANARY not in text and "gm-canary" not in text
    sub = htcondor2.Submit(text)
    rows = list(sub.itemdata())
    assert len(rows) == 336
    assert len({r["trial_id"] for r in rows}) == 336
    assert {r["agent"] for r in rows} == {"claude-code", "codex", "gemini-cli", "opencode"}
    assert {r["base_model"] for r in rows} == {
        "Qwen/Qwen3-1.7B-Base",
        "Qwen/Qwen3-4B-Base",
        "HuggingFaceTB/SmolLM3-3B-Base",
        "google/gemma-3-4b-pt",
    }
    assert {r["task"] for r in rows} == {
        "gsm8k",
        "aime2025",
        "gpqa",
        "humaneval",
        "bfcl",
        "arena_hard_writing",
        "healthbench_easy",
    }
    assert {r["seed"] for r in rows} == {"0", "1", "2"}
    limits = {r["agent"]: r["api_limit"] for r in rows}
    assert limits == {
        "claude-code": "ptbench_anthropic",
        "codex": "ptbench_openai",
        "gemini-cli": "ptbench_google",
        "opencode": "ptbench_anthropic",
    }
    assert sub["allowed_job_duration"] == str(c.budget.scheduler_minutes * 60) == "42360"
    assert sub["request_gpus"] == "1" and sub["requirements"] == '(TARGET.CUDADeviceName == "NVIDIA H100 80GB HBM3")'
    assert sub["transfer_container"] == "false" and sub["container_image"] == "/shared/containers/ptbench.sif"
    assert sub["retry_until"] == "ExitCode != 75" and sub["max_retries"] == "4"
    assert sub["MY.ProjectName"] == '"ptbench"'


def test_render_cli_writes_the_description_without_submitting(tmp_path: Path, htcondor2) -> None:
    path = write_campaign(tmp_path)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    proc = subprocess.run(
        [sys.executable, "-m", "ptbench", "render", str(path), "--backend", "htcondor"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = Path(proc.stdout.strip())
    assert out == tmp_path / "results" / "ct" / "submit" / "htcondor.sub"
    rows = list(htcondor2.Submit(out.read_text()).itemdata())
    assert [r["trial_id"] for r in rows] == [s.trial_id for s in expand(load_campaign(path))]
    assert not (tmp_path / "results" / "ct" / "jobs.json").exists()


def test_job_ads_carry_requirements_gpus_duration_and_container(tmp_path: Path, v1_jobs) -> None:
    c, opts = _paper(tmp_path)
    out = get_backend("htcondor", opts).render(c, expand(c), str(tmp_path / "paper.sub"))
    jobs = v1_jobs(Path(out), cluster=77)
    assert len(jobs) == 336 and [j["ProcId"] for j in jobs] == list(range(336))
    first = jobs[0]
    assert 'TARGET.CUDADeviceName == "NVIDIA H100 80GB HBM3"' in first["Requirements"]
    assert "TARGET.HasContainer" in first["Requirements"] and "TARGET.GPUs >= RequestGPUs" in first["Requirements"]
    assert first["RequestGPUs"] == 1 and first["RequestCpus"] == 16
    assert first["RequestMemory"] == 128 * 1024 and first["RequestDisk"] == 400 * 1024 * 1024
    assert first["AllowedJobDuration"] == 42360
    assert (
        first["WantContainer"] is True
        and first["ContainerImage"] == "/shared/containers/ptbench.sif"
        and first["TransferContainer"] is False
    )
    assert first["KillSig"] == "SIGTERM" and first["JobMaxVacateTime"] == 180
    assert first["JobMaxRetries"] == 4 and "ExitCode != 75" in first["OnExitRemove"]
    assert first["ShouldTransferFiles"] == "NO" and first["TransferExecutable"] is False
    assert first["Cmd"] == "/shared/ptbench/.venv/bin/python"
    assert first["Environment"] == "PTBENCH_BACKEND=htcondor PTBENCH_JOB_ID=77.0 PYTHONUNBUFFERED=1"
    assert first["AcctGroup"] == "group_llm.ptbench" and first["ProjectName"] == "ptbench"
    by_trial = {j["PtbenchTrial"]: j for j in jobs}
    j = by_trial["codex__gemma-3-4b-pt__bfcl__s2"]
    assert j["Arguments"] == f"-m ptbench trial run {tmp_path}/results/paper/codex__gemma-3-4b-pt__bfcl__s2"
    assert j["ConcurrencyLimits"] == "ptbench_openai" and j["PtbenchSeed"] == 2
    assert j["SubmitEventNotes"] == "ptbench trial codex__gemma-3-4b-pt__bfcl__s2"
    assert j["Out"].endswith(f"/condor/codex__gemma-3-4b-pt__bfcl__s2.77.{j['ProcId']}.out")
    assert all(CANARY not in str(v) for job in jobs for v in job.values())


def test_capability_match_and_keyless_agents(tmp_path: Path, v1_jobs, htcondor2) -> None:
    path = write_campaign(
        tmp_path,
        backend={
            "name": "htcondor",
            "options": {
                "initialdir": str(tmp_path),
                "python": sys.executable,
                "gpu_match": "capability",
                "requirements": "TARGET.OpSysMajorVer >= 9",
            },
        },
    )
    c = load_campaign(path)
    text = render_trials(c, expand(c), HTCondorOptions(**c.backend.options)).text
    sub = htcondor2.Submit(text)
    assert sub["require_gpus"] == "Capability >= 9.0 && GlobalMemoryMb >= 80000"
    assert {r["api_limit"] for r in sub.itemdata()} == {""}  # base-model and reference use no API
    (tmp_path / "d.sub").write_text(text)
    job = v1_jobs(tmp_path / "d.sub")[0]
    assert "GlobalMemoryMb >= 80000" in job["RequireGPUs"] and "(TARGET.OpSysMajorVer >= 9)" in job["Requirements"]
    assert "CUDADeviceName" not in job["Requirements"] and "ConcurrencyLimits" not in job


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("PTBENCH_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; review the diff and rerun with PTBENCH_UPDATE_GOLDEN=1"


def test_golden_trials_description(tmp_path: Path, htcondor2, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = yaml.safe_load((GOLDEN / "campaign.yaml").read_text())
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(data))
    c = load_campaign(path)
    text = render_trials(c, expand(c), HTCondorOptions(**c.backend.options)).text
    _golden("trials.sub", text)
    assert len(list(htcondor2.Submit(text).itemdata())) == 4


def test_golden_bootcamp_shards_description(htcondor2, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    opts = HTCondorOptions(
        python="/shared/ptbench/.venv/bin/python", initialdir="/shared/ptbench", accounting_group="group_llm"
    )
    text = render_shards(Path("/shared/ptbench/results/bootcamp/sql/rollout-test"), 8, opts, name="rollout-test")
    _golden("shards.sub", text)
    sub = htcondor2.Submit(text)
    assert sub.getQArgs().strip() == "8"
    assert (
        sub["arguments"] == "\"-m ptbench bootcamp rollout-shard '/shared/ptbench/results/bootcamp/sql/rollout-test' "
        '--shard $(Process)/8"'
    )


def test_bootcamp_shards_use_the_shared_template(tmp_path: Path, htcondor2) -> None:
    from ptbench.rollout_launcher.htcondor import shards_description as condor_submit_description

    sub = htcondor2.Submit(condor_submit_description(tmp_path, 4))
    assert sub["executable"] == sys.executable and "$(Process)/4" in sub["arguments"] and sub["max_retries"] == "3"


# ---- bad input: one clear error, nothing written ------------------------------------------------
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"budget": {"hours": 1, "gpus": 1, "gpu_type": "H1000"}}, "budget.gpu_type 'H1000': unknown GPU type"),
        (
            {"backend": {"name": "htcondor", "options": {"request_memory": "128GiB"}}},
            "backend.options.request_memory: '128GiB' is not a size",
        ),
        (
            {"backend": {"name": "htcondor", "options": {"request_disk": "400"}}},
            "backend.options.request_disk: '400' is not a size",
        ),
        ({"backend": {"name": "htcondor", "options": {"request_memory": "-5GB"}}}, "request_memory: '-5GB'"),
        (
            {"backend": {"name": "htcondor", "options": {"gpu_typo": "H100"}}},
            "backend.options.gpu_typo: 'gpu_typo' is not an HTCondor option",
        ),
        (
            {"backend": {"name": "htcondor", "options": {"environment": {"OPENAI_API_KEY": "x"}}}},
            "secrets never go into a submit file",
        ),
        (
            {"backend": {"name": "htcondor", "options": {"submit_lines": {"arguments": "x"}}}},
            "'arguments' is written by ptbench",
        ),
        (
            {"backend": {"name": "htcondor", "options": {"api_limit_names": {"openai": "a,b"}}}},
            "is not a concurrency limit",
        ),
        (
            {"base_models": [{"id": "Qwen/Qwen3,1.7B", "label": "q"}]},
            "contains a comma, which would break HTCondor's `queue from` table",
        ),
        ({"base_models": [{"id": 'Qwen/"quoted"', "label": "q"}]}, "contains a quote"),
        (
            {"base_models": [{"id": "Qwen/x", "path": "/models/my model", "path_on_nodes": True, "label": "q"}]},
            "contains a space",
        ),
        ({"base_models": [{"id": "Qwen/x\ny", "label": "q"}]}, "contains a newline"),
    ],
)
def test_bad_input_is_one_error_before_anything_is_written(tmp_path: Path, change: dict, message: str) -> None:
    path = write_campaign(tmp_path, **change)
    out = tmp_path / "out" / "x.sub"
    proc = subprocess.run(
        [sys.executable, "-m", "ptbench", "render", str(path), "--backend", "htcondor", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert not out.exists() and not (tmp_path / "results").exists()


def test_a_secret_put_into_site_lines_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    path = write_campaign(
        tmp_path,
        backend={
            "name": "htcondor",
            "options": {"initialdir": str(tmp_path), "submit_lines": {"+Note": f'"{CANARY}"'}},
        },
    )
    c = load_campaign(path)
    with pytest.raises(UserError, match="would contain the value of ANTHROPIC_API_KEY") as exc:
        get_backend("htcondor", c.backend.options).render(c, expand(c), str(tmp_path / "x.sub"))
    assert CANARY not in str(exc.value)
    assert not (tmp_path / "x.sub").exists()
