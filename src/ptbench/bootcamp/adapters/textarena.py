"""TextArena's single-player games as multi-turn ptbench environments (`pip install 'ptbench[bootcamp-textarena]'`).

Each game `ta.<Game>-v0` that runs with one player here is an environment: the first observation
is the user turn, every later one (only what is new since the last) is the feedback, and the game
decides when it ends and what it pays; its reward for player 0, clamped to [0, 1], is the episode's
reward (through `Interaction.outcome`: text alone proves nothing).

Determinism: TextArena draws from the *global* `random` (seeded by `reset(seed=…)`). Episodes run
concurrently in one process, so each episode keeps its own copy of the global RNG state: it is put
in place before every call into the game and taken back after, which makes an episode a pure
function of its case (game, seed) and the model's moves. Games that fetch data from the network at
run time (NLTK word lists) cannot run on an offline node and are left out.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import random
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config, outcome_result
from ptbench.bootcamp.api import (
    Generator,
    Identity,
    Interaction,
    InteractionResult,
    RewardResult,
    register_generator,
    register_interaction,
)
from ptbench.core.errors import UserError

EXTRA = "bootcamp-textarena"
PREFIX = "ta."
SOURCE = "textarena"
DOMAIN = "TextArena single-player games (multi-turn)"
# Checked with this adapter: each resets with one player, plays to an end, and is deterministic per seed.
GAMES = (
    "2048-v0", "Blackjack-v0", "Countdown-v0", "Cryptarithm-v0", "FifteenPuzzle-v0",
    "FrozenLake-v0", "GuessTheNumber-v0", "LightsOut-v0", "LogicPuzzle-v0", "Mastermind-v0",
    "Minesweeper-v0", "PegJump-v0", "RushHour-v0", "Secretary-v0", "Set-v0", "Slitherlink-v0",
    "Sokoban-v0", "Sudoku-v0", "ThreeCardMonte-v0", "TowerOfHanoi-v0",
)  # fmt: skip


# Left out, and why (`bootcamp verify` found it).
EXCLUDED = {
    "Bandit-v0": "the library pays the chosen button's regret: its step compares the button with the whole "
    "ground-truth dict, so choosing the best button scores 0 and the worst scores most",
}


def library() -> ModuleType:
    return load_library("textarena", "TextArena", EXTRA)


def names() -> list[str]:
    return list(GAMES)


def check_game(name: Any) -> str:
    if name not in GAMES:
        raise UserError(f"TextArena game {name!r} is not one this adapter plays; `ptbench bootcamp list` shows them")
    return name


def describe(name: str) -> dict[str, str]:
    return {"domain": "game (TextArena, single player)", "tools": "-", "levels": "default"}


class Game:
    """One game in progress, with its own copy of the global RNG state."""

    def __init__(self, identity: Identity) -> None:
        self.rng_state = random.Random(int(identity["seed"])).getstate()
        self.seen = ""
        self.reward: float | None = None
        self.env = self._call(lambda: library().make(check_game(identity["game"])))
        self._call(lambda: self.env.reset(num_players=1, seed=int(identity["seed"])))

    def _call(self, fn: Callable[[], Any]) -> Any:
        outside = random.getstate()
        random.setstate(self.rng_state)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # some games print their boards
                return fn()
        finally:
            self.rng_state = random.getstate()
            random.setstate(outside)

    def news(self) -> str:
        """What the game says now that it had not said before."""
        _, observation = self._call(self.env.get_observation)
        text = observation if isinstance(observation, str) else str(observation)
        new = text[len(self.seen) :] if text.startswith(self.seen) else text
        self.seen = text
        return new.strip()

    def step(self, action: str) -> bool:
        done, _ = self._call(lambda: self.env.step(action=action))
        if done:
            rewards, info = self._call(self.env.close)
            value = (rewards or {}).get(0, 0.0) if isinstance(rewards, dict) else 0.0
            mine = (info or {}).get(0, {}) if isinstance(info, dict) else {}
            if isinstance(mine, dict) and mine.get("invalid_move"):
                value = 0.0  # a game ended by a malformed or illegal move pays nothing, whatever progress it counts
            # some games put the reason of an invalid move where the reward goes: no number, no reward
            self.reward = min(1.0, max(0.0, float(value))) if isinstance(value, int | float) else 0.0
        return bool(done)


@register_generator("textarena")
class TextArenaGenerator(Generator):
    """Params: game (a TextArena id this adapter plays). A case is (game, seed)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.game = check_game(params.get("game"))

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        library()
        check_game(params.get("game"))

    def case(self, rng: random.Random) -> Identity:
        return {"game": self.game, "seed": rng.getrandbits(31)}

    def prompt(self, identity: Identity) -> str:
        return Game(identity).news()

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['game']}/{identity['seed']}"


# ----------------------------------------------------------------------------------------- oracles
# Each reads the game's own state (the library's secret or solution where it keeps one, else a solver
# on the board) and answers the next move in the game's own action format; `bootcamp verify` plays them.


def _core(game: Game) -> Any:
    """The game under TextArena's wrappers."""
    env = game.env
    while hasattr(env, "env"):
        env = env.env
    return env


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


ORACLES: dict[str, Callable[[Any], str]] = {
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


@register_interaction("textarena")
class TextArenaInteraction(Interaction):
    def start(self, identity: Identity) -> Game:
        game = Game(identity)
        game.news()  # the first observation is the prompt
        return game

    def oracle(self, state: Game, identity: Identity) -> str | None:
        play = ORACLES.get(identity["game"])
        return None if play is None else play(_core(state))

    def respond(self, state: Game, identity: Identity, assistant_text: str) -> InteractionResult:
        if state.reward is not None:
            return InteractionResult(terminate=True, feedback="The game is over.", turn_score=state.reward)
        done = state.step(assistant_text or "")
        if done:
            return InteractionResult(terminate=True, feedback=f"Game over. Your reward: {state.reward:.2f}.",
                                     turn_score=state.reward or 0.0, extra={"outcome": state.reward})  # fmt: skip
        return InteractionResult(terminate=False, feedback=state.news() or "(no change)")

    def outcome(self, state: Game, identity: Identity) -> RewardResult:
        score = state.reward or 0.0  # an unfinished game (the turn limit came first) scores 0
        return outcome_result(score)


def bootcamp_dict(game: str, **splits: int) -> dict[str, Any]:
    return game_config(f"{PREFIX}{check_game(game)}", "textarena", game, turns=100, max_tokens=512, **splits)
