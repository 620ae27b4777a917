"""ptbench's own exact checks of chuk-puzzles-gym answers (the library's `is_complete` compares with its
one stored grid, or skips rules: KenKen's ignores rows and columns once a grid is set whole).

Each check takes the answer text (inside the answer tags) and the case's puzzle data and says whether
the answer satisfies every rule the prompt states: givens kept, every cell filled, nothing extra. The
parsers are strict: a second grid, a hedge ("1 or 2"), a candidate list or a claimed score does not
parse, and an answer that does not parse is wrong. Coordinates in answers are 1-based, as the
library's boards print them; puzzle data here is 0-based, as the library keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Grid = list[list[int]]
Cell = tuple[int, int]


def parse_grid(text: str, rows: int, cols: int, allowed: Callable[[str], int | None]) -> Grid | None:
    """`rows` non-empty lines of `cols` whitespace-separated tokens, each mapped by `allowed`
    (None: a token that is not allowed, so no grid)."""
    lines = [line.split() for line in text.strip().splitlines() if line.strip()]
    if len(lines) != rows or any(len(line) != cols for line in lines):
        return None
    grid = [[allowed(tok) for tok in line] for line in lines]
    if any(v is None for row in grid for v in row):
        return None
    return grid  # type: ignore[return-value]  # no None left


def number_in(low: int, high: int) -> Callable[[str], int | None]:
    def allowed(tok: str) -> int | None:
        return int(tok) if re.fullmatch(r"\d{1,3}", tok) and low <= int(tok) <= high else None

    return allowed


def _neighbours(r: int, c: int, n: int, m: int, diagonal: bool = False) -> list[Cell]:
    steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    if diagonal:
        steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    return [(r + a, c + b) for a, b in steps if 0 <= r + a < n and 0 <= c + b < m]


def components(cells: set[Cell], n: int, m: int) -> list[set[Cell]]:
    """The orthogonally connected components of `cells` (in row-major order of their first cell)."""
    seen: set[Cell] = set()
    out = []
    for start in sorted(cells):
        if start in seen:
            continue
        part, stack = {start}, [start]
        while stack:
            for nb in _neighbours(*stack.pop(), n, m):
                if nb in cells and nb not in part:
                    part.add(nb)
                    stack.append(nb)
        seen |= part
        out.append(part)
    return out


def reachable(start: Cell, edges: list[tuple[Cell, Cell]]) -> set[Cell]:
    """The points joined to `start` by `edges` (bridges between islands, loop edges between dots)."""
    reach, stack = {start}, [start]
    while stack:
        here = stack.pop()
        for a, b in edges:
            other = b if a == here else a if b == here else None
            if other is not None and other not in reach:
                reach.add(other)
                stack.append(other)
    return reach


def givens_kept(grid: Grid, initial: Grid, empty: int) -> bool:
    return all(
        g == empty or g == v for grow, vrow in zip(initial, grid, strict=True) for g, v in zip(grow, vrow, strict=True)
    )


def latin(grid: Grid, n: int) -> bool:
    want = set(range(1, n + 1))
    return all(set(row) == want for row in grid) and all({grid[r][c] for r in range(n)} == want for c in range(n))


def runs(line: list[int]) -> list[int]:
    """Lengths of the runs of 1s (a line with none: [0], as the library writes an empty clue)."""
    found = [len(m) for m in "".join(map(str, line)).split("0") if m]
    return found or [0]


def visible(line: list[int]) -> int:
    count, top = 0, 0
    for h in line:
        if h > top:
            count, top = count + 1, h
    return count


# ------------------------------------------------------------------------------------ the families


def check_binary(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, number_in(0, 1))
    if g is None or not givens_kept(g, p["initial"], -1):
        return False
    cols = [list(col) for col in zip(*g, strict=True)]
    lines = g + cols
    if any(line.count(0) != n // 2 for line in lines):
        return False
    if any(a == b == c for line in lines for a, b, c in zip(line, line[1:], line[2:], strict=False)):
        return False
    return len({tuple(row) for row in g}) == n and len({tuple(col) for col in cols}) == n


def _cage_ok(values: list[int], op: str | None, target: int) -> bool:
    if op is None:
        return len(values) == 1 and values[0] == target
    if op == "+":
        return sum(values) == target
    if op == "*":
        product = 1
        for v in values:
            product *= v
        return product == target
    if len(values) != 2:
        return False
    big, small = max(values), min(values)
    return big - small == target if op == "-" else small * target == big


def check_kenken(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, number_in(1, n))
    if g is None or not latin(g, n):
        return False
    return all(_cage_ok([g[r][c] for r, c in cage["cells"]], cage["op"], cage["target"]) for cage in p["cages"])


def check_killer(text: str, p: dict[str, Any]) -> bool:
    g = parse_grid(text, 9, 9, number_in(1, 9))
    if g is None or not latin(g, 9) or not givens_kept(g, p["initial"], 0):
        return False
    cages = [[g[r][c] for r, c in cage["cells"]] for cage in p["cages"]]
    return (_boxes_ok(g)
            and all(len(set(vals)) == len(vals) and sum(vals) == cage["target"]
                    for vals, cage in zip(cages, p["cages"], strict=True)))  # fmt: skip


def check_skyscrapers(text: str, p: dict[str, Any]) -> bool:
    n, clues = p["size"], p["clues"]
    g = parse_grid(text, n, n, number_in(1, n))
    if g is None or not latin(g, n) or not givens_kept(g, p["initial"], 0):
        return False
    cols = [[g[r][c] for r in range(n)] for c in range(n)]
    sides = {"top": cols, "bottom": [col[::-1] for col in cols], "left": g, "right": [row[::-1] for row in g]}
    return all(clue == 0 or visible(line) == clue
               for side, lines in sides.items() for clue, line in zip(clues[side], lines, strict=True))  # fmt: skip


def check_hidato(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, number_in(1, n * n))
    if g is None or not givens_kept(g, p["initial"], 0):
        return False
    where = {g[r][c]: (r, c) for r in range(n) for c in range(n)}
    if len(where) != n * n:
        return False
    return all(
        max(abs(where[k][0] - where[k + 1][0]), abs(where[k][1] - where[k + 1][1])) == 1 for k in range(1, n * n)
    )


def check_fillomino(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, number_in(1, n * n))
    if g is None or not givens_kept(g, p["initial"], 0):
        return False
    # a region is a connected block of one number; two same-sized regions that touch would be one block
    for value in {v for row in g for v in row}:
        cells = {(r, c) for r in range(n) for c in range(n) if g[r][c] == value}
        if any(len(part) != value for part in components(cells, n, n)):
            return False
    return True


def check_hitori(text: str, p: dict[str, Any]) -> bool:
    numbers, n = p["grid"], p["size"]
    g = parse_grid(text, n, n, number_in(0, 1))
    if g is None:
        return False
    white = {(r, c) for r in range(n) for c in range(n) if g[r][c] == 0}
    for i in range(n):
        row = [numbers[i][c] for c in range(n) if (i, c) in white]
        col = [numbers[r][i] for r in range(n) if (r, i) in white]
        if len(set(row)) != len(row) or len(set(col)) != len(col):
            return False
    shaded_touch = any(g[r][c] and g[a][b] for r in range(n) for c in range(n) for a, b in _neighbours(r, c, n, n))
    return not shaded_touch and len(components(white, n, n)) == 1


def check_nonogram(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, number_in(0, 1))
    return (g is not None and [runs(row) for row in g] == p["row_clues"]
            and [runs(list(col)) for col in zip(*g, strict=True)] == p["col_clues"])  # fmt: skip


def check_star_battle(text: str, p: dict[str, Any]) -> bool:
    n, k, regions = p["size"], p["stars"], p["regions"]
    g = parse_grid(text, n, n, number_in(0, 1))
    if g is None:
        return False
    stars = [(r, c) for r in range(n) for c in range(n) if g[r][c]]
    per_region: dict[int, int] = {}
    for r, c in stars:
        per_region[regions[r][c]] = per_region.get(regions[r][c], 0) + 1
    ids = {v for row in regions for v in row}
    return (all(sum(row) == k for row in g) and all(sum(col) == k for col in zip(*g, strict=True))
            and all(per_region.get(i, 0) == k for i in ids)
            and not any(g[a][b] for r, c in stars for a, b in _neighbours(r, c, n, n, diagonal=True)))  # fmt: skip


def check_tents(text: str, p: dict[str, Any]) -> bool:
    n, trees = p["size"], p["trees"]
    g = parse_grid(text, n, n, number_in(0, 1))
    if g is None:
        return False
    tents = [(r, c) for r in range(n) for c in range(n) if g[r][c]]
    tree_cells = [(r, c) for r in range(n) for c in range(n) if trees[r][c]]
    counts = [sum(row) for row in g] == p["row_counts"] and [sum(c) for c in zip(*g, strict=True)] == p["col_counts"]
    return (not any(trees[r][c] for r, c in tents) and counts
            and not any(g[a][b] for r, c in tents for a, b in _neighbours(r, c, n, n, diagonal=True))
            and all(sum(g[a][b] for a, b in _neighbours(r, c, n, n)) == 1 for r, c in tree_cells)
            and all(sum(trees[a][b] for a, b in _neighbours(r, c, n, n)) == 1 for r, c in tents))  # fmt: skip


def check_nurikabe(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, {"W": 0, "B": 1}.get)
    if g is None:
        return False
    clues = {(r, c): size for r, c, size in p["clues"]}
    white = {(r, c) for r in range(n) for c in range(n) if g[r][c] == 0}
    black = {(r, c) for r in range(n) for c in range(n) if g[r][c] == 1}
    for island in components(white, n, n):  # the library's rules (and its solutions) allow an island with no number
        inside = [clues[cell] for cell in island if cell in clues]
        if len(inside) > 1 or (inside and inside[0] != len(island)):
            return False
    pools = any(g[r][c] and g[r + 1][c] and g[r][c + 1] and g[r + 1][c + 1] for r in range(n - 1) for c in range(n - 1))
    return all(cell in white for cell in clues) and len(components(black, n, n)) <= 1 and not pools


def check_shikaku(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, lambda tok: tok if re.fullmatch(r"[A-Za-z0-9]{1,3}", tok) else None)  # type: ignore[arg-type,return-value]
    if g is None:
        return False
    clues = {(r, c): area for r, c, area in p["clues"]}
    for label in {v for row in g for v in row}:
        cells = [(r, c) for r in range(n) for c in range(n) if g[r][c] == label]
        rows, cols = [r for r, _ in cells], [c for _, c in cells]
        box = (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1)
        inside = [clues[cell] for cell in cells if cell in clues]
        if box != len(cells) or len(inside) != 1 or inside[0] != len(cells):
            return False
    return True


_BRIDGE = re.compile(r"(\d{1,2}) (\d{1,2}) (\d{1,2}) (\d{1,2}) ([12])")


def check_bridges(text: str, p: dict[str, Any]) -> bool:
    """Lines `r1 c1 r2 c2 k`: k (1 or 2) bridges between two islands in one row or column with no
    island between them; no pair twice, no two bridges crossing, every island's count met, one network."""
    need = {(r, c): v for r, c, v in p["islands"]}
    lines = [" ".join(line.split()) for line in text.strip().splitlines() if line.strip()]
    spans: dict[tuple[Cell, Cell], int] = {}
    for line in lines:
        m = _BRIDGE.fullmatch(line)
        if m is None:
            return False
        r1, c1, r2, c2, k = (int(x) for x in m.groups())
        a, b = sorted([(r1 - 1, c1 - 1), (r2 - 1, c2 - 1)])
        if a not in need or b not in need or a == b or (a[0] != b[0] and a[1] != b[1]) or (a, b) in spans:
            return False
        spans[(a, b)] = k
    covered: dict[Cell, str] = {}
    for a, b in spans:
        horizontal = a[0] == b[0]
        between = ([(a[0], c) for c in range(a[1] + 1, b[1])] if horizontal
                   else [(r, a[1]) for r in range(a[0] + 1, b[0])])  # fmt: skip
        for cell in between:
            if cell in need or cell in covered:  # an island in the way, or another bridge crossing
                return False
            covered[cell] = "h" if horizontal else "v"
    degree = dict.fromkeys(need, 0)
    for (a, b), k in spans.items():
        degree[a] += k
        degree[b] += k
    if degree != need:
        return False
    return reachable(min(need), list(spans)) == set(need)


