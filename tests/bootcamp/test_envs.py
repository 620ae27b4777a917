"""The shipped environments' tools, interaction and rewards, and the verl reward entry point."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from ptbench.bootcamp import TOOLS, compute_score
from ptbench.bootcamp.envs.arithmetic import _FLAT_TEXT, ArithmeticGenerator, parsed_eval, safe_eval
from ptbench.bootcamp.envs.mastermind import MastermindInteraction, score_guess
from ptbench.bootcamp.envs.sql_explore import SqlExploreGenerator


def test_calculator_evaluates_arithmetic_and_refuses_code() -> None:
    assert safe_eval("(3 + 4) * 5 - 2 ** 3") == 27
    for bad in ("__import__('os')", "x + 1", "9 ** 999"):
        with pytest.raises(ValueError):
            safe_eval(bad)
    tool = TOOLS.get("calculator")()
    state = asyncio.run(tool.create({}))
    assert asyncio.run(tool.execute(state, {"expression": "6*7"})).text == "42"
    bad = asyncio.run(tool.execute(state, {"expression": "open('/etc/passwd')"}))
    assert bad.error and bad.text.startswith("error:")
    assert state["calls"] == 2  # per-episode state survives across calls


@pytest.mark.parametrize(
    ("expression", "value"),
    [("-3 + +4", 1), ("2 ** -1", 0.5), ("7 // 2 % 3", 0), ("1e3 / 4", 250.0), ("-(2 ** 2)", -4), ("64 ** 1", 64)],
)
def test_calculator_values_are_pythons(expression: str, value: float) -> None:
    got = safe_eval(expression)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "expression", ["True + 1", "3j", "'a' * 3", "~5", "not 1", "1 < 2", "None", "2 ** 65", "1e7 ** 2", "abs(1)"]
)
def test_calculator_refuses_anything_but_numbers_and_arithmetic(expression: str) -> None:
    with pytest.raises(ValueError):
        safe_eval(expression)


def _outcome(fn: Any, text: str) -> tuple[str, Any]:
    try:
        value = fn(text)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return type(value).__name__, value


def test_calculator_shortcut_is_the_parser_bit_for_bit() -> None:
    # safe_eval reads "n op n op n" without Python's parser: every text, taken that way or not,
    # must give what the parser's reading gives: the same value and type, or the same error.
    rng = random.Random(7)
    pieces = ["0", "00", "01", "7", "10", "999", "1_0", "3.5", "1e3", "-2", "+4", "٣", "9" * 30]
    ops = ["+", "-", "*", "/", "%", "//", "**", "+-", " ", ""]
    gaps = ["", " ", "  ", "\t", "\n"]
    texts = ["", " ", "0", "1 + 2", " 1 + 2", "1 + 2 ", "1 +\t2", "5 / 0", "5 % 0", "0 % 0", "6 / 4 * 2 - 1"]
    for _ in range(6000):
        n = rng.randint(1, 6)
        parts = [
            rng.choice(pieces[:6] + pieces[7:]) if rng.random() < 0.3 else str(rng.randint(0, 10 ** rng.randint(0, 20)))
        ]
        for _ in range(n - 1):
            op = rng.choice(ops[:5]) if rng.random() < 0.8 else rng.choice(ops)
            parts += [rng.choice(gaps[:3]) if rng.random() < 0.95 else rng.choice(gaps), op]
            parts += [rng.choice(gaps[:3]), str(rng.randint(0, 999)) if rng.random() < 0.9 else rng.choice(pieces)]
        texts.append("".join(parts))
    shortcut, errors = 0, 0
    for text in texts:
        got = _outcome(lambda t: safe_eval(t, max_len=10_000), text)
        assert got == _outcome(parsed_eval, text), text
        if _FLAT_TEXT.fullmatch(text):
            shortcut += 1
            errors += got[0] == "ZeroDivisionError"
    assert shortcut > 3000 and errors > 10  # most took the shortcut, some of them to an error


def test_generator_case_depends_only_on_rng() -> None:
    gen = ArithmeticGenerator(n_terms=3, max_value=9)
    assert gen.case(random.Random("1:test:a:5")) == gen.case(random.Random("1:test:a:5"))
    identity = gen.case(random.Random(0))
    assert safe_eval(identity["expression"]) == identity["answer"]


def test_sql_tool_state_persists_within_an_episode_and_is_isolated_between_episodes() -> None:
    identity = SqlExploreGenerator(departments=3, employees=10).case(random.Random(1))
    tool = TOOLS.get("sql_query")()

    async def scenario() -> tuple[str, str, str]:
        a, b = await tool.create(identity), await tool.create(identity)
        await tool.execute(a, {"query": "CREATE TEMP TABLE notes AS SELECT name FROM departments"})
        in_a = (await tool.execute(a, {"query": "SELECT COUNT(*) FROM notes"})).text
        in_b = (await tool.execute(b, {"query": "SELECT COUNT(*) FROM notes"})).text
        count = (await tool.execute(b, {"query": "SELECT COUNT(*) FROM employees"})).text
        await tool.release(a)
        await tool.release(b)
        return in_a, in_b, count

    in_a, in_b, count = asyncio.run(scenario())
    assert in_a.splitlines()[-1] == "3"
    assert in_b.startswith("SQL error") and "notes" in in_b
    assert count.splitlines()[-1] == "10"


def test_sql_tool_aborts_runaway_queries() -> None:
    identity = SqlExploreGenerator().case(random.Random(2))
    tool = TOOLS.get("sql_query")(max_vm_steps=100_000)
    state = tool.create_sync(identity)
    res = tool.execute_sync(
        state, {"query": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT COUNT(*) FROM c"}
    )
    assert res.error and "interrupt" in res.text.lower()
    assert tool.execute_sync(state, {"query": "SELECT 1"}).text.splitlines()[-1] == "1"  # connection still usable


def test_sql_generator_answer_matches_the_database() -> None:
    from ptbench.bootcamp.envs.sql_explore import build_db

    for seed in range(20):
        identity = SqlExploreGenerator().case(random.Random(seed))
        db = identity["db"]
        conn = build_db(db["seed"], db["departments"], db["employees"])
        assert conn.execute("SELECT COUNT(*) FROM employees").fetchone()[0] == db["employees"]
        conn.close()


def test_mastermind_feedback_and_termination() -> None:
    assert score_guess([1, 2, 3, 4], [1, 3, 2, 6]) == (1, 2)
    assert score_guess([1, 1, 2, 2], [1, 2, 1, 1]) == (1, 2)
    identity = {"code": [1, 2, 3, 4], "length": 4, "colors": 6, "max_guesses": 3}
    inter = MastermindInteraction()
    state = inter.start(identity)
    r1 = inter.respond(state, identity, "I think... Guess: 1 3 2 6")
    assert not r1.terminate and "exact: 1, partial: 2" in r1.feedback and r1.turn_score == pytest.approx(0.5)
    r2 = inter.respond(state, identity, "no idea")
    assert not r2.terminate and r2.extra["valid"] is False
    r3 = inter.respond(state, identity, "Guess: 1 2 3 5")
    assert r3.terminate and "Guesses left: 0" in r3.feedback  # out of guesses


def test_compute_score_scores_only_the_agent_loops_final_text() -> None:
    from ptbench.bootcamp.data.rowschema import EpisodeSpec

    gt = json.dumps({"expression": "6 * 7", "answer": 42})
    multi = EpisodeSpec(bootcamp="arithmetic", tools=[{"name": "calculator", "params": {}, "timeout_s": 5}]).to_json()
    single = EpisodeSpec(bootcamp="plain").to_json()
    extra = {"reward_fn": "boxed_number", "reward_params": "{}", "ptbench": multi}
    # verl's decoding (special tokens stripped): every turn and the tool output in one string.
    decoded = (
        "system\nuser\nassistant\nmaybe \\boxed{42}\n"
        "user\n<tool_response>\n42\n</tool_response>\nassistant\nI am not sure."
    )
    assert compute_score("bootcamp/arithmetic", decoded, gt, {**extra, "ptbench_final_text": "I am not sure."}) == 0.0
    assert (
        compute_score(
            "bootcamp/arithmetic",
            "not sure",
            gt,
            {**extra, "ptbench_final_text": "so \\boxed{42}"},
            reward_router_address=None,
        )
        == 1.0
    )
    with pytest.raises(ValueError, match="ptbench_agent"):  # multi-turn without the agent loop's text: fail closed
        compute_score("bootcamp/arithmetic", decoded, gt, extra)
    single_extra = {"reward_fn": "boxed_number", "reward_params": "{}", "ptbench": single}
    assert (
        compute_score("bootcamp/arithmetic", "so \\boxed{42}", gt, single_extra) == 1.0
    )  # single_turn_agent: one turn
    assert compute_score("bootcamp/arithmetic", "so \\boxed{41}", gt, single_extra) == 0.0
    with pytest.raises(ValueError, match="reward_fn"):
        compute_score("bootcamp/arithmetic", "\\boxed{42}", gt, {})
    with pytest.raises(ValueError, match="ptbench"):
        compute_score("bootcamp/arithmetic", "\\boxed{42}", gt, {"reward_fn": "boxed_number"})


def test_compute_score_on_generated_rows(tmp_path) -> None:
    from ptbench.bootcamp import generate, load_bootcamp

    from .conftest import small_config

    generate(load_bootcamp(small_config(tmp_path, "sql_explore")), tmp_path / "d")
    for line in (tmp_path / "d" / "test.jsonl").read_text().splitlines():
        row = json.loads(line)
        answer = json.loads(row["reward_model"]["ground_truth"])["answer"]
        extra = {**row["extra_info"], "ptbench_final_text": f"Answer: {answer}"}
        assert compute_score(row["data_source"], "ignored", row["reward_model"]["ground_truth"], extra) == 1.0
        extra["ptbench_final_text"] = "Answer: nobody"
        assert compute_score(row["data_source"], f"Answer: {answer}", row["reward_model"]["ground_truth"], extra) == 0.0
