import random

from ptbench.bootcamp.envs.pencil import masyu


def _case(seed: int = 0) -> dict:
    return masyu.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(20):
        case = _case(seed)
        assert case == _case(seed)
        assert masyu.check(case, masyu.answer(case))
        assert "\n".join(case["solution"]) not in masyu.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    rows = [list(x) for x in case["solution"]]
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"]) if rows[r][c] != ".")
    for piece in ".|-LJ7F":
        if piece != rows[r][c]:
            changed = [list(x) for x in rows]
            changed[r][c] = piece
            assert not masyu.check(case, "\n".join("".join(x) for x in changed))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = masyu.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not masyu.check(case, text)


SQUARE = "F--7\n|..|\n|..|\nL--J"  # the loop round the edge of a 4x4 grid


def test_each_rule_on_a_tiny_case() -> None:
    black = {"size": 4, "pearls": ["B...", "....", "....", "...."], "solution": []}
    assert masyu.check(black, SQUARE)
    assert not masyu.check(black, "F7..\nLJ..\n....\n....")  # turns on the pearl but not straight after it
    assert not masyu.check(black, "....\n.F7.\n.LJ.\n....")  # misses the pearl
    white = {"size": 4, "pearls": [".W..", "....", "....", "...."], "solution": []}
    assert masyu.check(white, "F-7.\n|.|.\nL-J.\n....")  # straight on it, turns on both sides
    white5 = {"size": 5, "pearls": ["..W..", ".....", ".....", ".....", "....."], "solution": []}
    assert not masyu.check(white5, "F---7\n|...|\n|...|\n|...|\nL---J")  # no turn beside it
    assert not masyu.check(white, "F7..\n||..\nLJ..\n....")  # misses the pearl
    empty = {"size": 4, "pearls": ["....", "....", "....", "...."], "solution": []}
    assert masyu.check(empty, SQUARE)
    assert not masyu.check(empty, "F7..\nLJ..\n..F7\n..LJ")  # two loops
    assert not masyu.check(empty, "F-7.\n|.|.\nL-|.\n....")  # a piece not joined to its neighbour
    assert not masyu.check(empty, "-7..\n.|..\n....\n....")  # a piece leaving the grid
    assert not masyu.check(empty, "....\n....\n....\n....")  # no loop
