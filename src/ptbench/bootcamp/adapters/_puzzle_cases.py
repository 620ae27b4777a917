"""A chuk-puzzles-gym puzzle as a ptbench case: the puzzle's data (0-based, as the library keeps it),
the library's board and rules as the prompt's text, and the library's stored solution as the answer
text the prompt asks for (the reference). One `Family` a puzzle family: its library key, the answer
format the prompt states, how its data is read off the game object, and ptbench's check.

Reading a game's attributes is the one use of the library's internals (its games have no
serialisation); `tests/bootcamp/adapters/test_puzzles.py` fails the day an attribute moves. Numberlink keeps no
path, only its grid: its generator's Hamiltonian path is recorded as it is drawn (`_numberlink`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from ptbench.bootcamp.adapters import _puzzle_checks as checks

Data = dict[str, Any]


@dataclass(frozen=True)
class Family:
    key: str  # the library's AVAILABLE_GAMES key
    answer: str  # the answer format, as the prompt states it
    read: Callable[[Any], tuple[Data, str]]  # game -> (puzzle data, the library solution as an answer)
    check: Callable[[str, Data], bool]
    listing: Callable[[Data], str] | None = None  # what the board leaves out (regions, every cage)


def _rows(grid: list[list[Any]], cell: Callable[[Any], str] = str) -> str:
    return "\n".join(" ".join(cell(v) for v in row) for row in grid)


def _grid_answer(what: str) -> str:
    return f"the completed grid: one line per row, the row's values separated by single spaces ({what})"


def _plain(game: Any) -> list[list[int]]:
    return [list(row) for row in game.initial_grid]


def _binary(g: Any) -> tuple[Data, str]:
    return {"size": g.size, "initial": _plain(g)}, _rows(g.solution)


def _op(cage: Any) -> str | None:
    return None if cage.operation is None or cage.operation.value in ("", "none") else cage.operation.value


def _kenken(g: Any) -> tuple[Data, str]:
    cages = [{"cells": [list(c) for c in cage.cells], "op": _op(cage), "target": cage.target} for cage in g.cages]
    return {"size": g.size, "cages": cages}, _rows(g.solution)


def _killer(g: Any) -> tuple[Data, str]:
    cages = [{"cells": [list(c) for c in cage.cells], "target": cage.target} for cage in g.cages]
    return {"initial": _plain(g), "cages": cages}, _rows(g.solution)


def _cage_list(p: Data) -> str:
    lines = [f"  {cage['target']}{cage.get('op') or ''}: " + ", ".join(f"({r + 1},{c + 1})" for r, c in cage["cells"])
             for cage in p["cages"]]  # fmt: skip
    return "Every cage (target, then its cells as (row,col)):\n" + "\n".join(lines)


def _sky(g: Any) -> tuple[Data, str]:
    return {"size": g.size, "initial": _plain(g), "clues": {k: list(v) for k, v in g.clues.items()}}, _rows(g.solution)


def _sized(g: Any) -> tuple[Data, str]:
    return {"size": g.size, "initial": _plain(g)}, _rows(g.solution)


def _hitori(g: Any) -> tuple[Data, str]:
    return {"size": g.size, "grid": [list(r) for r in g.grid]}, _rows(g.solution, lambda v: str(int(v)))


def _nonogram(g: Any) -> tuple[Data, str]:
    p = {"size": g.size, "row_clues": [list(x) for x in g.row_clues], "col_clues": [list(x) for x in g.col_clues]}
    return p, _rows(g.solution)


def _clue_list(p: Data) -> str:
    rows = "\n".join(f"  row {i + 1}: {' '.join(map(str, c))}" for i, c in enumerate(p["row_clues"]))
    cols = "\n".join(f"  column {i + 1}: {' '.join(map(str, c))}" for i, c in enumerate(p["col_clues"]))
    return f"Row clues (0: no filled cell):\n{rows}\nColumn clues:\n{cols}"


def _stars(g: Any) -> tuple[Data, str]:
    p = {"size": g.size, "stars": g.stars_per_row, "regions": [list(r) for r in g.regions]}
    return p, _rows(g.solution)


def _tents(g: Any) -> tuple[Data, str]:
    p = {"size": g.size, "trees": [[int(t) for t in row] for row in g.trees],
         "row_counts": list(g.row_counts), "col_counts": list(g.col_counts)}  # fmt: skip
    return p, _rows(g.solution, lambda v: "1" if v == 2 else "0")


def _tent_list(p: Data) -> str:
    return (f"Tents per row, top to bottom: {' '.join(map(str, p['row_counts']))}\n"
            f"Tents per column, left to right: {' '.join(map(str, p['col_counts']))}")  # fmt: skip


def _nurikabe(g: Any) -> tuple[Data, str]:
    p = {"size": g.size, "clues": [list(c) for c in g.clues]}
    return p, _rows(g.solution, lambda v: "W" if v == 1 else "B")


def _shikaku(g: Any) -> tuple[Data, str]:
    clues = sorted([r, c, v] for (r, c), v in g.clues.items())
    return {"size": g.size, "clues": clues}, _rows(g.solution)


def _bridges(g: Any) -> tuple[Data, str]:
    islands = sorted([r, c, g.grid[r][c]] for r, c in g.islands)
    answer = "\n".join(f"{a + 1} {b + 1} {c + 1} {d + 1} {k}" for (a, b, c, d), k in sorted(g.solution.items()))
    return {"size": g.size, "islands": islands}, answer


def _numberlink(g: Any) -> tuple[Data, str]:
    path = g.__dict__.pop("_ptbench_path")
    segments: dict[int, list[tuple[int, int]]] = {}
    for r, c in path:
        segments.setdefault(g.solution[r][c], []).append((r, c))
    endpoints = {str(k): [list(a), list(b)] for k, (a, b) in sorted(g.endpoints.items())}
    answer = "\n".join(
        f"{k}: " + " ".join(f"{r + 1},{c + 1}" for r, c in cells) for k, cells in sorted(segments.items())
    )
    return {"size": g.size, "endpoints": endpoints}, answer


def _knapsack(g: Any) -> tuple[Data, str]:
    items = [{"weight": it.weight, "value": it.value} for it in g.items]
    p = {"items": items, "capacity": g.capacity, "target": g.optimal_value}
    return p, " ".join(str(i + 1) for i, chosen in enumerate(g.optimal_selection) if chosen)


def _scheduler(g: Any) -> tuple[Data, str]:
    p = {"durations": [t.duration for t in g.tasks], "workers": g.num_workers,
         "dependencies": [list(d) for d in g.dependencies], "target": g.optimal_makespan}  # fmt: skip
    answer = "\n".join(f"{t + 1} {w} {s}" for t, (w, s) in sorted(g.optimal_schedule.items()))
    return p, answer


def _islands_note(_p: Data) -> str:
    return (
        "As these rules state them, an island need not hold a number; an island that holds a number holds "
        "exactly one, and has that many cells."
    )


def _number_list(p: Data) -> str:
    return "The numbers, as (row,col): area:\n" + "\n".join(f"  ({r + 1},{c + 1}): {v}" for r, c, v in p["clues"])


# Kakuro's stored grid breaks its own clues (each run's digits are drawn apart and the crossing run
# writes over them), so its reference is this solver's: digit sets per (length, sum), the cell with
# fewest candidates first, within a node budget (a count, not a clock: the same seed always gives the
# same answer or none, and a seed with none, unsolvable or over budget, is skipped). Of 20 seeds, 3,000
# nodes solved 10 medium and 7 hard puzzles, 20,000 nodes 10 and 8: a seed skipped costs a tenth as much.
_SOLVER_NODES = 3_000
_COMBOS: dict[tuple[int, int], list[frozenset[int]]] = {}
for _k in range(1, 10):
    for _combo in combinations(range(1, 10), _k):
        _COMBOS.setdefault((_k, sum(_combo)), []).append(frozenset(_combo))


def solve_kakuro(p: Data) -> list[list[int]] | None:
    runs = checks.kakuro_runs(p)
    n = p["size"]
    white = [(r, c) for r in range(n) for c in range(n) if not p["black"][r][c]]
    of_cell: dict[tuple[int, int], list[int]] = {cell: [] for cell in white}
    for i, (cells, _) in enumerate(runs):
        for cell in cells:
            of_cell[cell].append(i)
    value: dict[tuple[int, int], int] = {}
    used: list[set[int]] = [set() for _ in runs]
    nodes = 0

    def fits(i: int) -> set[int]:
        """The digits still open to run i's empty cells: those of a digit set that holds its digits so far."""
        out: set[int] = set()
        for combo in _COMBOS.get((len(runs[i][0]), runs[i][1]), []):
            if used[i] <= combo:
                out |= combo - used[i]
        return out

    def search() -> bool:
        nonlocal nodes
        nodes += 1
        if nodes > _SOLVER_NODES:
            return False
        free = [cell for cell in white if cell not in value]
        if not free:
            return True
        open_ = [fits(i) for i in range(len(runs))]
        best: tuple[int, int] | None = None
        best_digits: set[int] = set()
        for cell in free:
            digits = set(range(1, 10))
            for i in of_cell[cell]:
                digits &= open_[i]
            if best is None or len(digits) < len(best_digits):
                best, best_digits = cell, digits
                if len(digits) <= 1:
                    break
        assert best is not None
        for digit in sorted(best_digits):
            value[best] = digit
            for i in of_cell[best]:
                used[i].add(digit)
            if search():
                return True
            for i in of_cell[best]:
                used[i].discard(digit)
            del value[best]
        return False

    if not search() or nodes > _SOLVER_NODES:
        return None
    return [[-1 if p["black"][r][c] else value[(r, c)] for c in range(n)] for r in range(n)]


