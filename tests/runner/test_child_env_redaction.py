"""What the harness itself writes is redacted, and the evaluation child gets no key it does not need.

Real pieces: a planned trial directory, the runner's own child-running code (`Runner._run_child`,
what the evaluate stage uses) with a real child process, the trial's event log, and the judge
client against a local endpoint that echoes the key in its error (the provider is the seam).
"""

from __future__ import annotations

import json
import sys

from aiohttp import web

from ptbench.runner.child_env import evaluation_env
from ptbench.runner.pipeline import Runner
from ptbench.trial import TrialDir
from tests.conftest import ptbench
from tests.servers import http_handler

CANARY = {"OPENAI_API_KEY": "sk-oai-canary-redact-5e1f0a", "SOME_SERVICE_TOKEN": "tok-canary-redact-77b2c9d1"}
CAMPAIGN = """
name: red
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
"""

CHILD = """
import os, sys
secrets = [bytes.fromhex(h).decode() for h in sys.argv[1:]]
print("env-leak" if any(v in os.environ.values() for v in secrets) else "env-clean", flush=True)
print("the model said:", secrets[0], "and", secrets[1], flush=True)  # what a hostile model config could make eval print
"""


def _trial(write_campaign, test_agents, tmp_path) -> TrialDir:
    path = write_campaign(CAMPAIGN)
    out = ptbench("plan", str(path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return TrialDir(next((tmp_path / "results" / "red").glob("*/trial.json")).parent)


def test_eval_child_gets_a_scrubbed_env_and_its_log_is_redacted(
    write_campaign, test_agents, tmp_path, monkeypatch
) -> None:
    trial = _trial(write_campaign, test_agents, tmp_path)
    for k, v in CANARY.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    trial.eval_dir.mkdir(parents=True, exist_ok=True)
    runner = Runner(trial)
    rc, tail = runner._run_child(
        [sys.executable, "-c", CHILD, *(v.encode().hex() for v in CANARY.values())], trial.eval_dir / "eval.log"
    )
    log = (trial.eval_dir / "eval.log").read_text()
    assert rc == 0 and "env-clean" in log, log
    assert "[REDACTED:OPENAI_API_KEY]" in log and "[REDACTED:SOME_SERVICE_TOKEN]" in log
    assert all(v not in log and v not in tail for v in CANARY.values())
    env = evaluation_env(trial, {**CANARY, "PATH": "/usr/bin", "HF_HUB_OFFLINE": "1", "PTBENCH_JUDGE_TOKEN": "x" * 20})
    assert "HF_HUB_OFFLINE" in env and "PATH" in env and not set(CANARY) & set(env) and "PTBENCH_JUDGE_TOKEN" not in env


def test_events_are_redacted(write_campaign, test_agents, tmp_path, monkeypatch) -> None:
    trial = _trial(write_campaign, test_agents, tmp_path)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", CANARY["SOME_SERVICE_TOKEN"])
    trial.event("failed", message=f"provider said: bad key {CANARY['SOME_SERVICE_TOKEN']}")
    text = trial.events_jsonl.read_text()
    assert CANARY["SOME_SERVICE_TOKEN"] not in text and "[REDACTED:SOME_SERVICE_TOKEN]" in text
    assert json.loads(text.splitlines()[-1])["event"] == "failed"


def test_judge_error_body_does_not_carry_the_key(tmp_path, monkeypatch) -> None:
    from ptbench.inference.judge import JudgeClient, JudgeConfig

    async def echo(request: web.Request) -> web.Response:
        return web.json_response(
            {"error": {"message": f"Incorrect API key provided: {request.headers['Authorization'][7:]}"}}, status=401
        )

    with http_handler(echo) as base:
        monkeypatch.setenv("OPENAI_API_KEY", CANARY["OPENAI_API_KEY"])
        config = JudgeConfig.from_options(
            {"judge_base_url": f"{base}/v1", "judge_cache_dir": str(tmp_path)}, default_model="gpt-5-mini"
        )
        reply = JudgeClient(config).complete_all([[{"role": "user", "content": "x"}]])[0]
    assert reply.error and reply.error.startswith("http_401") and "[REDACTED:OPENAI_API_KEY]" in reply.error
    assert CANARY["OPENAI_API_KEY"] not in reply.error
