"""The solve stage reads the trial gateway through TrialGateway's own methods (no reach into the
gateway's routes): the cost-cap failure and the judge route's variables, on a real gateway."""

from __future__ import annotations

from pathlib import Path

from ptbench.gateway import Gateway, Upstream, gateway_in_thread, new_trial_token
from ptbench.inference.judge import JUDGE_GATEWAY_ENV, JUDGE_TOKEN_ENV
from ptbench.launch.trial_gateway import TrialGateway
from tests.gateway.test_server import REAL, _post


def test_the_cost_cap_message_appears_once_the_cap_is_spent(tmp_path: Path, scripted_provider) -> None:
    provider = scripted_provider([{"message": "hello"}, {"message": "never sent"}])
    token = new_trial_token()
    agent = Upstream("agent", provider.base_url + "/v1", REAL, models={"gpt-5-mini": "gpt-5-mini"}, cost_cap_usd=1e-9)
    with gateway_in_thread(Gateway(token, agent, calls_path=tmp_path / "calls.jsonl")) as gw:
        trial_gw = TrialGateway(gw, token, {"agent": REAL})
        assert trial_gw.cost_cap_message() is None  # nothing spent yet
        body = {"model": "gpt-5-mini", "messages": [{"role": "user", "content": "hi"}]}
        headers = {"authorization": f"Bearer {token}"}
        assert _post(f"{gw.base_url}/chat/completions", body, headers)[0] == 200
        status, _ = _post(f"{gw.base_url}/chat/completions", body, headers)
        assert status == 403
        message = trial_gw.cost_cap_message()
        totals = trial_gw.totals()["agent"]
    assert message is not None and "cost cap of $1e-09 is spent" in message, message
    assert f"(${totals['cost_usd']:.4f})" in message and totals["calls"] >= 1


def test_the_judge_variables_only_with_a_judge_route() -> None:
    token = new_trial_token()
    agent = Upstream("agent", "http://127.0.0.1:9", REAL)
    plain = TrialGateway(Gateway(token, agent), token, {})
    assert plain.agent_env() == {}  # no judge route: no variable pointing at one
    judged = TrialGateway(Gateway(token, agent, judge=Upstream("judge", "http://127.0.0.1:9", REAL)), token, {})
    judged.gateway.base_url = "http://127.0.0.1:4321"  # what gateway_in_thread sets once it listens
    assert judged.agent_env() == {JUDGE_GATEWAY_ENV: "http://127.0.0.1:4321/judge", JUDGE_TOKEN_ENV: token}