_CELL = re.compile(r"(\d{1,2}),(\d{1,2})")


def check_numberlink(text: str, p: dict[str, Any]) -> bool:
    """Lines `k: r,c r,c ...`, one per pair: a path of orthogonal steps from one of k's endpoints to the
    other; the paths share no cell and together cover the whole grid."""
    n, ends = p["size"], {int(k): {tuple(a), tuple(b)} for k, (a, b) in p["endpoints"].items()}
    paths: dict[int, list[Cell]] = {}
    for line in (x.strip() for x in text.strip().splitlines() if x.strip()):
        head, sep, rest = line.partition(":")
        if not sep or not head.strip().isdigit() or int(head) in paths:
            return False
        cells = []
        for tok in rest.split():
            m = _CELL.fullmatch(tok)
            if m is None:
                return False
            cells.append((int(m[1]) - 1, int(m[2]) - 1))
        paths[int(head)] = cells
    if set(paths) != set(ends):
        return False
    used: set[Cell] = set()
    for k, cells in paths.items():
        if len(cells) < 2 or {cells[0], cells[-1]} != ends[k]:
            return False
        if any(abs(a[0] - b[0]) + abs(a[1] - b[1]) != 1 for a, b in zip(cells, cells[1:], strict=False)):
            return False
        if used & set(cells) or len(set(cells)) != len(cells):
            return False
        used |= set(cells)
    return used == {(r, c) for r in range(n) for c in range(n)}


