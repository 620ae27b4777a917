"""TextArena's oracles and the two-player games' opponents (adapters/textarena.py plays them).

Each oracle reads the game's own state (the library's secret or solution where it keeps one, else a
solver on the board) and answers the next move in the game's own action format; `bootcamp verify`
plays them. Kept apart from the adapter so each module stays small."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any


def _hanoi(towers: dict[str, list[int]], k: int, target: str) -> tuple[str, str] | None:
    """The next move that brings disks 1..k onto `target` from any legal position."""
    if k == 0:
        return None
    source = next(p for p, disks in towers.items() if k in disks)
    if source == target:
        return _hanoi(towers, k - 1, target)
    other = ({"A", "B", "C"} - {source, target}).pop()
    return _hanoi(towers, k - 1, other) or (source, target)


def _frozen_lake(env: Any) -> str:
    from collections import deque

    grid, start, goal = env.state.game_state["grid"], tuple(env.state.game_state["player_pos"]), tuple(env.goal_pos)
    rows, cols = len(grid), len(grid[0])
    first: dict[tuple[int, int], str | None] = {start: None}
    queue = deque([start])
    while queue:
        r, c = queue.popleft()
        if (r, c) == goal:
            return f"[{first[(r, c)]}]"
        for name, (dr, dc) in env.actions.items():
            nxt = (r + dr, c + dc)
            if 0 <= nxt[0] < rows and 0 <= nxt[1] < cols and nxt not in first and grid[nxt[0]][nxt[1]] != "H":
                first[nxt] = first[(r, c)] or name
                queue.append(nxt)
    return "[up]"  # no path: the library made an unsolvable lake (verify reports the loss)


def _lights_out(env: Any) -> str:
    """Gaussian elimination over GF(2) with the library's own toggle rule; press the first cell of it."""
    n = env.size
    cells = [(r, c) for r in range(n) for c in range(n)]
    columns = []
    for r, c in cells:
        grid = [[False] * n for _ in range(n)]
        env._toggle_lights(grid, r, c)
        columns.append(sum(1 << i for i, (rr, cc) in enumerate(cells) if grid[rr][cc]))
    lit = sum(1 << i for i, (r, c) in enumerate(cells) if env.state.game_state["grid"][r][c])
    # rows of the augmented system A x = lit: row i has bit j when pressing j toggles cell i
    rows = [sum(((columns[j] >> i) & 1) << j for j in range(len(cells))) | (((lit >> i) & 1) << len(cells))
            for i in range(len(cells))]  # fmt: skip
    pivots, rank = [], 0
    for j in range(len(cells)):
        pick = next((i for i in range(rank, len(rows)) if (rows[i] >> j) & 1), None)
        if pick is None:
            continue
        rows[rank], rows[pick] = rows[pick], rows[rank]
        for i in range(len(rows)):
            if i != rank and (rows[i] >> j) & 1:
                rows[i] ^= rows[rank]
        pivots.append(j)
        rank += 1
    for i, j in enumerate(pivots):
        if (rows[i] >> len(cells)) & 1:
            r, c = cells[j]
            return f"[{r} {c}]"
    return "[0 0]"


def _sudoku(env: Any) -> str:
    board = env.state.game_state["board"]
    r, c = next((r, c) for r in range(9) for c in range(9) if board[r][c] == 0)
    return f"[{r + 1} {c + 1} {env.full_grid[r][c]}]"


def _secretary(env: Any) -> str:
    draws = env.state.game_state["draws"]
    return "[accept]" if draws[env.state.game_state["current_idx"] - 1] == max(draws) else "[continue]"


def _minesweeper(env: Any) -> str:
    if env.first_move:  # the library lays its mines after the first move, around it: any cell is safe
        return f"[{env.rows // 2} {env.cols // 2}]"
    r, c = next((r, c) for r in range(env.rows) for c in range(env.cols)
                if not env.revealed[r][c] and env.grid[r][c] != -1)  # fmt: skip
    return f"[{r} {c}]"


