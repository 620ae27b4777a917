import random

from ptbench.bootcamp.envs.pencil import norinori

TINY = {"size": 2, "regions": ["AA", "AA"], "solution": ["##", ".."]}


def _case(seed: int = 0) -> dict:
    return norinori.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(20):
        case = _case(seed)
        assert case == _case(seed)
        assert norinori.check(case, norinori.answer(case))
        assert "\n".join(case["solution"]) not in norinori.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(3)
    rows = [list(r) for r in case["solution"]]
    rows[0][0] = "." if rows[0][0] == "#" else "#"
    assert not norinori.check(case, "\n".join("".join(r) for r in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = norinori.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not norinori.check(case, text)


def test_each_rule_on_a_tiny_case() -> None:
    assert norinori.check(TINY, "##\n..")
    assert norinori.check(TINY, "# #\n. .")  # spaces between cells are allowed
    assert not norinori.check(TINY, "#.\n.#")  # shaded cells not in a domino
    assert not norinori.check(TINY, "##\n#.")  # three shaded: an L, not a domino
    assert not norinori.check(TINY, "..\n..")  # the region has no shaded cell
    two = {"size": 3, "regions": ["AAA", "BBB", "BBB"], "solution": ["##.", "...", ".##"]}
    assert norinori.check(two, "##.\n...\n.##")
    assert not norinori.check(two, "##.\n...\n...")  # region B has no shaded cell
    assert not norinori.check(two, "##.\n.##\n...")  # two dominoes touch along an edge
