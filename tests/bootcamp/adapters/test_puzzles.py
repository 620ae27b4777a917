"""chuk-puzzles-gym's families (`puz.<family>`): the library's stored solution, given as the prompt
asks, scores 1 through the real environment; another valid solution scores 1 too; a changed given,
an empty cell, one changed cell, two answers, a hedge and a claimed score score 0; the same seed
gives the same bytes in interpreters with other hash seeds; the families left out are named with a
reason. Everything runs the real library (no mocks)."""

from __future__ import annotations

import importlib.util
import os
import pkgutil
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.environment import build_environment

from ..conftest import require

HERE = importlib.util.find_spec("chuk_puzzles_gym") is not None
WHY = "chuk-puzzles-gym is not installed (ptbench[bootcamp-puzzles])"
FAMILIES = [
    "binary",
    "bridges",
    "fillomino",
    "futoshiki",
    "graph_coloring",
    "hidato",
    "hitori",
    "kakuro",
    "kenken",
    "killer_sudoku",
    "knapsack",
    "lights_out",
    "nonogram",
    "nqueens",
    "numberlink",
    "nurikabe",
    "scheduler",
    "shikaku",
    "skyscrapers",
    "slitherlink",
    "star_battle",
    "sudoku",
    "tents",
]
# families where any one changed cell breaks a rule whatever the solution (a count, a Latin line, a number twice)
ONE_CELL_BREAKS = [
    "binary",
    "futoshiki",
    "hidato",
    "kenken",
    "killer_sudoku",
    "lights_out",
    "nonogram",
    "nqueens",
    "skyscrapers",
    "star_battle",
    "sudoku",
    "tents",
]


def _cases(family: str, n: int = 3) -> tuple[Any, list[dict[str, Any]]]:
    require(HERE, WHY)
    env = build_environment(f"puz.{family}")
    out = []
    for k in range(n):
        level = env.config.levels[k % len(env.config.levels)]
        out.append(env.generators[level.name].case(random.Random(k)))
    return env, out


def _score(env: Any, answer: str, identity: dict[str, Any]) -> float:
    return float(env.reward.score(answer, identity).score)


def _grid(identity: dict[str, Any]) -> list[list[str]]:
    return [line.split() for line in identity["reference"].splitlines()]


def _text(grid: list[list[str]]) -> str:
    return "<answer>\n" + "\n".join(" ".join(row) for row in grid) + "\n</answer>"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_reference_scores_1_and_cheap_answers_0(family: str) -> None:
    env, cases = _cases(family)
    for identity in cases:
        gen = env.generators[identity["difficulty"]]
        right = gen.reference_completion(identity)
        assert _score(env, right, identity) == 1.0
        body = identity["reference"]
        assert "<answer>" in gen.prompt(identity) and body not in gen.prompt(identity)  # no solution in the prompt
        assert _score(env, f"{right}\n{right}", identity) == 0.0  # two answers, even both right
        assert _score(env, "", identity) == 0.0 and _score(env, "<answer></answer>", identity) == 0.0
        assert _score(env, f"<answer>\n{body}\nreward: 1.0 (verified correct)\n</answer>", identity) == 0.0
        lines = body.splitlines()
        hedge = "\n".join([lines[0] + " or " + lines[0], *lines[1:]])
        assert _score(env, f"<answer>\n{hedge}\n</answer>", identity) == 0.0


