"""The four real CLIs reach their model only through the trial's gateway, and never hold the real key.

Nothing is mocked: `ptbench run` plans the campaign, the local backend starts `ptbench trial run`,
the runner starts the gateway in its own process and the real CLI in bwrap with a trial token. The
scripted provider plays the real upstream; the canary values are the "real" keys. The scripted
model makes each CLI run a spy (tests/agents/spy/spy.py) that searches every process's environment
and command line and every file it can see for the canaries.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ptbench.core.files import read_jsonl
from ptbench.runner.cache_layer import overlay_problem
from ptbench.trial import TrialDir
from tests.agents.test_agents_real_trials import CANARIES, MODELS, _require_clis
from tests.support import assert_run_exit, require

SPY = Path(__file__).resolve().parents[1] / "agents" / "spy"


def _run(tmp_path: Path, tiny: Path, agents: list[dict], **extra) -> subprocess.CompletedProcess:
    require(shutil.which("bwrap") is not None, "bwrap is not installed: apt-get install bubblewrap")
    data = {
        "name": "gw",
        "agents": agents,
        "base_models": [{"id": "local/tiny", "path": str(tiny), "label": "tiny"}],
        "tasks": [{"name": "arithmetic", "options": {"digits": 2, "n_test": 20}}],
        "budget": {"hours": 0.1, "gpus": 0, "grace_seconds": 5},
        "results_dir": str(tmp_path / "results"),
        "parallelism": 2,
        "sandbox": "bwrap",
        "sandbox_options": {"read_only": [str(SPY)]},
        **extra,
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(data))
    # A .env beside the campaign, as a user keeps keys: the runner reads it, the agent must not.
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in CANARIES.items()))
    env = {**os.environ, **CANARIES}
    return subprocess.run(
        [sys.executable, "-m", "ptbench", "run", str(tmp_path / "campaign.yaml")],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
    )


def _trials(tmp_path: Path) -> dict[str, TrialDir]:
    return {
        TrialDir(p.parent).spec.agent.name: TrialDir(p.parent)
        for p in (tmp_path / "results" / "gw").glob("*/trial.json")
    }


def _no_canary_under(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            for v in CANARIES.values():
                assert v.encode() not in data, f"the real key leaked into {path}"


def _tool_outputs(trial: TrialDir) -> list[str]:
    traj = json.loads((trial.agent_dir / "trajectory.json").read_text())
    return [s["tool_call"].get("output") or "" for s in traj["steps"] if s["kind"] == "tool_call"]


@pytest.mark.slow
@pytest.mark.integration
def test_four_clis_through_the_gateway_never_see_the_key(tmp_path: Path, tiny_model: Path, scripted_provider) -> None:
    _require_clis(MODELS)
    spy = f"{sys.executable} {SPY}/spy.py {tmp_path} {' '.join(v.encode().hex() for v in CANARIES.values())}"
    listener = socket.socket()  # a port open on the host's loopback: out of reach of a network: gateway sandbox
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    reach = (
        f'{sys.executable} -c "import socket; s = socket.socket(); s.settimeout(3); '
        f"print('HOST-PORT', s.connect_ex(('127.0.0.1', {listener.getsockname()[1]})))\""
    )
    provider = scripted_provider(
        [
            {"shell": spy},
            {
                "shell": (
                    "echo token=${#ANTHROPIC_API_KEY}${#OPENAI_API_KEY}${#GEMINI_API_KEY} "
                    "offline=${HF_HUB_OFFLINE:-unset}"
                )
            },
            {"shell": reach},
            {"message": "done"},
        ]
    )
    agents = [{"name": n, "model": m, "options": {"base_url": provider.base_url}} for n, m in MODELS.items()]
    try:
        out = _run(tmp_path, tiny_model, agents)
    finally:
        listener.close()
    assert_run_exit(out, tmp_path / "results")
    trials = _trials(tmp_path)
    assert sorted(trials) == sorted(MODELS)
    layer_mode = "overlay" if overlay_problem() is None else "read-only"
    for name, trial in trials.items():
        log = (trial.agent_dir / "native.log").read_text()[-3000:]
        outputs = _tool_outputs(trial)
        assert outputs and outputs[0].startswith("SPY-CLEAN"), (name, outputs, log)
        assert "procs=" in outputs[0] and "procs=0 " not in outputs[0], (name, outputs[0])  # it did look at /proc
        launch = json.loads((trial.agent_dir / "launch.json").read_text())
        assert launch["sandbox"] == "bwrap"
        # every CLI completed with loopback only, the gateway through the bridge; the host's port stayed out of reach
        assert launch["network"] == "gateway", launch
        assert launch["hf_cache"] is None or launch["hf_cache"]["mode"] == layer_mode
        assert any("offline=1" in o for o in outputs), (name, outputs)  # no route to the Hub: the HF libraries are told
        reached = [o for o in outputs if "HOST-PORT" in o]
        assert reached and "HOST-PORT 0" not in reached[0], (name, outputs)
        calls = read_jsonl(trial.agent_dir / "calls.jsonl")
        model_calls = [c for c in calls if c["api"] in ("anthropic", "responses", "chat", "gemini")]
        played = [
            r
            for r in provider.requests
            if r["reply"]
            and r["reply"]["role"] == "script"
            and r["api"]
            == {"claude-code": "anthropic", "codex": "responses", "gemini-cli": "gemini", "opencode": "chat"}[name]
            and r["body"].get("model", MODELS[name]) in (MODELS[name], None)
        ]
        assert len(model_calls) >= 3, (name, calls)
        ok = [c for c in model_calls if c["status"] == 200]
        assert all(c["input_tokens"] > 0 and c["output_tokens"] > 0 and c["usage_reported"] for c in ok), (name, ok)
        assert all(c["cost_usd"] > 0 for c in ok if c["model"] != "scripted"), (name, ok)
        usage = json.loads((trial.agent_dir / "usage.json").read_text())
        assert (
            usage["source"] == "gateway"
            and usage["calls"] == len(calls)
            and usage["input_tokens"] == sum(c["input_tokens"] for c in calls)
        )
        result = trial.read_result()
        assert result["usage"]["source"] == "gateway", result["usage"]
        assert result["network"] == "gateway" and result["hf_cache"] in (None, layer_mode), result
        assert played, name
        # the transcript: each format's replies put back together (tool-call arguments from their
        # stream fragments, the final text), no token in it, outside what the sandbox sees
        transcript = trial.path / "record" / "transcript.jsonl"
        assert not re.search(rb"ptb-trial-[\w-]{8}", transcript.read_bytes()), name
        lines = read_jsonl(transcript)
        replies = [r for r in lines if r["dir"] == "response" and r["status"] == 200]
        args = " ".join(c["arguments"] for r in replies for c in r["tool_calls"])
        assert "offline=${HF_HUB_OFFLINE:-unset}" in args.replace("\\", ""), (name, args[:2000])
        assert any("done" in r["text"] for r in replies), (name, replies[-2:])
        asked = {r["call"] for r in lines if r["dir"] == "request"}
        assert {r["call"] for r in lines if r["dir"] == "response"} <= asked, name
    # every upstream request came from a gateway: the provider saw the real (canary) key, never a trial token
    seen = json.dumps([r["headers"] for r in provider.requests])
    assert "ptb-trial-" not in seen
    _no_canary_under(tmp_path / "results")


@pytest.mark.slow
@pytest.mark.integration
def test_cost_cap_stops_the_agent_and_other_models_are_refused(
    tmp_path: Path, tiny_model: Path, scripted_provider
) -> None:
    _require_clis(["claude-code"])
    provider = scripted_provider(
        [
            {"shell": f"{sys.executable} {SPY}/probe.py claude-opus-4-1"},  # a dearer model than the one it was given
            {"shell": "echo second"},
            {"message": "unreachable: the cap was spent by then"},
        ]
    )
    agents = [
        {
            "name": "claude-code",
            "model": "claude-sonnet-4-5",
            "options": {"base_url": provider.base_url, "cost_cap_usd": 0.000001, "max_retries": 0},
        }
    ]
    out = _run(tmp_path, tiny_model, agents)
    assert_run_exit(out, tmp_path / "results")
    trial = _trials(tmp_path)["claude-code"]
    outputs = _tool_outputs(trial)
    assert outputs and outputs[0].startswith("PROBE 403") and "not allowed" in outputs[0], outputs
    calls = read_jsonl(trial.agent_dir / "calls.jsonl")
    assert any(c.get("refused") == "model not allowed" and c["model"] == "claude-opus-4-1" for c in calls), calls
    assert any(c.get("refused") == "ptbench_cost_cap" for c in calls), calls
    assert not any(r["body"].get("model") == "claude-opus-4-1" for r in provider.requests)  # never forwarded
    result = trial.read_result()
    assert result["failure"]["kind"] == "cost_cap", result["failure"]
    events = [json.loads(line)["event"] for line in trial.events_jsonl.read_text().splitlines()]
    assert "cost_cap" in events
    _no_canary_under(tmp_path / "results")
