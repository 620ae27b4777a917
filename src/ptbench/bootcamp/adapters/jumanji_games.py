"""InstaDeep's Jumanji (JAX) puzzles as multi-turn ptbench environments
(`pip install 'ptbench[bootcamp-jumanji]'`).

One environment per family, `jumanji.<Env>`, at the library's default generator settings, each played
step by step in Jumanji's own environment (`env.step`, jitted once per process): ptbench renders the
state as text and turns the model's `Action:` line into the library's action array.
- `BinPack`: pack up to 20 boxes (no rotation) into a 20-ft container, one a turn, each at the first
  corner of one of the empty maximal spaces the library lists; a move that does not fit ends the game.
- `Cleaner`: three robots clean every tile of a 10x10 maze within the library's 100 turns; every robot
  moves every turn and a move into a wall ends the game.
- `Connector`: a 10x10 grid with 10 wires (A-J), each a start and a target; every turn each wire may
  move one cell (up/down/left/right), never across another wire; connect every wire within the
  library's 50 steps.
- `FlatPack`: an 11x11 grid and 25 pieces of at most 3x3 cells (cut from the grid by the generator,
  then rotated and shuffled); place one piece a turn (rotation and top-left corner) until all 25 fill
  the grid. The library ends the game after 25 placements, a refused one included.
A case is (game, seed): the library's generator draws the instance from `jax.random.PRNGKey(seed)`
(FlatPack and BinPack: a seed whose generator's solution the library's moves reach, see
`JumanjiGenerator.case`). The reward is a win read from the library's own state: every item packed
(`items_placed`), no dirty tile left, every wire connected (`agents.connected`), every piece placed
(`placed_blocks`); the libraries' dense shares pay nothing.
**Oracle:** the generator's own solution, recomputed from the same key, for the packing and wiring
puzzles: BinPack's `generate_solution` (the items in the order of their corners' sums, each at the
listed space with its corner), Connector's `generate_board` walks each wire from start to target (the
oracle follows the shortest path inside each wire's cells), FlatPack's generator numbers the cells of
its solved grid by piece before cutting it (the oracle puts each piece back where its cells were; the
piece numbers, which would give that away, are not shown). Cleaner: a depth-first walk of the maze
from the corner, cut into one stretch per robot.
Left out (`EXCLUDED`): the families other sources already have, JobShop and the vehicle-routing and
spanning-tree problems (no oracle here yet: "optimal" needs an exact solver), and the arcade and
multi-agent control games (no player wins every case).
"""

from __future__ import annotations

import functools
import random
import re
from collections import deque
from collections.abc import Callable
from typing import Any

from ptbench.bootcamp.adapters import _jumanji
from ptbench.bootcamp.adapters._jumanji import LETTERS, JumanjiGame, connector_generator, key, library
from ptbench.bootcamp.adapters._jumanji_packing import BinPack, FlatPack
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import STRIKES, EngineGenerator, EngineInteraction, first_case
from ptbench.bootcamp.api import Identity, register_generator, register_interaction

EXTRA = _jumanji.EXTRA
PREFIX = "jumanji."
SOURCE = "jumanji"
DOMAIN = "Jumanji (JAX) packing and routing puzzles (multi-turn, Jumanji's environment)"
# Connector joins pairs by paths that do not cross: chuk-puzzles-gym's Numberlink (bootcamp/families.py)
SAME_FAMILY = {"jumanji.Connector": "puz.numberlink"}
EXCLUDED = {
    "Sudoku, Minesweeper, Maze, Snake, Sokoban, RubiksCube, SlidingTilePuzzle, Game2048, TSP, Knapsack, "
    "GraphColoring": "families other sources already install",
    "JobShop, MMST, CVRP, MultiCVRP": "no oracle here yet: a win would be the optimum, which needs an exact"
    " solver (OR-Tools) run per case",
    "Tetris, PacMan, LevelBasedForaging, RobotWarehouse, SearchAndRescue": "arcade or multi-agent control:"
    " no player wins every case",
}
DIRECTIONS = {"stay": 0, "up": 1, "right": 2, "down": 3, "left": 4}  # connector/constants.py
STEP = {1: (-1, 0), 2: (0, 1), 3: (1, 0), 4: (0, -1)}


