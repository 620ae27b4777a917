import random

from ptbench.bootcamp.envs.pencil import heyawake


def _case(seed: int = 0) -> dict:
    return heyawake.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(5):
        case = _case(seed)
        assert case == _case(seed)
        assert heyawake.check(case, heyawake.answer(case))
        assert "\n".join(case["solution"]) not in heyawake.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    rows = [list(x) for x in case["solution"]]
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"]) if rows[r][c] == "#")
    rows[r][c + 1 if c + 1 < case["size"] else c - 1] = "#"  # two shaded cells side by side
    assert not heyawake.check(case, "\n".join("".join(x) for x in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = heyawake.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not heyawake.check(case, text)


def test_each_rule_on_a_tiny_case() -> None:
    rooms = {"size": 4, "regions": ["AABB", "AABB", "CCDD", "CCDD"], "clues": {"A": 2}, "solution": []}
    assert heyawake.check(rooms, "#...\n.#..\n....\n....")
    assert heyawake.check(rooms, "# . . .\n. # . .\n. . . .\n. . . .")
    assert not heyawake.check(rooms, "#...\n....\n....\n....")  # room A holds one, not two
    assert not heyawake.check(rooms, "##..\n....\n....\n....")  # two shaded cells share an edge
    assert not heyawake.check(rooms, "#...\n.#..\n#...\n....")  # an unshaded cell is cut off
    runs = {"size": 4, "regions": ["ABBC", "ABBC", "DDDD", "DDDD"], "clues": {}, "solution": []}
    assert heyawake.check(runs, ".#..\n..#.\n....\n....")
    assert not heyawake.check(runs, "....\n..#.\n....\n....")  # row 0 runs through A, B and C
