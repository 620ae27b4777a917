"""Reference answers and exact checks for the reasoning-gym datasets whose items carry no answer
(adapters/reasoning_gym.py uses them; kept apart so that module stays small).

An oracle reads the library's own item (its metadata's example solution where it keeps one, else a
small solver on the puzzle it describes) and writes an answer in the format the question asks for;
the library's scorer, which simulates or checks the answer, still decides. A check is ptbench's own,
for a scorer that `bootcamp verify` caught crediting a wrong answer."""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from typing import Any

_MOVE = re.compile(r"([A-Z])([+-])(\d+)")


def _graph_color(entry: dict[str, Any]) -> str:
    # the generator's own greedy colouring (it redraws the graph until one exists)
    return json.dumps({str(v): c for v, c in entry["metadata"]["possible_answer"].items()})


def _rubiks_cube(entry: dict[str, Any]) -> str | None:
    # magiccube's BasicSolver's moves, which the generator keeps for 3x3x3 cubes only
    return entry["metadata"]["example_correct_answer"] if entry["metadata"]["cube_size"] == 3 else None


def _boxnet(entry: dict[str, Any]) -> str:
    """One action a step: each box walked square by square (rows first) to its colour's target, then
    matched there. Boxes and targets of a colour are paired in the order the squares list them."""

    def where(item: str) -> list[tuple[float, float]]:
        return [tuple(map(float, sq.split("_"))) for sq, items in state.items() for x in items if x == item]  # type: ignore[misc]

    state = entry["metadata"]["initial_state"]
    colours = sorted({x[4:] for items in state.values() for x in items if x.startswith("box_")})
    plan: list[dict[str, str]] = []
    for colour in colours:
        for (r, c), (tr, tc) in zip(where(f"box_{colour}"), where(f"target_{colour}"), strict=True):
            while (r, c) != (tr, tc):
                nr, nc = (r + (1 if tr > r else -1), c) if r != tr else (r, c + (1 if tc > c else -1))
                plan.append({f"Agent[{r}, {c}]": f"move(box_{colour}, square[{nr}, {nc}])"})
                r, c = nr, nc
            plan.append({f"Agent[{r}, {c}]": f"move(box_{colour}, target_{colour})"})
    return json.dumps(plan)


def _rush_hour_pieces(config: str) -> tuple[list[tuple[int, int, int]], int]:
    """(position, size, stride) of each movable piece in the library's order (its labels sorted,
    named A, B, ... as the board it prints), and the walls' cell mask."""
    cells: dict[str, list[int]] = {}
    walls = 0
    for i, label in enumerate(config):
        if label == "x":
            walls |= 1 << i
        elif label != "o":
            cells.setdefault(label, []).append(i)
    return [(ps[0], len(ps), ps[1] - ps[0]) for _, ps in sorted(cells.items())], walls


def _rush_hour(entry: dict[str, Any]) -> str | None:
    """A shortest solution by breadth-first search over the pieces' positions (moves of any length
    a piece can slide, as 'B+2'); None if the board has none."""
    from reasoning_gym.games.rush_hour import BOARD_SIZE, TARGET

    pieces, walls = _rush_hour_pieces(entry["metadata"]["board_config"])
    sizes = [(size, stride) for _, size, stride in pieces]

    def occupied(positions: tuple[int, ...], skip: int) -> int:
        mask = walls
        for k, p in enumerate(positions):
            if k != skip:
                for j in range(sizes[k][0]):
                    mask |= 1 << (p + j * sizes[k][1])
        return mask

    def fits(k: int, p: int, mask: int) -> bool:
        size, stride = sizes[k]
        if p < 0 or p + (size - 1) * stride >= BOARD_SIZE * BOARD_SIZE:
            return False
        if stride == 1 and p // BOARD_SIZE != (p + size - 1) // BOARD_SIZE:
            return False  # a horizontal piece stays in its row
        return not any(mask >> (p + j * stride) & 1 for j in range(size))

    start = tuple(p for p, _, _ in pieces)
    seen: dict[tuple[int, ...], tuple[tuple[int, ...], str] | None] = {start: None}
    queue = deque([start])
    while queue:
        positions = queue.popleft()
        if positions[0] == TARGET:
            moves = []
            step = seen[positions]
            while step is not None:
                positions, move = step
                moves.append(move)
                step = seen[positions]
            return " ".join(reversed(moves))
        for k in range(len(pieces)):
            mask, stride = occupied(positions, k), sizes[k][1]
            for sign in (1, -1):
                n = 1
                while fits(k, positions[k] + sign * n * stride, mask):
                    nxt = positions[:k] + (positions[k] + sign * n * stride,) + positions[k + 1 :]
                    if nxt not in seen:
                        seen[nxt] = (positions, f"{chr(ord('A') + k)}{'+' if sign > 0 else '-'}{n}")
                        queue.append(nxt)
                    n += 1
    return None


ORACLES: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "graph_color": _graph_color,
    "rubiks_cube": _rubiks_cube,
    "boxnet": _boxnet,
    "rush_hour": _rush_hour,
}


def rush_hour_legal(extracted: str, entry: dict[str, Any]) -> bool:
    """The library's board ignores a move it cannot make (a blocked car, a wall, a letter of no car)
    and reads moves out of any text, so 'R or W' scored 1 where W left the solved car alone: ptbench
    asks for moves alone, each one the car can make in full."""
    from reasoning_gym.games.rush_hour import Board

    tokens = extracted.replace(",", " ").split()
    if not tokens or not all(_MOVE.fullmatch(t) for t in tokens):
        return False
    board = Board(entry["metadata"]["board_config"])
    movable = sum(1 for p in board._pieces if not p.fixed)  # noqa: SLF001 - the library keeps no public list
    for token in tokens:
        letter, sign, n = _MOVE.fullmatch(token).groups()  # type: ignore[union-attr]
        k, steps = ord(letter) - ord("A"), int(n) if sign == "+" else -int(n)
        if k >= movable or steps == 0:
            return False
        piece = board._pieces[k]  # noqa: SLF001
        before = piece.position
        board.move(letter, steps)
        if piece.position != before + steps * piece.stride:
            return False
    return True


def same_word_count(extracted: str, entry: dict[str, Any]) -> bool:
    """letter_jumble's scorer credits the answer's words position by position and ignores any past
    its length, so 'R or W' with W last scored 1: ptbench asks for the answer's number of words."""
    return len(extracted.split()) == len(str(entry["answer"]).split())
