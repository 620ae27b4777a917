import random

from ptbench.bootcamp.envs.pencil import mosaic


def _case(seed: int = 0) -> dict:
    return mosaic.generate(random.Random(seed))


def test_planted_answer_checks_and_generation_is_deterministic() -> None:
    for seed in range(20):
        case = _case(seed)
        assert case == _case(seed)
        assert mosaic.check(case, mosaic.answer(case))
        assert mosaic.answer(case) not in mosaic.prompt(case)


def test_one_changed_cell_fails() -> None:
    case = _case(2)
    for r in range(case["size"]):
        for c in range(case["size"]):
            if any(
                case["clues"][a][b] != "."
                for a in range(max(0, r - 1), min(case["size"], r + 2))
                for b in range(max(0, c - 1), min(case["size"], c + 2))
            ):
                rows = [list(x) for x in case["solution"]]
                rows[r][c] = "." if rows[r][c] == "#" else "#"
                assert not mosaic.check(case, "\n".join("".join(x) for x in rows))


def test_hostile_answers_fail() -> None:
    case = _case(1)
    right = mosaic.answer(case)
    for text in ("", "score: 1.0", right + "\n" + right, f"{right} or {right}", right[:-2]):
        assert not mosaic.check(case, text)


def test_each_rule_on_a_tiny_case() -> None:
    corner = {"size": 3, "clues": ["2..", "...", "..."], "solution": []}
    assert mosaic.check(corner, "#..\n.#.\n..#")  # the corner's block is its four cells: two shaded
    assert not mosaic.check(corner, "###\n###\n###")  # the corner's block holds four, not two
    full = {"size": 3, "clues": ["4..", "...", "..4"], "solution": []}
    assert mosaic.check(full, "###\n###\n###")
    assert mosaic.check(full, "# # #\n# # #\n# # #")
    mixed = {"size": 3, "clues": ["...", ".3.", "0.."], "solution": []}
    assert mosaic.check(mixed, "###\n...\n...")
    assert mosaic.check(mixed, "..#\n..#\n..#")
    assert not mosaic.check(mixed, "###\n#..\n...")  # the centre block holds four
    assert not mosaic.check(mixed, "##.\n...\n.#.")  # the bottom-left clue 0 sees a shaded cell