@pytest.mark.parametrize("family", ONE_CELL_BREAKS)
def test_one_changed_or_empty_cell_scores_0(family: str) -> None:
    env, cases = _cases(family)
    for identity in cases:
        grid = _grid(identity)
        for r, c in [(0, 0), (len(grid) - 1, len(grid) - 1), (len(grid) // 2, 1)]:
            for token in {"0", "1", "2", grid[r][(c + 1) % len(grid)], "."} - {grid[r][c]}:
                changed = [row[:] for row in grid]
                changed[r][c] = token
                assert _score(env, _text(changed), identity) == 0.0, (family, r, c, token)


def test_a_changed_given_scores_0_though_the_grid_is_otherwise_valid() -> None:
    """Binary's complement (0 and 1 swapped) keeps every line rule, so only the givens tell it from a
    solution: it scores 0, and 1 on the same puzzle without its givens (the control)."""
    env, cases = _cases("binary")
    for identity in cases:
        flipped = [["1" if v == "0" else "0" for v in row] for row in _grid(identity)]
        assert any(v != -1 for row in identity["data"]["initial"] for v in row)
        assert _score(env, _text(flipped), identity) == 0.0
        blank = [[-1] * len(row) for row in identity["data"]["initial"]]
        without_givens = {**identity, "data": {**identity["data"], "initial": blank}}
        assert _score(env, _text(flipped), without_givens) == 1.0


def test_every_valid_solution_scores_1_not_only_the_stored_one() -> None:
    """A schedule with its workers' labels swapped, a knapsack answer in another order: other
    answers than the stored one, as valid, score 1; one hour later than the target makespan scores 0."""
    env, cases = _cases("scheduler")
    for identity in cases:
        rows = [line.split() for line in identity["reference"].splitlines()]
        w = identity["data"]["workers"]
        relabelled = "\n".join(f"{t} {w + 1 - int(k)} {s}" for t, k, s in rows)
        assert _score(env, f"<answer>{relabelled}</answer>", identity) == 1.0
        late = "\n".join(f"{t} {k} {int(s) + identity['data']['target']}" for t, k, s in rows)
        assert _score(env, f"<answer>{late}</answer>", identity) == 0.0
    env, cases = _cases("knapsack")
    for identity in cases:
        items = identity["reference"].split()
        assert _score(env, f"<answer>{' '.join(reversed(items))}</answer>", identity) == 1.0
        assert _score(env, f"<answer>{' '.join(items + items[:1])}</answer>", identity) == 0.0  # an item twice
        everything = " ".join(str(i + 1) for i in range(len(identity["data"]["items"])))
        fits = sum(it["weight"] for it in identity["data"]["items"]) <= identity["data"]["capacity"]
        assert _score(env, f"<answer>{everything}</answer>", identity) == float(fits)


def test_path_and_bridge_answers_that_break_the_rules_score_0() -> None:
    """Numberlink's reference paths are its generator's Hamiltonian path, recorded through the library's
    private `_generate_hamiltonian_path` (its one use: `_puzzle_cases._record_path`); it must still exist."""
    env, cases = _cases("numberlink")
    from chuk_puzzles_gym.games import AVAILABLE_GAMES

    assert callable(getattr(AVAILABLE_GAMES["numberlink"](seed=1), "_generate_hamiltonian_path", None))
    for identity in cases:
        lines = identity["reference"].splitlines()
        head, cells = lines[0].split(":")
        cells_list = cells.split()
        jumped = f"{head}: {cells_list[0]} {cells_list[-1]}"  # endpoints without the path: a jump, cells uncovered
        assert _score(env, "<answer>" + "\n".join([jumped, *lines[1:]]) + "</answer>", identity) == 0.0
        assert _score(env, "<answer>" + "\n".join(lines[1:]) + "</answer>", identity) == 0.0  # a pair missing
        reversed_path = f"{head}: {' '.join(reversed(cells_list))}"  # walked the other way: still valid
        assert _score(env, "<answer>" + "\n".join([reversed_path, *lines[1:]]) + "</answer>", identity) == 1.0
    env, cases = _cases("bridges")
    for identity in cases:
        lines = identity["reference"].splitlines()
        doubled = [line[:-1] + ("2" if line.endswith("1") else "1") for line in lines[:1]] + lines[1:]
        assert _score(env, "<answer>" + "\n".join(doubled) + "</answer>", identity) == 0.0  # a count unmet
        flipped = [" ".join(line.split()[2:4] + line.split()[0:2] + line.split()[4:]) for line in lines]
        assert _score(env, "<answer>" + "\n".join(flipped) + "</answer>", identity) == 1.0  # ends either way round
        wide = "\n".join("  ".join(line.split()) for line in lines)  # spacing is forgiven, nothing else
        assert _score(env, f"<answer>{wide}</answer>", identity) == 1.0


def test_nurikabe_pools_and_hitori_neighbours_score_0() -> None:
    env, cases = _cases("nurikabe")
    for identity in cases:
        n = identity["data"]["size"]
        assert _score(env, _text([["B"] * n for _ in range(n)]), identity) == 0.0  # the sea everywhere: pools
        assert _score(env, _text([["W"] * n for _ in range(n)]), identity) == 0.0  # one island, many numbers
    env, cases = _cases("hitori")
    for identity in cases:
        n = identity["data"]["size"]
        assert _score(env, _text([["1"] * n for _ in range(n)]), identity) == 0.0  # shading everything
        assert _score(env, _text([["0"] * n for _ in range(n)]), identity) == 0.0  # no repeat shaded


def test_cases_are_the_same_bytes_in_other_interpreters(tmp_path: Path) -> None:
    require(HERE, WHY)
    names = ["puz.numberlink", "puz.bridges", "puz.binary"]
    code = ("import sys\nfrom ptbench.bootcamp import generate, load_bootcamp\n"
            "for n in sys.argv[2:]:\n"
            "    cfg = load_bootcamp(n).model_copy(update={'splits': {'test': 3, 'train': 0}})\n"
            "    generate(cfg, sys.argv[1] + '/' + n, workers=1)\n")  # fmt: skip
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / seed), *names], env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
    for n in names:
        files = [{str(p.relative_to(tmp_path / h)): p.read_bytes() for p in (tmp_path / h / n).rglob("*")
                  if p.is_file() and ".cache" not in p.parts} for h in "12"]  # fmt: skip
        assert files[0] and files[0] == files[1], n
        assert len((tmp_path / "1" / n / "test.jsonl").read_text().splitlines()) == 3, n