def check_knapsack(text: str, p: dict[str, Any]) -> bool:
    """One line of distinct item numbers: within the capacity, worth at least the target value."""
    tokens = text.split()
    if not tokens or not all(re.fullmatch(r"\d{1,3}", t) for t in tokens):
        return False
    chosen = [int(t) - 1 for t in tokens]
    items = p["items"]
    if len(set(chosen)) != len(chosen) or not all(0 <= i < len(items) for i in chosen):
        return False
    weight = sum(items[i]["weight"] for i in chosen)
    value = sum(items[i]["value"] for i in chosen)
    return weight <= p["capacity"] and value >= p["target"]


_ASSIGN = re.compile(r"(\d{1,3}) (\d{1,3}) (\d{1,4})")


def check_scheduler(text: str, p: dict[str, Any]) -> bool:
    """Lines `task worker start`, every task once: a worker does one task at a time, a task starts
    after each of its prerequisites ends, and the last task ends by the target makespan."""
    durations, workers = p["durations"], p["workers"]
    plan: dict[int, tuple[int, int]] = {}
    for line in (" ".join(x.split()) for x in text.strip().splitlines() if x.strip()):
        m = _ASSIGN.fullmatch(line)
        if m is None:
            return False
        task, worker, start = int(m[1]) - 1, int(m[2]), int(m[3])
        if task in plan or not 0 <= task < len(durations) or not 1 <= worker <= workers:
            return False
        plan[task] = (worker, start)
    if set(plan) != set(range(len(durations))):
        return False
    end = {t: s + durations[t] for t, (_, s) in plan.items()}
    if any(plan[after][1] < end[before] for before, after in p["dependencies"]):
        return False
    for w in range(1, workers + 1):
        slots = sorted((s, end[t]) for t, (wk, s) in plan.items() if wk == w)
        if any(b[0] < a[1] for a, b in zip(slots, slots[1:], strict=False)):
            return False
    return max(end.values()) <= p["target"]


