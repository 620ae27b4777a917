import random

from ptbench.bootcamp.envs.pencil import lits


def _case(seed: int = 0) -> dict:
    return lits.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(10):
        case = _case(seed)
        assert case == _case(seed)
        assert lits.check(case, lits.answer(case))
        assert "\n".join(case["solution"]) not in lits.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    for r in range(case["size"]):
        for c in range(case["size"]):
            rows = [list(x) for x in case["solution"]]
            rows[r][c] = "." if rows[r][c] == "#" else "#"
            assert not lits.check(case, "\n".join("".join(x) for x in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = lits.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not lits.check(case, text)


def test_shapes() -> None:
    assert lits.shape({(0, 0), (0, 1), (0, 2), (0, 3)}) == "I"
    assert lits.shape({(0, 0), (1, 0), (1, 1), (1, 2)}) == "L"
    assert lits.shape({(0, 1), (1, 0), (1, 1), (1, 2)}) == "T"
    assert lits.shape({(0, 0), (1, 0), (1, 1), (2, 1)}) == "S"
    assert lits.shape({(0, 0), (0, 1), (1, 0), (1, 1)}) is None  # the O is no LITS piece
    assert lits.shape({(0, 0), (0, 1), (0, 3), (1, 0)}) is None


def test_each_rule_on_a_tiny_case() -> None:
    # two regions stacked: rows 0-1 are A, rows 2-3 are B
    case = {"size": 4, "regions": ["AAAA", "AAAA", "BBBB", "BBBB"], "solution": []}
    assert lits.check(case, "###.\n..#.\n..#.\n.###")  # an L and a T, connected
    assert not lits.check(case, "####\n....\n####\n....")  # not connected
    assert not lits.check(case, "####\n...#\n####\n....")  # region A has five cells
    assert not lits.check(case, "###.\n.#..\n.#..\n###.")  # two T's share an edge
    assert not lits.check(case, "##..\n##..\n#...\n###.")  # an O and a 2x2 block
    assert not lits.check(case, "#...\n###.\n.#..\n.###")  # two L's share an edge