def names() -> list[str]:
    library()
    return sorted(_GAMES)


def describe(name: str) -> dict[str, str]:
    return {"domain": "puzzle (Jumanji, JAX)", "tools": "-", "levels": "library default"}


# ------------------------------------------------------------------------------ Connector


class Connector(JumanjiGame):
    env_name = "Connector"

    def __init__(self, identity: Identity) -> None:
        self.rules = ("Connector: each wire (a capital letter) must be extended cell by cell from its current end to "
                      "its target. Each turn every wire may move one cell up, down, left or right into an empty cell "
                      "or onto its own target, never onto another wire's cells; two wires moving into the same cell "
                      "collide and the later letter stays. The game ends when every wire is connected or stuck, or "
                      "after 50 turns. You win only if every wire is connected.\nReply with one line "
                      "`Action: A up, B left, ...` naming a move for wires you move (others stay).")  # fmt: skip
        super().__init__(identity)
        self.num = int(self.env.num_agents)
        self.paths: list[list[tuple[int, int]]] | None = None
        self.first = self.opening()

    def parse(self, action: str) -> Any | None:
        moves = [0] * self.num
        parts = [p for p in re.split(r"[,;]", action) if p.strip()]
        for part in parts:
            words = part.split()
            if len(words) != 2 or words[1].lower() not in DIRECTIONS:
                return None
            wire = LETTERS.find(words[0].upper()) if len(words[0]) == 1 else -1
            if not 0 <= wire < self.num:
                return None
            moves[wire] = DIRECTIONS[words[1].lower()]
        return moves if parts else None

    def board(self) -> str:
        grid = self.np.asarray(self.state.grid)
        cells: list[str] = []
        for row in grid:
            line = []
            for v in (int(x) for x in row):
                wire, kind = (v - 1) // 3, (v - 1) % 3  # 3i+1 path, 3i+2 current end, 3i+3 target
                line.append(". " if v == 0 else LETTERS[wire] + ("~" if kind == 0 else "+" if kind == 1 else "*"))
            cells.append(f"{len(cells):>2} " + " ".join(line))
        header = "   " + " ".join(f"{c:<2}" for c in range(grid.shape[1]))
        np = self.np
        connected = (np.asarray(self.state.agents.position) == np.asarray(self.state.agents.target)).all(axis=1)
        masks = np.asarray(self.state.action_mask)
        status = []
        for i in range(self.num):
            if connected[i]:
                status.append(f"{LETTERS[i]}: connected")
            else:
                legal = [d for d, a in DIRECTIONS.items() if a and bool(masks[i][a])]
                status.append(f"{LETTERS[i]}: can move {', '.join(legal) if legal else 'nowhere (stuck)'}")
        turns_left = int(self.env.time_limit) - int(self.state.step_count)
        return (f"Legend: X+ the end of wire X, X* its target, X~ a cell it has laid; . empty. Rows go down, "
                f"columns right.\n{header}\n" + "\n".join(cells) + "\n" + "; ".join(status) +
                f"\nTurns left: {turns_left}.")  # fmt: skip

    def won(self) -> bool:
        return bool(self.state.agents.connected.all())

    def _solution(self) -> list[list[tuple[int, int]]]:
        """Each wire's shortest path, start to target, inside the cells the generator walked it through."""
        import jax

        _, board_key = jax.random.split(key(self.seed))
        solved = self.np.asarray(_connector_board()(board_key)[0])
        starts, targets = self.np.asarray(self.state.agents.start), self.np.asarray(self.state.agents.target)
        paths = []
        for i in range(self.num):
            start, target = _cell(starts[i]), _cell(targets[i])
            own = {3 * i + 1, 3 * i + 2, 3 * i + 3}
            back: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
            todo = deque([start])
            while todo:
                cell = todo.popleft()
                for dr, dc in STEP.values():
                    nxt = (cell[0] + dr, cell[1] + dc)
                    if nxt not in back and 0 <= nxt[0] < solved.shape[0] and 0 <= nxt[1] < solved.shape[1]:
                        if int(solved[nxt]) in own:
                            back[nxt] = cell
                            todo.append(nxt)
            path: list[tuple[int, int]] = []
            at: tuple[int, int] | None = target
            while at is not None:
                path.append(at)
                at = back[at]
            paths.append(path[::-1])
        return paths

    def oracle(self) -> str | None:
        if self.paths is None:
            self.paths = self._solution()
        moves, positions = [], self.np.asarray(self.state.agents.position)
        for i, path in enumerate(self.paths):
            here = _cell(positions[i])
            if here == path[-1]:
                continue
            nxt = path[path.index(here) + 1]
            move = next(d for d, a in DIRECTIONS.items() if a and STEP[a] == (nxt[0] - here[0], nxt[1] - here[1]))
            moves.append(f"{LETTERS[i]} {move}")
        return "Action: " + ", ".join(moves) if moves else None