@lru_cache(maxsize=8)
def _cryptarithm_solution(addends: tuple[str, ...], result: str) -> dict[str, int]:
    """Brute force on the letters' place-value weights (the equation holds when they sum to 0)."""
    letters = sorted(set("".join(addends) + result))
    weight = dict.fromkeys(letters, 0)
    for sign, word in [(1, w) for w in addends] + [(-1, result)]:
        for place, ch in enumerate(reversed(word)):
            weight[ch] += sign * 10**place
    weights = [weight[ch] for ch in letters]
    firsts = [i for i, ch in enumerate(letters) if ch in {w[0] for w in (*addends, result)}]
    for digits in itertools.permutations(range(10), len(letters)):
        if sum(w * d for w, d in zip(weights, digits, strict=True)) == 0 and all(digits[i] for i in firsts):
            return dict(zip(letters, digits, strict=True))
    return {}


def _cryptarithm(env: Any) -> str:
    solution = _cryptarithm_solution(tuple(env.addends), env.result)
    letter = next((ch for ch in sorted(solution) if ch not in env.mapping), None)
    return f"[{letter} {solution[letter]}]" if letter else "[A 0]"


def _set(env: Any) -> str:
    """A Set on the board; where there is none, the library deals three more cards (the deck's last)
    before it reads the answer, so the Set is looked for on the board as it will be then."""
    board, deck = env.state.game_state["board"], env.state.game_state["deck"]
    for cards in (board, board + deck[::-1][:3]):
        for trio in itertools.combinations(range(len(cards)), 3):
            numbers, colors, fills, shapes = zip(*(cards[i] for i in trio), strict=True)
            if all(len(set(a)) in (1, 3) for a in (numbers, colors, fills, shapes)):
                return "[" + ", ".join(str(i + 1) for i in trio) + "]"
    return "[1, 2, 3]"  # no Set even after the deal (the deck ran out): verify reports the miss


@lru_cache(maxsize=4096)
def _peg_plan(board: tuple[bool, ...], moves: tuple[tuple[int, int, int], ...]) -> tuple[int, int] | None:
    """The first jump of a sequence that leaves one peg (depth-first; 15 holes keep it small)."""
    if sum(board) == 1:
        return None
    for f, o, t in moves:
        if board[f] and board[o] and not board[t]:
            nxt = list(board)
            nxt[f], nxt[o], nxt[t] = False, False, True
            if sum(nxt) == 1 or _peg_plan(tuple(nxt), moves) is not None:
                return (f, t)
    return None


def _peg_jump(env: Any) -> str:
    move = _peg_plan(tuple(env.state.game_state["board"]), tuple(env.ALLOWED_MOVES))
    return "[{} {}]".format(*move) if move else "[1 1]"


def _bfs_first(start: Any, goal: Callable[[Any], bool], moves: Callable[[Any], Any]) -> Any:
    """The first move of a shortest path from `start` to a goal state (None: none, or already there)."""
    from collections import deque

    first: dict[Any, Any] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if goal(state):
            return first[state]
        for move, nxt in moves(state):
            if nxt not in first:
                first[nxt] = first[state] if first[state] is not None else move
                queue.append(nxt)
    return None


def _rush_hour_plan(env: Any) -> tuple[str, bool] | None:
    size = env.BOARD_SIZE
    cars = {v.vid: (v.length, v.horizontal) for v in env.state.game_state["vehicles"].values()}
    start = tuple(sorted((v.vid, v.row, v.col) for v in env.state.game_state["vehicles"].values()))

    def goal(state: Any) -> bool:
        _, row, col = next(s for s in state if s[0] == "X")
        length, horizontal = cars["X"]
        return horizontal and row == 2 and col >= size - length

    def moves(state: Any) -> Any:
        taken = set()
        for vid, row, col in state:
            length, horizontal = cars[vid]
            taken |= {(row, col + i) if horizontal else (row + i, col) for i in range(length)}
        for k, (vid, row, col) in enumerate(state):
            length, horizontal = cars[vid]
            for forward in (True, False):
                step, reach = (1, length) if forward else (-1, -1)
                front = (row, col + reach) if horizontal else (row + reach, col)
                if 0 <= front[0] < size and 0 <= front[1] < size and front not in taken:
                    moved = (vid, row, col + step) if horizontal else (vid, row + step, col)
                    yield (vid, forward), state[:k] + (moved,) + state[k + 1 :]

    return _bfs_first(start, goal, moves)


def _rush_hour(env: Any) -> str:
    move = _rush_hour_plan(env)
    return f"[{move[0]}{'+' if move[1] else '-'}]" if move else "[X+]"