def kakuro_runs(p: dict[str, Any]) -> list[tuple[list[Cell], int]]:
    """Each clue's run: its cells from the clue's (first white) cell rightwards or downwards, and its sum."""
    return [([(r, c + k) if d == "h" else (r + k, c) for k in range(length)], total)
            for r, c, d, total, length in p["clues"]]  # fmt: skip


def check_kakuro(text: str, p: dict[str, Any]) -> bool:
    """`#` exactly on the black cells, a digit 1-9 on every white one; each run sums to its clue with
    no digit twice."""
    n, black = p["size"], p["black"]
    g = parse_grid(text, n, n, lambda tok: -1 if tok == "#" else number_in(1, 9)(tok))
    if g is None or any((g[r][c] == -1) != black[r][c] for r in range(n) for c in range(n)):
        return False
    for cells, total in kakuro_runs(p):
        digits = [g[r][c] for r, c in cells]
        if -1 in digits or len(set(digits)) != len(digits) or sum(digits) != total:
            return False
    return True


def _boxes_ok(g: Grid) -> bool:
    return all(
        len({g[br + i][bc + j] for i in range(3) for j in range(3)}) == 9 for br in (0, 3, 6) for bc in (0, 3, 6)
    )


def check_sudoku(text: str, p: dict[str, Any]) -> bool:
    g = parse_grid(text, 9, 9, number_in(1, 9))
    return g is not None and latin(g, 9) and _boxes_ok(g) and givens_kept(g, p["initial"], 0)


