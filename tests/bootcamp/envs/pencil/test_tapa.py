import random

from ptbench.bootcamp.envs.pencil import tapa


def _case(seed: int = 0) -> dict:
    return tapa.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(20):
        case = _case(seed)
        assert case == _case(seed)
        assert tapa.check(case, tapa.answer(case))
        assert tapa.answer(case) not in tapa.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    r, c, _ = case["clues"][0]
    for dr, dc in ((-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1)):
        if 0 <= r + dr < case["size"] and 0 <= c + dc < case["size"]:
            rows = [list(x) for x in case["solution"]]
            rows[r + dr][c + dc] = "." if rows[r + dr][c + dc] == "#" else "#"
            assert not tapa.check(case, "\n".join("".join(x) for x in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = tapa.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not tapa.check(case, text)


def test_ring_clues() -> None:
    assert tapa.ring_clue(set(), 1, 1) == [0]
    ring = {(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0)}
    assert tapa.ring_clue(ring, 1, 1) == [8]
    assert tapa.ring_clue(ring - {(0, 1)}, 1, 1) == [7]  # the run wraps round the top-left corner
    assert tapa.ring_clue({(0, 0), (0, 2), (2, 1)}, 1, 1) == [1, 1, 1]
    assert tapa.ring_clue({(0, 1), (0, 2), (2, 1)}, 1, 1) == [1, 2]


def test_each_rule_on_a_tiny_case() -> None:
    case = {"size": 3, "clues": [[1, 1, [3]]], "solution": []}
    assert tapa.check(case, "###\n...\n...")
    assert tapa.check(case, "# # #\n. . .\n. . .")
    assert not tapa.check(case, "##.\n...\n...")  # a run of two, not three
    assert not tapa.check(case, "###\n.#.\n...")  # the clue cell is shaded
    four = {"size": 4, "clues": [[1, 1, [3]]], "solution": []}
    assert tapa.check(four, "###.\n....\n....\n....")
    assert not tapa.check(four, "###.\n....\n....\n...#")  # the clue holds, the shading is not connected
    square = {"size": 3, "clues": [[2, 2, [0]]], "solution": []}
    assert not tapa.check(square, "##.\n##.\n...")  # a 2x2 block
    assert tapa.check(square, "##.\n#..\n...")