def _cell(position: Any) -> tuple[int, int]:
    return int(position[0]), int(position[1])


@functools.cache
def _connector_board() -> Callable[..., Any]:
    import jax

    return jax.jit(connector_generator().generate_board)


# ------------------------------------------------------------------------------ FlatPack

# ------------------------------------------------------------------------------ Cleaner

CLEAN_MOVES = {"up": 0, "right": 1, "down": 2, "left": 3}  # cleaner/constants.py MOVES
CLEAN_STEP = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}


class Cleaner(JumanjiGame):
    env_name = "Cleaner"

    def __init__(self, identity: Identity) -> None:
        self.rules = ("Cleaner: three robots (1, 2, 3) start in the top-left corner of a maze of dirty tiles; a tile "
                      "is cleaned when a robot stands on it. Every turn EVERY robot must move one tile up, down, left "
                      "or right (robots may share a tile); a move into a wall (#) or off the maze ends the game. "
                      "Clean every tile within the library's turns. Reply with one line `Action: <robot 1> <robot 2> "
                      "<robot 3>`, e.g. `Action: right down down`.")  # fmt: skip
        super().__init__(identity)
        self.num = int(self.env.num_agents)
        self.routes: list[list[tuple[int, int]]] | None = None
        self.first = self.opening()

    def parse(self, action: str) -> Any | None:
        words = [w.lower() for w in action.replace(",", " ").split()]
        if len(words) != self.num or not all(w in CLEAN_MOVES for w in words):
            return None
        return [CLEAN_MOVES[w] for w in words]

    def board(self) -> str:
        grid = self.np.asarray(self.state.grid)  # 0 dirty, 1 clean, 2 wall
        robots: dict[tuple[int, int], str] = {}
        for i, at in enumerate(self.np.asarray(self.state.agents_locations)):
            robots.setdefault((int(at[0]), int(at[1])), str(i + 1))
        header = "   " + " ".join(f"{c:<2}" for c in range(grid.shape[1]))
        rows = [f"{r:>2} " + " ".join(f"{robots.get((r, c), '*.#'[int(v)]):<2}" for c, v in enumerate(row))
                for r, row in enumerate(grid)]  # fmt: skip
        where = "; ".join(f"robot {i + 1} at ({int(a[0])}, {int(a[1])})"
                          for i, a in enumerate(self.np.asarray(self.state.agents_locations)))  # fmt: skip
        left = int(self.env.time_limit) - int(self.state.step_count)
        return (f"Legend: * dirty, . clean, # wall, 1-3 a robot (the lowest number where they share a tile). "
                f"Rows go down, columns right.\n{header}\n" + "\n".join(rows) + f"\n{where}. "
                f"Dirty tiles: {int((grid == 0).sum())}. Turns left: {left}.")  # fmt: skip

    def won(self) -> bool:
        return not bool((self.np.asarray(self.state.grid) == 0).any())

    def _routes(self) -> list[list[tuple[int, int]]]:
        """A depth-first walk over the maze from the corner, cut after its last new tile into one stretch
        per robot; each robot walks the shortest way to its stretch's start, then the stretch."""
        grid = self.np.asarray(self.state.grid)
        open_ = {(r, c) for r in range(grid.shape[0]) for c in range(grid.shape[1]) if int(grid[r, c]) != 2}
        walk, seen, last_new = [(0, 0)], {(0, 0)}, 0

        def visit(cell: tuple[int, int]) -> None:
            nonlocal last_new
            for dr, dc in CLEAN_STEP.values():
                nxt = (cell[0] + dr, cell[1] + dc)
                if nxt in open_ and nxt not in seen:
                    seen.add(nxt)
                    walk.append(nxt)
                    last_new = len(walk) - 1
                    visit(nxt)
                    walk.append(cell)

        visit((0, 0))
        walk = walk[: last_new + 1]
        cuts = [round(k * (len(walk) - 1) / self.num) for k in range(self.num + 1)]
        return [_shortest(open_, (0, 0), walk[cuts[k]])[:-1] + walk[cuts[k] : cuts[k + 1] + 1] for k in range(self.num)]

    def oracle(self) -> str | None:
        if self.routes is None:
            self.routes = self._routes()
        t = int(self.state.step_count)
        moves = []
        for route in self.routes:
            if t + 1 < len(route):
                here, nxt = route[t], route[t + 1]
            else:  # done: step back and forth between the last two tiles
                back = route[-2] if len(route) > 1 else route[-1]
                here, nxt = (route[-1], back) if (t + 1 - len(route)) % 2 == 0 else (back, route[-1])
            delta = (nxt[0] - here[0], nxt[1] - here[1])
            moves.append(next(m for m, a in CLEAN_MOVES.items() if CLEAN_STEP[a] == delta))
        return "Action: " + " ".join(moves)


