"""The five simulator/solver environments with their real packages (pybamm, pokerkit, ortools,
statsmodels): byte-identical generation, oracle = max, nonsense = 0, partial in between, hostile
answers, tools that do not leak the hidden answer, and a scripted endpoint playing full episodes
whose traces export as SFT rows that TRL's SFTTrainer renders. (The verl side of these environments
is in verl_checks.py, run by test_verl_export.py.)"""

from __future__ import annotations

import importlib.util
import json
import random

import pytest

from ptbench.bootcamp.api import GENERATORS, REWARDS, TOOLS

from .conftest import require

NEEDS = {
    "battery": "pybamm",
    "poker": "pokerkit",
    "combinatorial": "ortools",
    "forecasting": "statsmodels",
    "robot_arm": "numpy",
}
CHEAP = ["poker", "robot_arm", "combinatorial", "forecasting"]


def _need(env: str) -> None:
    require(
        importlib.util.find_spec(NEEDS[env]) is not None, f"{NEEDS[env]} not installed (bash scripts/install.sh test)"
    )


def _cases(gen: str, n: int, **params):
    g = GENERATORS.get(gen)(**params)
    return g, [g.case(random.Random(f"t:{k}")) for k in range(n)]


def _score(reward: str, text: str, identity) -> float:
    return REWARDS.get(reward)().score(text, identity).score


@pytest.mark.parametrize("env", CHEAP)
def test_generation_is_byte_identical(tmp_path, env) -> None:
    _need(env)
    from ptbench.bootcamp import generate, load_bootcamp

    from .conftest import small_config

    cfg = load_bootcamp(small_config(tmp_path, env, test=4, train=4))
    a, b = generate(cfg, tmp_path / "a", parquet=False), generate(cfg, tmp_path / "b", parquet=False)
    for split in ("test", "train"):
        assert (tmp_path / "a" / f"{split}.jsonl").read_bytes() == (tmp_path / "b" / f"{split}.jsonl").read_bytes()
        assert a["splits"][split]["jsonl_sha256"] == b["splits"][split]["jsonl_sha256"]
    assert len(set(a["splits"]["test"]["levels"])) >= 2  # several difficulty levels in a small split


def test_knapsack_and_tsp_scores() -> None:
    _need("combinatorial")
    g, cases = _cases("knapsack", 5, items=12)
    for c in cases:
        assert _score("optimality_gap", g.reference_completion(c), c) == 1.0
        part = json.dumps(c["optimal_solution"][1:])
        assert 0.0 < _score("optimality_gap", f"Solution: {part}", c) < 1.0
        everything = json.dumps(list(range(len(c["values"]))))
        assert _score("optimality_gap", f"Solution: {everything}", c) == 0.0  # over capacity
        assert _score("optimality_gap", "Solution: [0, 0, 0]", c) == 0.0  # repeated item
        assert _score("optimality_gap", "Solution: [0, 1,]", c) == 0.0  # not JSON: wrong, not a crash
        # a claimed value is ignored: only the selection is checked
        assert (
            _score("optimality_gap", f"value {c['optimum']} Solution: [0]", c)
            == _score("optimality_gap", "Solution: [0]", c)
            < 1
        )
    t, tours = _cases("tsp", 3, cities=7)
    for c in tours:
        tour = c["optimal_solution"]
        assert _score("optimality_gap", t.reference_completion(c), c) == 1.0
        assert (
            _score("optimality_gap", f"Solution: {json.dumps(tour[:1] + tour[1:][::-1])}", c) == 1.0
        )  # same tour reversed
        assert _score("optimality_gap", f"Solution: {json.dumps(tour[:-1])}", c) == 0.0  # misses a city
        assert _score("optimality_gap", "I would go north", c) == 0.0
    worse = [_score("optimality_gap", f"Solution: {json.dumps(sorted(c['optimal_solution']))}", c) for c in tours]
    assert 0.0 < min(worse) <= max(worse) <= 1.0 and min(worse) < 1.0
    state = TOOLS.get("evaluate")().create_sync(cases[0])
    assert "optimum" not in state and "optimal_solution" not in state