def _sokoban_plan(env: Any) -> str | None:
    import numpy as np

    fixed, room = env.room_fixed, env.room_state
    rows, cols = room.shape
    player = tuple(int(x) for x in np.argwhere(room == 5)[0])
    boxes = frozenset((int(r), int(c)) for r, c in np.argwhere((room == 3) | (room == 4)))
    targets = frozenset((int(r), int(c)) for r, c in np.argwhere(fixed == 2))
    steps = dict(zip(env.action_space, [(-1, 0), (1, 0), (0, -1), (0, 1)], strict=True))

    def free(cell: tuple[int, int], boxes: frozenset[tuple[int, int]]) -> bool:
        return 0 <= cell[0] < rows and 0 <= cell[1] < cols and fixed[cell] != 0 and cell not in boxes

    def moves(state: Any) -> Any:
        (r, c), boxes = state
        for name, (dr, dc) in steps.items():
            nxt = (r + dr, c + dc)
            if nxt in boxes:
                beyond = (r + 2 * dr, c + 2 * dc)
                if free(beyond, boxes):
                    yield name, (nxt, (boxes - {nxt}) | {beyond})
            elif free(nxt, boxes):
                yield name, (nxt, boxes)

    # the library's win: as many boxes on targets as it placed boxes
    return _bfs_first((player, boxes), lambda s: len(s[1] & targets) >= env.num_boxes, moves)


def _sokoban(env: Any) -> str:
    return f"[{_sokoban_plan(env) or 'up'}]"


@lru_cache(maxsize=4096)
def _countdown_plan(numbers: tuple[int, ...], target: int) -> tuple[int, int, str] | None:
    """The first move `[i j op]` of a sequence that makes `target`, with the library's own list
    operations (i and j removed, the result appended) and its rules (integer division only)."""
    for i, j in itertools.permutations(range(len(numbers)), 2):
        a, b = numbers[i], numbers[j]
        for op in "+-*/":
            if op == "/" and (b == 0 or a % b):
                continue
            result = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0}[op]
            if abs(result) > 1_000_000:
                continue
            if result == target:
                return (i, j, op)
            rest = tuple(n for k, n in enumerate(numbers) if k not in (i, j)) + (result,)
            if len(rest) > 1 and _countdown_plan(rest, target) is not None:
                return (i, j, op)
    return None


def _countdown(env: Any) -> str:
    move = _countdown_plan(tuple(env.numbers), env.target)
    return "[{} {} {}]".format(*move) if move else "[0 1 +]"


def _logic_puzzle(env: Any) -> str:
    """The first mark of the library's solution grid not made yet (one a turn: the library takes
    several in one answer, but then a hedge that holds the right marks would pass too)."""
    board = env.game_board
    return next((f"[{row} {col} {mark}]" for grid, rows in env.game_board_solution.items()
                 for row, cols in rows.items() for col, mark in cols.items() if board[grid][row][col] != mark),
                "[x x X]")  # fmt: skip


ORACLES: dict[str, Callable[[Any], str]] = {
    "Set-v0": _set,
    "PegJump-v0": _peg_jump,
    "RushHour-v0": _rush_hour,
    "Sokoban-v0": _sokoban,
    "Countdown-v0": _countdown,
    "LogicPuzzle-v0": _logic_puzzle,
    "Minesweeper-v0": _minesweeper,
    "Cryptarithm-v0": _cryptarithm,
    "GuessTheNumber-v0": lambda env: f"[{env.state.game_state['game_number']}]",
    "Mastermind-v0": lambda env: "[" + " ".join(map(str, env.state.game_state["secret_code"])) + "]",
    "ThreeCardMonte-v0": lambda env: f"[{env.ball_pos}]",
    "TowerOfHanoi-v0": lambda env: "[{} {}]".format(
        *(_hanoi(env.state.game_state["towers"], env.num_disks, "C") or "AC")
    ),
    "FrozenLake-v0": _frozen_lake,
    "LightsOut-v0": _lights_out,
    "Sudoku-v0": _sudoku,
    "Secretary-v0": _secretary,
}


