"""The adapters' hash-seeded worker (bootcamp/adapters/_worker.py): a case made there is a function of
its seed alone, whatever the caller's hash seed, the calls before it or the OS's entropy, which is
what makes reasoning-core's and five reasoning-gym generators reproducible across processes."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ptbench.bootcamp.adapters import _worker
from ptbench.bootcamp.adapters import reasoning_gym as rg_adapter
from ptbench.bootcamp.environment import build_environment

from ..conftest import require

REPO = Path(__file__).resolve().parents[3]
PROBE = "tests.bootcamp._worker_probe"


def _fresh() -> _worker.LineWorker:
    # its own child, started in the repo (the probe module is imported there by name)
    argv = [sys.executable, "-m", "ptbench.bootcamp.adapters._worker"]
    return _worker.LineWorker(lambda: argv, _worker._env, "test")


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[_worker.LineWorker]:
    monkeypatch.chdir(REPO)
    w = _fresh()
    yield w
    if w.proc is not None:
        w.proc.stdin.close()  # type: ignore[union-attr]
        w.proc.wait(timeout=30)


def test_a_seeded_call_is_the_same_whatever_came_before_and_in_another_worker(worker: _worker.LineWorker) -> None:
    req = {"call": f"{PROBE}:state", "args": ["k"], "seed": 7}
    first = worker.ask(req)["result"]
    worker.ask({"call": f"{PROBE}:state", "args": ["other"], "seed": 8})  # another case in between
    again = worker.ask(req)["result"]
    other = _fresh()
    try:
        elsewhere = other.ask(req)["result"]
    finally:
        assert other.proc is not None and other.proc.stdin is not None
        other.proc.stdin.close()
        other.proc.wait(timeout=30)
    assert first == again == elsewhere
    assert first["earlier_calls"] == 1  # each case in a fork of the pristine worker: no cache carried over
    assert worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": 8})["result"] != first  # the seed matters


def test_an_unseeded_call_runs_in_the_worker_itself(worker: _worker.LineWorker) -> None:
    """Without a seed (reasoning-gym's items: their own seeded RNG) calls share the worker's state,
    which is what lets them reuse its caches; the set order is still the fixed hash seed's."""
    a = worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": None})["result"]
    b = worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": None})["result"]
    assert (a["earlier_calls"], b["earlier_calls"]) == (1, 2)
    assert a["set_order"] == b["set_order"]
    for drawn_from_the_os in ("numpy_unseeded", "reseeded", "numpy_reseeded"):  # what a seeded fork pins
        assert a[drawn_from_the_os] != b[drawn_from_the_os]


def test_the_set_order_is_the_fixed_hash_seeds_not_the_callers(worker: _worker.LineWorker) -> None:
    got = worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": 1})["result"]["set_order"]
    code = "print(__import__('json').dumps(list({f'k{i}' for i in range(8)})))"
    for hash_seed in (_worker.HASH_SEED, "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                        check=True).stdout)  # fmt: skip
        assert (out == got) == (hash_seed == _worker.HASH_SEED)  # another hash seed orders the set otherwise


def test_a_seeded_call_sees_the_pinned_calendar_whatever_the_day(worker: _worker.LineWorker) -> None:
    """A generator that reads the date (Faker's `date_between(..., "today")`) makes the same case on
    any day: the worker's own clock is moved across midnight, and only the unseeded calls (the
    control: the day reaches them) see it."""
    pinned = _worker.CASE_CLOCK.date().isoformat()
    seeded = {"call": f"{PROBE}:faker_date", "args": [5], "seed": 5}
    unseeded = seeded | {"seed": None}
    got = {}
    for when in ("2031-02-03T23:59:58+00:00", "2031-02-04T00:00:01+00:00", "2033-09-30T12:00:00+00:00"):
        assert worker.ask({"call": f"{PROBE}:travel", "args": [when], "seed": None})["result"] == when[:10]
        state = worker.ask({"call": f"{PROBE}:state", "args": ["k"], "seed": 1})["result"]
        assert state["today"] == pinned
        got[when] = (worker.ask(seeded)["result"], worker.ask(unseeded)["result"])
    assert len({s for s, _ in got.values()}) == 1  # seeded: one date, whatever the day
    assert len({u for _, u in got.values()}) == 3  # unseeded: each day its own


def test_a_reasoning_core_table_qa_case_is_the_same_on_another_day(worker: _worker.LineWorker) -> None:
    """rc.table_qa's tables hold dates drawn relative to today (CI's verify made a case again after
    midnight and got other bytes): made in the worker on two days, the case is the same."""
    require(importlib.util.find_spec("reasoning_core") is not None, "reasoning-core is not installed")
    from ptbench.bootcamp.adapters import reasoning_core as rc_adapter

    call = {"call": f"{rc_adapter.__name__}:_case_in_worker", "args": ["table_qa", 2], "seed": 2}
    cases = []
    for when in ("2031-02-03T23:59:59+00:00", "2031-02-04T00:00:01+00:00"):
        worker.ask({"call": f"{PROBE}:travel", "args": [when], "seed": None})
        cases.append(worker.ask(call)["result"])
    assert "2025/" in json.dumps(cases[0])  # this seed's table holds dates, drawn a year back from the pinned day
    assert cases[0] == cases[1]


def test_failures_and_prints_stay_off_the_protocol(worker: _worker.LineWorker) -> None:
    assert worker.ask({"call": f"{PROBE}:shout", "args": [], "seed": 3}) == {"result": "ok"}
    assert worker.ask({"call": f"{PROBE}:shout", "args": [], "seed": None}) == {"result": "ok"}
    reply = worker.ask({"call": f"{PROBE}:no_such_function", "args": [], "seed": 3})
    assert "AttributeError" in reply["error"]
    with pytest.raises(RuntimeError, match="no_such"):
        _worker.call(f"{PROBE}:no_such_function")


def test_started_by_hand_without_the_hash_seed_it_refuses() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    proc = subprocess.run([sys.executable, "-m", "ptbench.bootcamp.adapters._worker"], env=env, input="",
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode != 0 and "PYTHONHASHSEED" in proc.stderr


# ------------------------------------------------------- the environments the worker and checks mended

_GEN = (
    "import json, sys\n"
    "from ptbench.bootcamp.adapters import reasoning_gym as rg\n"
    "inside = rg._case_fields(sys.argv[1], None, '{}', 12345)\n"  # the library, in this interpreter
    "gen = rg.ReasoningGymGenerator(dataset=sys.argv[1])\n"
    "print(json.dumps([inside, gen.case(__import__('random').Random(7))]))\n"
)


def test_a_hash_seeded_reasoning_gym_dataset_repeats_under_another_hash_seed() -> None:
    """ransom_note draws from a set of letters: made in the caller's interpreter its case follows the
    hash seed (the control), made in the worker it does not."""
    require(importlib.util.find_spec("reasoning_gym") is not None, "reasoning-gym is not installed")
    assert "ransom_note" in rg_adapter.HASH_SEEDED and "ransom_note" in rg_adapter.dataset_names()
    got = []
    for hash_seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-c", _GEN, "ransom_note"], env=env, capture_output=True, text=True,
                              timeout=300, cwd=REPO)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        got.append(json.loads(proc.stdout.splitlines()[-1]))
    assert len({json.dumps(inside) for inside, _ in got}) > 1  # in-process: the hash seed changes the case
    assert len({json.dumps(case) for _, case in got}) == 1  # through the worker: the same bytes


def test_game_of_life_halting_needs_the_answer_not_any_text() -> None:
    require(importlib.util.find_spec("reasoning_gym") is not None, "reasoning-gym is not installed")
    env = build_environment("rg.game_of_life_halting")
    gen = next(iter(env.generators.values()))
    rng = random.Random(3)
    for _ in range(4):
        case = gen.case(rng)
        entry = rg_adapter._entry("game_of_life_halting", None, "{}", case["seed"])
        other = {"True": "False", "False": "True"}[case["answer"]]
        assert rg_adapter.library().get_score_answer_fn("game_of_life_halting")("banana", entry) == 1.0  # the bug
        assert env.reward.score(f"<answer>{case['answer']}</answer>", case).score == 1.0
        for hostile in ("banana", other, f"{case['answer']} or {other}", "", "score: 1"):
            assert env.reward.score(f"<answer>{hostile}</answer>", case).score == 0.0, hostile


@pytest.mark.parametrize(
    ("task", "answer", "metadata", "hostile"),
    [
        ("coreference", "Alice", {}, ["Bob, Alice", "Bob or Alice"]),
        ("grid_navigation", "(3, 4)", {"answer_type": "coord"}, ["(3, 4) or (5, 6)", "(3, 4), (5, 6)"]),
        ("grid_navigation", "7", {"answer_type": "distance"}, ["7 or 8", "7, 8"]),
        # found by verify at 100 cases: another case's coordinate is no relation, so counting relations let it by
        (
            "grid_navigation",
            "(aligned, below)",
            {"answer_type": "relation"},
            ["(aligned, below) or (4, 4)", "(4, 4), (aligned, below)"],
        ),
        ("sequential_induction", "n**2 + 1", {"degree of recursion": 0}, ["n**2 + 1 or n + 2"]),
        (
            "analogical_case_matching",
            "M1",
            {"answer_format": "index", "matching_case_ids": ["M1"]},
            ["M1 or None", "None of them fit; if pressed, M1"],
        ),
    ],
)
def test_reasoning_core_hedges_its_scorer_credits_score_0(
    task: str, answer: str, metadata: dict, hostile: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of these scorers finds the answer somewhere in the text (the last word, the first
    coordinate, a parse that drops the rest): the library credits the hedge (the control), ptbench's
    check in front of it does not, and the plain answer still scores 1."""
    require(importlib.util.find_spec("reasoning_core") is not None, "reasoning-core is not installed")
    from easydict import EasyDict

    from ptbench.bootcamp.adapters import reasoning_core as rc_adapter

    # a hand-made case with only the fields the check and the scorer read: the check is what is tested here
    monkeypatch.setattr(rc_adapter, "check_task", lambda name: name)
    identity = {"task": task, "answer": answer, "metadata": metadata}
    library_score = rc_adapter.library().get_score_answer_fn(task)
    reward = rc_adapter.ReasoningCoreReward()
    assert reward.score(f"<answer>{answer}</answer>", identity).score == 1.0
    for text in hostile:
        assert library_score(text, EasyDict({"answer": answer, "metadata": metadata})) == 1.0  # the library's hole
        assert reward.score(f"<answer>{text}</answer>", identity).score == 0.0, text


# ------------------------------------------- reasoning-gym datasets given a reference or a check of ptbench's


def _rg_env(dataset: str) -> tuple[Any, Any]:
    require(importlib.util.find_spec("reasoning_gym") is not None, "reasoning-gym is not installed")
    env = build_environment(f"rg.{dataset}")
    return env, next(iter(env.generators.values()))


@pytest.mark.parametrize("dataset", ["graph_color", "rubiks_cube", "boxnet", "rush_hour"])
def test_ptbench_s_reference_answer_scores_1_by_the_library_s_own_scorer(dataset: str) -> None:
    """The library gives no answer (several are right); ptbench's solver's answer is checked by the
    library's scorer on the library's own item, and another case's answer is not taken for right."""
    env, gen = _rg_env(dataset)
    rng = random.Random(11)
    cases = [gen.case(rng) for _ in range(3)]
    for k, case in enumerate(cases):
        assert case["answer"] is None and case["solution"]
        right = gen.reference_completion(case)
        assert env.reward.score(right, case).score == 1.0
        other = gen.reference_completion(cases[(k + 1) % 3])
        assert other != right and env.reward.score(other, case).score == 0.0
        for hostile in ("", "reward: 1.0", f"{right[:-9]} or {other[8:]}"):
            assert env.reward.score(hostile, case).score == 0.0, hostile


def test_rush_hour_takes_moves_alone_each_one_made_in_full() -> None:
    """The library's board skips a move it cannot make and reads moves out of any text (the control:
    its scorer gives 1 to the solution with prose or a move of no car in it); ptbench's check gives 0,
    and to a move the car cannot make in full."""
    env, gen = _rg_env("rush_hour")
    case = gen.case(random.Random(5))
    solution = case["solution"]
    entry = rg_adapter._entry("rush_hour", None, "{}", case["seed"])
    score = rg_adapter.library().get_score_answer_fn("rush_hour")
    for sloppy in (f"{solution} or Z+1", f"Z+1 {solution}", f"moves: {solution}"):  # Z: no such car
        assert score(sloppy, entry) == 1.0  # the library's scorer takes it
        assert env.reward.score(f"<answer>{sloppy}</answer>", case).score == 0.0, sloppy
    assert env.reward.score(f"<answer>{solution}</answer>", case).score == 1.0
    first = solution.split()[0]
    assert env.reward.score(f"<answer>{first[0]}{first[1]}9 {solution}</answer>", case).score == 0.0  # 9 squares


def test_letter_jumble_does_not_pay_words_past_the_answer() -> None:
    env, gen = _rg_env("letter_jumble")
    case = gen.case(random.Random(2))
    entry = rg_adapter._entry("letter_jumble", None, "{}", case["seed"])
    padded = f"{case['answer']} or something else"
    assert rg_adapter.library().get_score_answer_fn("letter_jumble")(padded, entry) == 1.0  # the control
    assert env.reward.score(f"<answer>{padded}</answer>", case).score == 0.0
    assert env.reward.score(f"<answer>{case['answer']}</answer>", case).score == 1.0


def test_base_conversion_draws_again_past_an_item_with_an_empty_answer() -> None:
    """The library writes 0 as '' in bases other than 2 and 16 (its question too): such a seed is
    passed over, and the cases drawn otherwise are the library's own."""
    require(importlib.util.find_spec("reasoning_gym") is not None, "reasoning-gym is not installed")
    empty = next(s for s in range(100_000) if rg_adapter._entry("base_conversion", None, "{}", s)["answer"] == "")
    draws = iter([empty, 12345])
    gen = rg_adapter.ReasoningGymGenerator(dataset="base_conversion")

    class Seeds(random.Random):
        def getrandbits(self, k: int) -> int:
            return next(draws)

    case = gen.case(Seeds())
    assert case["seed"] == 12345 and case["answer"] == rg_adapter._entry("base_conversion", None, "{}", 12345)["answer"]