def _kakuro(g: Any) -> tuple[Data, str]:
    p = {
        "size": g.size,
        "black": [[v == -1 for v in row] for row in g.initial_grid],
        "clues": [list(c) for c in g.clues],
    }
    solved = solve_kakuro(p)
    return p, "" if solved is None else _rows(solved, lambda v: "#" if v == -1 else str(v))


def _kakuro_note(_p: Data) -> str:
    return (
        "A clue (r,c) → S (k cells) is the run of k white cells from (r,c) rightwards, ↓ downwards; its "
        "digits sum to S, none twice. A white cell in no listed run takes any digit 1-9."
    )


def _sudoku(g: Any) -> tuple[Data, str]:
    return {"initial": _plain(g)}, _rows(g.solution)


def _futoshiki(g: Any) -> tuple[Data, str]:
    p = {"size": g.size, "initial": _plain(g), "inequalities": [[list(a), list(b)] for a, b in g.inequalities]}
    return p, _rows(g.solution)


def _inequality_list(p: Data) -> str:
    pairs = [f"  ({a + 1},{b + 1}) > ({c + 1},{d + 1})" for (a, b), (c, d) in p["inequalities"]]
    return "Every inequality, as (row,col) > (row,col):\n" + "\n".join(pairs)


def _lights(g: Any) -> tuple[Data, str]:
    return {"size": g.size, "lights": _plain(g)}, _rows(g.presses)