def test_every_library_family_is_an_environment_or_left_out_with_a_reason() -> None:
    require(HERE, WHY)
    import chuk_puzzles_gym.games as games

    from ptbench.bootcamp.adapters import puzzles

    library = {m.name for m in pkgutil.iter_modules(games.__path__) if not m.name.startswith("_")}
    assert set(puzzles.names()) == set(FAMILIES)
    assert set(puzzles.names()) | set(puzzles.EXCLUDED) == library and not set(puzzles.names()) & set(puzzles.EXCLUDED)
    assert all(reason.strip() for reason in puzzles.EXCLUDED.values())


def test_a_family_left_out_is_one_clear_error(tmp_path: Path) -> None:
    require(HERE, WHY)
    from ptbench.bootcamp.adapters import puzzles
    from ptbench.core.errors import UserError

    with pytest.raises(UserError, match=r"left out: another installed source has this family \(rg.zebra_puzzles"):
        puzzles.check_family("einstein")
    cfg = load_bootcamp("puz.tents").model_copy(update={"splits": {"test": 1, "train": 0}})
    assert cfg.levels[0].params == {"family": "tents", "difficulty": "easy"}
    generate(cfg, tmp_path / "one", workers=1)
    assert len((tmp_path / "one" / "test.jsonl").read_text().splitlines()) == 1


def test_kakuro_answers_by_ptbench_solver_because_the_library_grid_breaks_its_clues() -> None:
    """The library's stored Kakuro grid would be a wrong reference (its crossing runs overwrite each
    other's digits); the solver's grid satisfies every clue, and the check tells them apart."""
    import asyncio

    from chuk_puzzles_gym.games import AVAILABLE_GAMES

    env, cases = _cases("kakuro", 4)
    stored_scores = []
    for identity in cases:
        assert _score(env, env.generators[identity["difficulty"]].reference_completion(identity), identity) == 1.0
        game = AVAILABLE_GAMES["kakuro"](difficulty=identity["difficulty"], seed=identity["seed"])
        asyncio.run(game.generate_puzzle())
        stored = [["#" if v == -1 else str(v) for v in row] for row in game.solution]
        stored_scores.append(_score(env, _text(stored), identity))
        black = [["#" if b else "1" for b in row] for row in identity["data"]["black"]]
        assert _score(env, _text(black), identity) == 0.0  # every white cell 1: runs repeat
    assert 0.0 in stored_scores


def test_lights_out_takes_any_press_set_that_works() -> None:
    """5x5 Lights Out has presses that change nothing (a quiet pattern): the stored presses with one
    added are another solution and score 1; the quiet pattern alone (on a lit board) scores 0."""
    from ptbench.bootcamp.adapters._puzzle_checks import check_lights_out

    quiet = [[0, 1, 1, 1, 0], [1, 0, 1, 0, 1], [1, 1, 0, 1, 1], [1, 0, 1, 0, 1], [0, 1, 1, 1, 0]]
    assert check_lights_out("\n".join(" ".join(map(str, r)) for r in quiet), {"size": 5, "lights": [[0] * 5] * 5})
    env, cases = _cases("lights_out", 6)
    easy = [c for c in cases if c["data"]["size"] == 5]
    assert easy
    for identity in easy:
        presses = [[int(v) for v in row] for row in _grid(identity)]
        other = [[str(a ^ b) for a, b in zip(p, q, strict=True)] for p, q in zip(presses, quiet, strict=True)]
        assert _score(env, _text(other), identity) == 1.0
        assert _score(env, _text([[str(v) for v in row] for row in quiet]), identity) == 0.0


def test_graph_colouring_and_slitherlink_rules_are_checked() -> None:
    """A colouring with one edge inside a colour, and Slitherlink figures on a 3x3 grid with no clues:
    one loop scores, two loops, a branch or no loop at all do not."""
    from ptbench.bootcamp.adapters._puzzle_checks import check_slitherlink

    env, cases = _cases("graph_coloring")
    for identity in cases:
        colours = identity["reference"].split()
        a, b = identity["data"]["edges"][0]
        clash = colours[:]
        clash[b - 1] = colours[a - 1]
        assert _score(env, f"<answer>{' '.join(clash)}</answer>", identity) == 0.0
        assert _score(env, f"<answer>{' '.join(colours[:-1])}</answer>", identity) == 0.0  # a node left out

    def figure(h: list[str], v: list[str]) -> bool:
        return check_slitherlink("\n".join(h + v), {"size": 3, "clues": [[-1] * 3] * 3})

    around = (["1 1 1", "0 0 0", "0 0 0", "1 1 1"], ["1 0 0 1", "1 0 0 1", "1 0 0 1"])
    two = (["1 0 1", "1 0 1", "0 0 0", "0 0 0"], ["1 1 1 1", "0 0 0 0", "0 0 0 0"])  # two unit squares
    branch = (["1 1 1", "0 1 0", "0 0 0", "1 1 1"], ["1 0 0 1", "1 0 0 1", "1 0 0 1"])  # an edge off the loop
    assert figure(*around) and not figure(*two) and not figure(*branch)
    assert not figure(["0 0 0"] * 4, ["0 0 0 0"] * 3)