# ------------------------------------------------------------------------------ two-player games
# The model holds seat 0 (it moves first); the adapter plays seat 1 with a uniform draw among its
# legal moves (OPPONENTS), from the game's own RNG copy, so a case (game, seed) and the model's moves
# fix the whole game. The library pays 1 for a win, 0 for a draw, -1 for a loss or for a second
# invalid move in a row: clamped, only a win pays. The oracles search; a case is a seed the oracle
# wins (WINNABLE_ONLY), as for the PettingZoo games against a random opponent.

_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _wild_cells(env: Any) -> tuple[str, ...]:
    return tuple(cell for row in env.state.game_state["board"] for cell in row)


def _wild_moves(env: Any) -> list[str]:
    return [f"[{mark} {i}]" for i, cell in enumerate(_wild_cells(env)) if cell == "" for mark in "XO"]


@cache
def _wild_value(cells: tuple[str, ...]) -> int:
    """Negamax value for the player to move (1 win, 0 draw, -1 loss): a line of either mark wins."""
    best = -2
    for i in (i for i, cell in enumerate(cells) if cell == ""):
        for mark in "XO":
            nxt = cells[:i] + (mark,) + cells[i + 1 :]
            if any(all(nxt[k] == mark for k in line) for line in _LINES):
                return 1
            best = max(best, 0 if "" not in nxt else -_wild_value(nxt))
    return best if best > -2 else 0


def _wild_tic_tac_toe(env: Any) -> str:
    """Exact play: a move that keeps the best game-theoretic value (the first player wins this game)."""
    cells, target = _wild_cells(env), _wild_value(_wild_cells(env))
    for i in (i for i, cell in enumerate(cells) if cell == ""):
        for mark in "XO":
            nxt = cells[:i] + (mark,) + cells[i + 1 :]
            won = any(all(nxt[k] == mark for k in line) for line in _LINES)
            if (1 if won else 0 if "" not in nxt else -_wild_value(nxt)) == target:
                return f"[{mark} {i}]"
    return "[X 0]"


def _chop_moves(mine: tuple[int, int], theirs: tuple[int, int]) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    """(action, the mover's hands after, the other's hands after), as the library's step applies them."""
    out = []
    for m in (0, 1):
        for o in (0, 1):
            if mine[m] and theirs[o]:
                hit = list(theirs)
                hit[o] = 0 if mine[m] + theirs[o] >= 5 else mine[m] + theirs[o]
                out.append((f"[attack {m} {o}]", mine, (hit[0], hit[1])))
    total = sum(mine)
    out += [(f"[split {a} {total - a}]", (a, total - a), theirs) for a in range(total + 1) if (a, total - a) != mine]
    return out


def _chopsticks_opponent(env: Any) -> list[str]:
    hands = env.state.game_state["hands"]
    return [a for a, _, _ in _chop_moves(tuple(hands[1]), tuple(hands[0]))]


def _chop_reply_value(mine: tuple[int, int], theirs: tuple[int, int], depth: int) -> float:
    """Seat 0's chance to win within `depth` more of its moves after it made (mine, theirs): the
    opponent's uniform reply comes first."""
    if theirs == (0, 0):
        return 1.0
    replies = _chop_moves(theirs, mine)
    return sum(0.0 if after == (0, 0) else _chop_value(after, hand, depth) for _, hand, after in replies) / len(replies)


@lru_cache(maxsize=200_000)
def _chop_value(me: tuple[int, int], them: tuple[int, int], depth: int) -> float:
    """Seat 0's chance to win within `depth` more of its own moves, it to move, against the uniform opponent."""
    if depth == 0:
        return 0.0
    return max(_chop_reply_value(mine, theirs, depth - 1) for _, mine, theirs in _chop_moves(me, them))


def _chopsticks(env: Any) -> str:
    hands, left = env.state.game_state["hands"], (env.state.max_turns - env.state.turn + 1) // 2
    depth = min(left, 6)  # a 6-move lookahead: the seed filter, not the depth, makes the cases winnable
    moves = _chop_moves(tuple(hands[0]), tuple(hands[1]))
    return max(moves, key=lambda m: _chop_reply_value(m[1], m[2], depth - 1))[0]


OPPONENTS: dict[str, Callable[[Any], list[str]]] = {
    "WildTicTacToe-v0": _wild_moves,
    "Chopsticks-v0": _chopsticks_opponent,
}
ORACLES |= {"WildTicTacToe-v0": _wild_tic_tac_toe, "Chopsticks-v0": _chopsticks}