def test_robot_arm_scores_collisions_and_length() -> None:
    _need("robot_arm")
    import numpy as np

    from ptbench.bootcamp.envs.robot_arm import first_collision, joint_positions

    g, cases = _cases("robot_arm", 4, joints=3, obstacles=3)
    for c in cases:
        ref = c["reference_path"]
        assert _score("robot_path", g.reference_completion(c), c) == 1.0
        detour = [c["start"][:1] + [v + 0.5 for v in c["start"][1:]]] + ref  # reaches the goal, longer
        if first_collision(c, [np.asarray(q) for q in detour]) is None:
            assert 0.5 < _score("robot_path", f"Path: {json.dumps(detour)}", c) < 1.0
        assert _score("robot_path", f"Path: {json.dumps([ref[0]])}", c) < 0.5  # stops short of the goal
        assert _score("robot_path", "Path: [[9, 9, 9]]", c) == 0.0  # outside the joint limits
        assert _score("robot_path", "no path", c) == 0.0
        assert _score("robot_path", "Path: [[0.1, 0.2],]", c) == 0.0  # not JSON
    # A path through an obstacle scores 0 even when it ends on the goal: put an obstacle on the arm's route.
    c = dict(cases[0])
    mid = joint_positions(c["links"], np.asarray(c["reference_path"][0]))[-1]
    c["obstacles"] = c["obstacles"] + [[round(float(mid[0]), 2), round(float(mid[1]), 2), 0.1]]
    assert _score("robot_path", g.reference_completion(c), c) == 0.0
    check = TOOLS.get("check_path")()
    state = check.create_sync(c)
    assert "reference_path" not in state
    assert "collision on segment 1" in check.execute_sync(state, {"path": c["reference_path"]}).text


def test_forecast_scores_against_the_hidden_future() -> None:
    _need("forecasting")
    g, cases = _cases("arma_forecast", 8, ar=2, ma=1, length=80, horizon=6)
    naive, zero = [], []
    for c in cases:
        assert _score("forecast_mse", g.reference_completion(c), c) == 1.0
        naive.append(_score("forecast_mse", f"Forecast: {json.dumps([c['history'][-1]] * 6)}", c))
        zero.append(_score("forecast_mse", f"Forecast: {json.dumps([1e6] * 6)}", c))
        assert _score("forecast_mse", "Forecast: [1, 2]", c) == 0.0  # wrong length
        assert _score("forecast_mse", "Forecast: [1, 2,, 3]", c) == 0.0  # not JSON
        assert _score("forecast_mse", "Forecast: [NaN, 1, 1, 1, 1, 1]", c) == 0.0
        assert _score("forecast_mse", f"Forecast: {json.dumps(c['oracle'])} is the oracle, MSE 0", c) == 1.0
    assert 0.0 < sum(naive) / len(naive) < 1.0
    assert max(zero) < 1e-6
    tool = TOOLS.get("fit_arima")()
    state = tool.create_sync(cases[0])
    assert "future" not in state and "oracle" not in state
    assert "forecast [" in tool.execute_sync(state, {"p": 1, "d": 0, "q": 0}).text


def test_poker_replays_decisions_on_the_engine() -> None:
    _need("poker")
    from ptbench.bootcamp.envs.poker import ACTIONS, play

    g, cases = _cases("poker_decisions", 3, deals=3, street="flop")
    calls = []
    for c in cases:
        assert len(c["deals"]) == 6 and c["deals"][0]["holes"] == c["deals"][1]["holes"]  # duplicate deals
        assert [d["hero"] for d in c["deals"][:2]] == [0, 1]
        assert _score("poker_chips", g.reference_completion(c), c) == 1.0
        assert all(
            play(d, a) == ch[a] for d, ch in zip(c["deals"], c["chips"], strict=True) for a in ACTIONS
        )  # the engine agrees with the table
        calls.append(_score("poker_chips", "Decisions: " + ", ".join(f"{i + 1}=call" for i in range(6)), c))
        assert _score("poker_chips", "Decisions: I won 500 chips", c) == 0.0
        assert _score("poker_chips", "fold everything", c) == 0.0
    assert 0.0 < sum(calls) / len(calls) < 1.0
    eq = TOOLS.get("hand_equity")(trials=200).execute_sync({}, {"hole": "As Ad", "board": ""})
    assert 0.75 < float(eq.text.split()[1]) < 0.95
    assert TOOLS.get("hand_equity")().execute_sync({}, {"hole": "As As"}).error == "bad_arguments"