def _graph(g: Any) -> tuple[Data, str]:
    p = {"nodes": g.num_nodes, "colors": g.num_colors, "edges": sorted([a, b] for a, b in g.edges),
         "given": {str(k): v for k, v in sorted(g.initial_coloring.items())}}  # fmt: skip
    return p, " ".join(str(g.solution[k]) for k in range(1, g.num_nodes + 1))


def _slither(g: Any) -> tuple[Data, str]:
    return {"size": g.size, "clues": [list(r) for r in g.clues]}, _rows(g.solution_h_edges) + "\n" + _rows(
        g.solution_v_edges
    )


def _region_list(p: Data) -> str:
    return "Regions (each cell's region number):\n" + _rows(p["regions"])


_NAMES = {
    "killer": "killer_sudoku",
    "lights": "lights_out",
    "slither": "slitherlink",
}  # the library's keys where its folder is named otherwise
FAMILIES: dict[str, Family] = {_NAMES.get(f.key, f.key): f for f in [
    Family("binary", _grid_answer("0 or 1"), _binary, checks.check_binary),
    Family("kenken", _grid_answer("1 to the grid's size"), _kenken, checks.check_kenken, _cage_list),
    Family("killer", _grid_answer("1 to 9"), _killer, checks.check_killer, _cage_list),
    Family("skyscrapers", _grid_answer("1 to the grid's size"), _sky, checks.check_skyscrapers),
    Family("hidato", _grid_answer("every number once"), _sized, checks.check_hidato),
    Family("fillomino", _grid_answer("every cell's number"), _sized, checks.check_fillomino),
    Family("hitori", _grid_answer("1 for a shaded cell, 0 for an unshaded one"), _hitori, checks.check_hitori),
    Family("nonogram", _grid_answer("1 for a filled cell, 0 for an empty one"), _nonogram, checks.check_nonogram,
           _clue_list),
    Family("star_battle", _grid_answer("1 for a star, 0 for an empty cell"), _stars, checks.check_star_battle,
           _region_list),
    Family("tents", _grid_answer("1 for a tent, 0 for any other cell, trees included"), _tents, checks.check_tents,
           _tent_list),
    Family("nurikabe", _grid_answer("W for a white (island) cell, B for a black (sea) cell"), _nurikabe,
           checks.check_nurikabe, _islands_note),
    Family("shikaku", _grid_answer("each cell's rectangle label: letters or digits, one label per rectangle"),
           _shikaku, checks.check_shikaku, _number_list),
    Family("bridges", "every bridge, one line each: `r1 c1 r2 c2 k`, the two islands' row and column "
           "(1-based, as the board numbers them) and k, 1 or 2 bridges", _bridges, checks.check_bridges),
    Family("numberlink", "one line per pair: `k: r,c r,c ...`, the pair's number, then its path's cells in order "
           "from one endpoint to the other, each as row,column (1-based)", _numberlink, checks.check_numberlink),
    Family("kakuro", _grid_answer("# for a black cell, a digit 1 to 9 for a white one"), _kakuro, checks.check_kakuro,
           _kakuro_note),
    Family("sudoku", _grid_answer("1 to 9"), _sudoku, checks.check_sudoku),
    Family("futoshiki", _grid_answer("1 to the grid's size"), _futoshiki, checks.check_futoshiki, _inequality_list),
    Family("nqueens", _grid_answer("1 for a queen, 0 for an empty cell"), _sized, checks.check_nqueens),
    Family("lights", _grid_answer("1 for a light you press once, 0 for one you do not press"), _lights,
           checks.check_lights_out),
    Family("graph_coloring", "one line: the colour number of node 1, node 2, ... in order, separated by spaces",
           _graph, checks.check_graph_coloring),
    Family("slither", "first the grid's n+1 rows of horizontal edges, top to bottom, n values each, then its n rows "
           "of vertical edges, n+1 values each, left to right (1: the edge is on the loop, 0: it is not), one row "
           "a line, values separated by single spaces", _slither, checks.check_slitherlink),
    Family("knapsack", "one line: the numbers (the # column) of the items you select, separated by spaces",
           _knapsack, checks.check_knapsack),
    Family("scheduler", "one line per task: `task worker start`, the task's number (the # column), its worker "
           "(1 to the number of workers) and its start hour; the makespan must not exceed the optimal makespan "
           "stated", _scheduler, checks.check_scheduler),
]}  # fmt: skip