def _shortest(open_: set[tuple[int, int]], start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]]:
    back: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
    todo = deque([start])
    while todo:
        cell = todo.popleft()
        for dr, dc in CLEAN_STEP.values():
            nxt = (cell[0] + dr, cell[1] + dc)
            if nxt in open_ and nxt not in back:
                back[nxt] = cell
                todo.append(nxt)
    path: list[tuple[int, int]] = []
    at: tuple[int, int] | None = goal
    while at is not None:
        path.append(at)
        at = back[at]
    return path[::-1]


_GAMES: dict[str, Callable[[Identity], JumanjiGame]] = {
    "Cleaner": Cleaner,
    "Connector": Connector,
    "FlatPack": FlatPack,
    "BinPack": BinPack,
}
TURNS = {"Cleaner": 100, "Connector": 50, "FlatPack": 25, "BinPack": 20}


def make(identity: Identity) -> JumanjiGame:
    return _GAMES[JumanjiGenerator.check(identity.get("game"))](identity)


@register_generator("jumanji")
class JumanjiGenerator(EngineGenerator):
    kind = "Jumanji environment"
    names = staticmethod(names)
    make = staticmethod(make)
    library = staticmethod(library)

    def case(self, rng: random.Random) -> Identity:
        """FlatPack and BinPack: a seed whose generator's solution the library's moves reach (FlatPack: each
        piece's box inside the grid; BinPack: each item's corner among the spaces the library lists)."""
        keep = {"FlatPack": lambda i: FlatPack(i).plan() is not None, "BinPack": _oracle_wins}.get(self.game)
        if keep is None:
            return super().case(rng)
        draw = lambda: {"game": self.game, "seed": rng.getrandbits(self.seed_bits)}  # noqa: E731
        return first_case(draw, keep, self.game, "a solution the library's moves reach")


def _oracle_wins(identity: Identity) -> bool:
    game = make(identity)
    while not game.done:
        action = game.oracle()
        if action is None:
            return False
        game.step(action.split(":", 1)[1].strip())
    return game.won()


@register_interaction("jumanji")
class JumanjiInteraction(EngineInteraction):
    make = staticmethod(make)
    action = re.compile(r"^\s*action\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)

    def oracle(self, state: JumanjiGame, identity: Identity) -> str | None:
        return None if state.done else state.oracle()


def bootcamp_dict(name: str, **splits: int) -> dict[str, Any]:
    game = JumanjiGenerator.check(name)
    return game_config(f"{PREFIX}{game}", "jumanji", game, turns=TURNS[game] + STRIKES, max_tokens=256, **splits)