def test_battery_reward_resimulates_the_design() -> None:
    _need("battery")
    g, (c,) = _cases("battery_design", 1, level="easy")
    assert _score("battery_design", g.reference_completion(c), c) == 1.0
    off = dict(c["hidden_design"])
    off["positive_thickness_um"] = round(off["positive_thickness_um"] * 0.96, 1)
    partial = _score("battery_design", "Design: " + json.dumps(off), c)
    assert 0.0 < partial < 1.0
    claim = f"energy {c['targets'][0]['energy_Wh']} Wh exactly. Design: " + json.dumps(off)
    assert _score("battery_design", claim, c) == partial  # a reported number changes nothing
    assert _score("battery_design", 'Design: {"positive_thickness_um": 500}', c) == 0.0  # out of bounds
    assert _score("battery_design", "a big battery", c) == 0.0
    state = TOOLS.get("simulate_cell")().create_sync(c)
    assert "hidden_design" not in state and "targets" not in state


@pytest.fixture(scope="module")
def tiny_tool_model(tmp_path_factory):
    from ptbench.demo import make_tiny_model
    from ptbench.demo.tool_chat import tool_tokenizer

    return make_tiny_model(tmp_path_factory.mktemp("tiny-tools"), tokenizer=tool_tokenizer())


def _check_sft_export(out, env_obj, n: int, model_dir, tmp_path) -> None:
    """The traces as TRL's conversational SFT rows (tool calls with dict arguments, tool turns named
    and linked to their call), rendered by the real TRL SFTTrainer through a tool chat template."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from ptbench.bootcamp.export.sft import sft_from_traces
    from ptbench.bootcamp.rollout.merge import merge

    merge(out)
    rows, counts = sft_from_traces(out, only_correct=False)
    assert counts == {"episodes": n, "kept": n, "skipped_filter": 0, "skipped_bad_calls": 0}, counts
    for row in rows:
        assert sorted(t["function"]["name"] for t in json.loads(row["tools"])) == sorted(env_obj.tools)
        calls = {c["id"]: c for m in row["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []}
        replies = [m for m in row["messages"] if m["role"] == "tool"]
        assert (
            calls
            and len(replies) == len(calls)
            and all(isinstance(c["function"]["arguments"], dict) for c in calls.values())
        )
        assert all(m["name"] == calls[m["tool_call_id"]]["function"]["name"] for m in replies)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    config = SFTConfig(
        output_dir=str(tmp_path / "sft"),
        max_steps=1,
        per_device_train_batch_size=1,
        report_to=[],
        use_cpu=True,
        max_length=8192,
        save_strategy="no",
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    dataset = Dataset.from_list([{"messages": r["messages"], "tools": r["tools"]} for r in rows])
    trainer = SFTTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    rendered = tokenizer.decode(trainer.train_dataset[0]["input_ids"])
    name = next(m["name"] for m in rows[0]["messages"] if m["role"] == "tool")
    assert f'"name": "{name}", "arguments": {{' in rendered and '"arguments": "{' not in rendered, rendered[
        -800:
    ]  # not double-encoded


@pytest.mark.parametrize("env", CHEAP + ["battery"])
def test_scripted_endpoint_plays_full_episodes_with_tools(tmp_path, env, tiny_tool_model) -> None:
    _need(env)
    from ptbench.bootcamp.data.datagen import Shard
    from ptbench.bootcamp.environment import build_environment
    from ptbench.bootcamp.rollout.runner import read_settings, run_shard

    from .chat_endpoint import serve_in_thread
    from .conftest import rollout_with, shard_records
    from .sim_policies import POLICIES

    extra = {
        "battery": {"tools": [{"name": "simulate_cell", "params": {"workers": 2, "memory_mb": 4096}, "timeout_s": 90}]},
        "poker": {
            "tools": [{"name": "hand_equity", "params": {"trials": 40}}]
        },  # pokerkit's evaluator is slow; fewer samples
    }.get(env, {})
    n = 2 if env == "battery" else 4
    with serve_in_thread(POLICIES[env]) as (url, _stats):
        out = rollout_with(tmp_path, url, base=env, test=n, train=1, **extra)
        run_shard(out, Shard(0, 1))
    recs = shard_records(out)
    assert len(recs) == n and all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    env_obj = build_environment(read_settings(out).config)
    rows = {
        json.loads(line)["extra_info"]["sample_id"]: json.loads(line)
        for line in (out.parent / "data" / "test.jsonl").read_text().splitlines()
    }
    for r in recs:
        assert r["n_tool_calls"] >= 1 and all(c["error"] is None for c in r["tool_calls"]), r["tool_calls"]
        identity = json.loads(rows[r["sample_id"]]["reward_model"]["ground_truth"])
        assert (
            r["score"] == env_obj.reward.score(r["final_text"], identity).score
        )  # the trace's score is the verifier's
        assert 0.0 <= r["score"] <= 1.0
    _check_sft_export(out, env_obj, n, tiny_tool_model, tmp_path)