def check_futoshiki(text: str, p: dict[str, Any]) -> bool:
    """Latin, the givens kept, and each inequality `[bigger cell, smaller cell]` holds."""
    n = p["size"]
    g = parse_grid(text, n, n, number_in(1, n))
    if g is None or not latin(g, n) or not givens_kept(g, p["initial"], 0):
        return False
    return all(g[a][b] > g[c][d] for (a, b), (c, d) in p["inequalities"])


def check_nqueens(text: str, p: dict[str, Any]) -> bool:
    n = p["size"]
    g = parse_grid(text, n, n, number_in(0, 1))
    if g is None or not givens_kept(g, p["initial"], 0):
        return False
    queens = [(r, c) for r in range(n) for c in range(n) if g[r][c]]
    lines = [{r for r, _ in queens}, {c for _, c in queens}, {r - c for r, c in queens}, {r + c for r, c in queens}]
    return len(queens) == n and all(len(line) == n for line in lines)


def check_lights_out(text: str, p: dict[str, Any]) -> bool:
    """A press grid (1: pressed once) that turns every light off, each press toggling the cell and its
    orthogonal neighbours."""
    n = p["size"]
    g = parse_grid(text, n, n, number_in(0, 1))
    if g is None:
        return False
    lights = [row[:] for row in p["lights"]]
    for r, c in ((r, c) for r in range(n) for c in range(n) if g[r][c]):
        for a, b in [(r, c), *_neighbours(r, c, n, n)]:
            lights[a][b] ^= 1
    return not any(v for row in lights for v in row)


def check_graph_coloring(text: str, p: dict[str, Any]) -> bool:
    """One line: node 1's colour, node 2's, ... (1 to k); the given colours kept, no edge within a colour."""
    grid = parse_grid(text, 1, p["nodes"], number_in(1, p["colors"]))
    if grid is None:
        return False
    colour = dict(enumerate(grid[0], 1))
    return all(colour[int(node)] == c for node, c in p["given"].items()) and all(
        colour[a] != colour[b] for a, b in p["edges"]
    )


def check_slitherlink(text: str, p: dict[str, Any]) -> bool:
    """n+1 lines of n horizontal edges, then n lines of n+1 vertical edges (1: on the loop): every clue's
    cell has that many loop edges, every dot 0 or 2, and the edges are one loop."""
    n = p["size"]
    lines = [line for line in text.strip().splitlines() if line.strip()]
    h = parse_grid("\n".join(lines[: n + 1]), n + 1, n, number_in(0, 1))
    v = parse_grid("\n".join(lines[n + 1 :]), n, n + 1, number_in(0, 1))
    if h is None or v is None:
        return False
    for r, row in enumerate(p["clues"]):
        for c, clue in enumerate(row):
            if clue >= 0 and h[r][c] + h[r + 1][c] + v[r][c] + v[r][c + 1] != clue:
                return False
    edges = [((i, j), (i, j + 1)) for i in range(n + 1) for j in range(n) if h[i][j]]
    edges += [((i, j), (i + 1, j)) for i in range(n) for j in range(n + 1) if v[i][j]]
    degree: dict[Cell, int] = {}
    for a, b in edges:
        degree[a], degree[b] = degree.get(a, 0) + 1, degree.get(b, 0) + 1
    if not edges or any(d != 2 for d in degree.values()):
        return False
    return reachable(edges[0][0], edges) == set(degree)
