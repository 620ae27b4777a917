import random

from ptbench.bootcamp.envs.pencil import suguru


def _case(seed: int = 0) -> dict:
    return suguru.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(3):
        case = _case(seed)
        assert case == _case(seed)
        assert suguru.check(case, suguru.answer(case))
        assert suguru.answer(case) not in suguru.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    for r in range(2):
        for c in range(case["size"]):
            for digit in "12345":
                rows = [list(x) for x in case["solution"]]
                if rows[r][c] != digit:
                    rows[r][c] = digit
                    assert not suguru.check(case, "\n".join("".join(x) for x in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = suguru.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not suguru.check(case, text)


def test_each_rule_on_a_tiny_case() -> None:
    case = {"size": 3, "regions": ["AAB", "AAB", "CCB"], "given": ["...", "...", "..."], "solution": []}
    assert suguru.check(case, "121\n343\n212")
    assert suguru.check(case, "1 2 1\n3 4 3\n2 1 2")
    assert not suguru.check(case, "121\n343\n213")  # region B holds 3 twice
    assert not suguru.check(case, "121\n343\n122")  # every region is right, but two 2s touch
    assert not suguru.check(case, "121\n346\n212")  # a 6 in a region of three
    assert suguru.check(dict(case, given=["...", "...", "2.."]), "121\n343\n212")
    assert not suguru.check(dict(case, given=["...", "...", "1.."]), "121\n343\n212")  # a given digit changed
