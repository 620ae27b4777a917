import random

from ptbench.bootcamp.envs.pencil import easy_as_abc as abc


def _case(seed: int = 0) -> dict:
    return abc.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(20):
        case = _case(seed)
        assert case == _case(seed)
        assert abc.check(case, abc.answer(case))
        assert abc.answer(case) not in abc.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    rows = [list(x) for x in case["solution"]]
    rows[0][0] = next(x for x in case["letters"] + "." if x != rows[0][0])
    assert not abc.check(case, "\n".join("".join(x) for x in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = abc.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not abc.check(case, text)


def test_each_rule_on_a_tiny_case() -> None:
    grid = ["AB.", ".AB", "B.A"]
    case = {"size": 3, "letters": "AB", "clues": abc.edge_clues(grid), "solution": grid}
    assert case["clues"]["right"] == ["B", "B", "A"] and case["clues"]["top"] == ["A", "B", "B"]
    assert abc.check(case, "AB.\n.AB\nB.A")
    assert abc.check(case, "A B .\n. A B\nB . A")
    assert not abc.check(case, "BA.\n.AB\nB.A")  # column 1 holds B twice
    assert not abc.check(case, "AB.\nB.A\n.AB")  # rows and columns hold each letter once, but a clue fails
    assert not abc.check(case, "ABA\n.AB\nB.A")  # row 1 holds A twice
    free = {"size": 3, "letters": "AB", "clues": {s: ["-"] * 3 for s in ("top", "bottom", "left", "right")}}
    assert abc.check(free, "AB.\nB.A\n.AB")
    assert not abc.check(free, "AB.\nB.A\n.AC")  # a letter not in the puzzle