def _record_path(game: Any) -> None:
    """Numberlink's grid keeps no path: keep the Hamiltonian path the generator draws (or, when all
    its tries fail, the snake it falls back to) as the reference's paths."""
    draw = game._generate_hamiltonian_path
    n = game.size
    game.__dict__["_ptbench_path"] = [(r, c if r % 2 == 0 else n - 1 - c) for r in range(n) for c in range(n)]

    def recording() -> Any:
        path = draw()
        if path and len(path) == n * n:
            game.__dict__["_ptbench_path"] = list(path)
        return path

    game._generate_hamiltonian_path = recording


def make(family: str, difficulty: str, seed: int) -> tuple[str, Data, str]:
    """(the prompt's puzzle text, the puzzle data, the reference answer) of the library's puzzle."""
    from chuk_puzzles_gym.games import AVAILABLE_GAMES

    spec = FAMILIES[family]
    game = AVAILABLE_GAMES[spec.key](difficulty=difficulty, seed=seed)
    if spec.key == "numberlink":
        _record_path(game)
    asyncio.run(game.generate_puzzle())
    data, reference = spec.read(game)
    text = f"{game.get_rules()}\n\n{game.render_grid()}"
    if spec.listing is not None:
        text += "\n\n" + spec.listing(data)
    return text, data, reference
