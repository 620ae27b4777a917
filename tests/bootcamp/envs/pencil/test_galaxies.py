import random

from ptbench.bootcamp.envs.pencil import galaxies


def _case(seed: int = 0) -> dict:
    return galaxies.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(20):
        case = _case(seed)
        assert case == _case(seed)
        assert galaxies.check(case, galaxies.answer(case))
        assert galaxies.answer(case) not in galaxies.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    rows = [list(x) for x in case["solution"]]
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"] - 1) if rows[r][c] != rows[r][c + 1])
    rows[r][c] = rows[r][c + 1]
    assert not galaxies.check(case, "\n".join("".join(x) for x in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = galaxies.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not galaxies.check(case, text)


def test_touching_cells() -> None:
    assert galaxies.touching((2, 4)) == {(1, 2)}
    assert galaxies.touching((3, 4)) == {(1, 2), (2, 2)}
    assert galaxies.touching((3, 5)) == {(1, 2), (1, 3), (2, 2), (2, 3)}


def test_each_rule_on_a_tiny_case() -> None:
    centre = {"size": 3, "dots": [[2, 2]], "solution": []}  # one dot, at the centre of the middle cell
    assert galaxies.check(centre, "AAA\nAAA\nAAA")
    assert galaxies.check(centre, "A A A\nA A A\nA A A")
    assert not galaxies.check(centre, "AAA\nAAA\nAAB")  # two regions for one dot
    # a 2x2 galaxy round a corner dot, a column round its middle cell, a domino round its edge
    three = {"size": 3, "dots": [[1, 1], [2, 4], [4, 1]], "solution": []}
    assert galaxies.check(three, "AAB\nAAB\nCCB")
    assert galaxies.check(three, "xx7\nxx7\nQQ7")  # any labels
    assert not galaxies.check(three, "AAB\nAAB\nCBB")  # B is not symmetric, C holds no dot
    assert not galaxies.check(three, "AAB\nACB\nCCB")  # the corner dot is not inside A
    assert not galaxies.check(three, "AAA\nAAB\nCCB")  # A is not symmetric about its dot
    assert not galaxies.check(three, "AAB\nAAB\nAAB")  # A holds two dots and three regions are needed
