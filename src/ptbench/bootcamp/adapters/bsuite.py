"""DeepMind's Behaviour Suite for RL (bsuite) as multi-turn ptbench environments
(`pip install 'ptbench[bootcamp-bsuite]'`).

One environment per bsuite environment with a clear win, `bsuite.<name>`, each run step by step in the
library's own dm_env environment (built with the case's seed: its `RandomState` draws the start, the
cue and the noise), its observation rendered as text and a `Move:` answer turned into its action:
- `catch`: a ball falls down a 10x5 board; move the paddle on the bottom row under it. Win: the
  library's +1 for the catch. Oracle: move toward the ball's column (from the environment's state).
- `memory_len`: the memory chain (one bit of context, bsuite's memory_len experiment): a +1/-1 cue
  is shown at the start, then only a countdown; at the last step answer the cue. The length is one of
  the experiment's settings up to 30, drawn from the seed. Win: the library's +1 for the right answer
  at the end. Oracle: the environment's context bit.
- `umbrella_length`: the umbrella chain (bsuite's umbrella_length experiment, 20 distractor bits):
  the first move picks the umbrella up or not; the chain's length (a setting up to 30, from the seed)
  later the library pays +1 if it matches the need shown, -1 if not; the steps between pay random
  +/-1 noise. Win: the final +1. Oracle: the need the environment holds (also the one shown).
- `mountain_car`: bsuite's mountain car, run with `max_steps=200` (Gymnasium's v0 limit; bsuite's
  default is 1,000): reach position 0.5 before the limit. Oracle: push with the velocity. The same
  family as `gym.mountain_car` (it counts once).
- `cartpole_swingup`: the pole starts hanging down; swing it up and keep it up (upright: cos > 0.5,
  |angular velocity| < 1, |cart position| < 1: +1 a step; every push costs 0.1) within the library's
  10 s (1,000 steps). Win: an episode return over 100, bsuite's own swing-up success
  (`GOOD_EPISODE` of its cartpole_swingup analysis); the episode ends once the win is settled (the
  return exceeds 100 by more than the pushes left can cost) or the library ends it. Oracle: energy
  pumping while the pole is low, a PD rule on angle and cart once it is near the top.
The reward is 1 for the win, else 0 (bsuite's shaped returns are never paid). The oracles read the
environment's own state (bsuite has no public accessor: `_ball_x`, `_context`, `_need_umbrella`,
`_velocity`, `_state`, of the pinned bsuite 0.3.6; tests/bootcamp/adapters/test_bsuite.py plays each).
Left out (`EXCLUDED`) with the reason.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import STRIKES, Episode, TurnGenerator, TurnInteraction
from ptbench.bootcamp.api import Identity, register_generator, register_interaction

EXTRA = "bootcamp-bsuite"
PREFIX = "bsuite."
SOURCE = "bsuite"
# Families another source installs (each counts once).
SAME_FAMILY = {"bsuite.catch": "spiel.catch", "bsuite.memory_len": "popgym.repeat_first",
               "bsuite.mountain_car": "gym.mountain_car"}  # fmt: skip
DOMAIN = "bsuite (DeepMind Behaviour Suite) environments (multi-turn, rendered as text)"
EXCLUDED = {
    "deep_sea": "the action that moves right is a hidden per-cell mapping (no view wins but by luck 2^-N); "
    "OpenSpiel's deep_sea is installed (spiel.deep_sea)",
    "discounting_chain": "which of the 5 chains pays the bonus is hidden (mapping_seed): no win from the view",
    "bandit": "chance: the arms' payouts are hidden; no player wins every case",
    "mnist": "downloads MNIST at run time",
    "cartpole": "balancing from upright is gym.cartpole's family",
    "noise_and_scale": "the *_noise and *_scale experiments add reward noise or scale to the same families",
    "memory_size": "more context bits for the same memory chain (a variant of memory_len)",
    "umbrella_distract": "more distractor bits for the same umbrella chain (a variant of umbrella_length)",
}
LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 17, 20, 25, 30)  # memory_len and umbrella_length's settings <= 30
SWINGUP_GOOD = 100.0  # bsuite's cartpole_swingup analysis: an episode with return > GOOD_EPISODE swung up


def library() -> ModuleType:
    return load_library("bsuite.environments", "bsuite", EXTRA)


def names() -> list[str]:
    library()
    return sorted(_GAMES)


def describe(name: str) -> dict[str, str]:
    kind = {"catch": "game", "memory_len": "memory", "umbrella_length": "credit assignment"}.get(name, "control")
    return {"domain": f"{kind} (bsuite)", "tools": "-", "levels": "default"}


def _num(value: Any) -> str:
    return f"{float(value):+.3f}"


class Bsuite(Episode):
    """One bsuite episode: `env` a dm_env environment, `timestep` its last TimeStep."""

    ACTIONS: tuple[str, ...]

    def __init__(self, identity: Identity) -> None:
        super().__init__()
        self.seed = int(identity["seed"])
        self.env = self.build()
        self.timestep = self.env.reset()
        self.episode_return = 0.0

    @abstractmethod
    def build(self) -> Any:
        """The library's environment for this case's seed."""

    def legal(self) -> list[str]:
        return list(self.ACTIONS)

    def play(self, move: str) -> None:
        self.timestep = self.env.step(self.ACTIONS.index(move))
        self.episode_return += float(self.timestep.reward or 0.0)

    def finished(self) -> bool:
        return bool(self.timestep.last())

    def won(self) -> bool:
        return float(self.timestep.reward or 0.0) > 0  # the library's +1 on the last step

    @property
    def obs(self) -> Any:
        return self.timestep.observation


class Catch(Bsuite):
    ACTIONS = ("left", "stay", "right")  # the library's _ACTIONS (-1, 0, 1)
    limit = 9  # the ball reaches the paddle's row in rows - 1 = 9 steps

    def build(self) -> Any:
        from bsuite.environments.catch import Catch as Env

        return Env(seed=self.seed)

    def board(self) -> str:
        *above, bottom = self.obs
        rows = ["".join("o" if v else "." for v in row) for row in above]
        rows.append("".join("=" if v else "." for v in bottom))
        return ("Catch: a ball (o) falls one row a step; move the paddle (=) on the bottom row left or right "
                "so that it is under the ball when the ball reaches the bottom row.\n" + "\n".join(rows))  # fmt: skip

    def oracle_move(self) -> str | None:
        ball, paddle = int(self.env._ball_x), int(self.env._paddle_x)
        return "left" if ball < paddle else "right" if ball > paddle else "stay"


class MemoryLen(Bsuite):
    ACTIONS = ("0", "1")

    def build(self) -> Any:
        from bsuite.environments.memory_chain import MemoryChain

        self.length = LENGTHS[self.seed % len(LENGTHS)]
        self.limit = self.length + 1
        return MemoryChain(memory_length=self.length, num_bits=1, seed=self.seed)

    def board(self) -> str:
        time_left, _, cue = (float(v) for v in self.obs[0])
        seen = f"cue {cue:+.0f}" if cue else "no cue (it is shown only at the start)"
        last = self.moves_made == self.length
        return (f"Memory chain: a cue (+1 or -1) is shown at the start; {self.length + 1} moves in all. Only the "
                "last move is scored: answer 1 if the cue was +1, 0 if it was -1 (the moves before do not "
                f"matter).\nTime left {time_left:.3f}; {seen}."
                + (" This is the last move: answer the cue." if last else ""))  # fmt: skip

    def oracle_move(self) -> str | None:
        return str(int(self.env._context[self.env._query]))


class UmbrellaLength(Bsuite):
    ACTIONS = ("0", "1")  # the first move: 1 picks the umbrella up, 0 does not; later moves do nothing

    def build(self) -> Any:
        from bsuite.environments.umbrella_chain import UmbrellaChain

        self.length = LENGTHS[self.seed % len(LENGTHS)]
        self.limit = self.length
        return UmbrellaChain(chain_length=self.length, n_distractor=20, seed=self.seed)

    def board(self) -> str:
        need, has, time_left, *noise = (int(v) if i != 2 else float(v) for i, v in enumerate(self.obs[0]))
        said = "" if self.timestep.first() else f"Reward last step: {float(self.timestep.reward):+.0f}. "
        return (f"Umbrella chain: {self.length} moves. Your FIRST move decides whether you take the umbrella "
                "(1: take it, 0: leave it); the moves after it do nothing. After the last move you get +1 if "
                "you have the umbrella exactly when it is needed, -1 otherwise; the steps between pay random "
                "+1/-1 that mean nothing, and the 20 distractor bits mean nothing.\n"
                f"Umbrella needed: {need}. You have the umbrella: {has}. Time left {time_left:.3f}. "
                f"{said}Distractor bits: {''.join(str(b) for b in noise)}.")  # fmt: skip

    def oracle_move(self) -> str | None:
        return str(int(self.env._need_umbrella))


class MountainCar(Bsuite):
    ACTIONS = ("left", "none", "right")  # the library's [Left, Stay, Right]
    limit = 200

    def build(self) -> Any:
        from bsuite.environments.mountain_car import MountainCar as Env

        return Env(max_steps=200, seed=self.seed)

    def won(self) -> bool:
        return bool(self.env._position >= self.env._goal_pos)  # the library ends there (or at max_steps)

    def board(self) -> str:
        position, velocity, elapsed = self.obs[0]
        return ("Mountain car: a car sits in a valley between two hills (positions -1.2 to 0.6). Its engine is too "
                "weak to climb the right hill directly. Reach position 0.5 on the right hilltop. Each move "
                "accelerates left, right or not at all.\n"
                f"Position {_num(position)}, velocity {_num(velocity)} (positive: moving right), "
                f"time used {float(elapsed):.3f} of 1.")  # fmt: skip

    def oracle_move(self) -> str | None:
        return "right" if float(self.env._velocity) >= 0 else "left"


class CartpoleSwingup(Bsuite):
    ACTIONS = ("left", "none", "right")  # force -10, 0, +10
    limit = 1001  # the library ends the episode after its 10 s at 0.01 s a step

    def build(self) -> Any:
        from bsuite.experiments.cartpole_swingup.cartpole_swingup import CartpoleSwingup as Env

        return Env(seed=self.seed)

    def settled(self) -> bool:
        """The return can no longer fall to 100: it exceeds it by more than the pushes left can cost."""
        left = self.limit - self.moves_made
        return self.episode_return - 0.1 * left > SWINGUP_GOOD

    def finished(self) -> bool:
        return bool(self.timestep.last()) or self.settled()

    def won(self) -> bool:
        return self.episode_return > SWINGUP_GOOD

    def board(self) -> str:
        x, x_dot, sin, cos, theta_dot, elapsed, x_ok, spin_ok = (float(v) for v in self.obs[0])
        return ("Cart-pole swing-up: the pole starts hanging down from a cart on a track. Swing it up and keep it "
                "up: each step it is upright (cos(angle) > 0.5, |angular velocity| < 1, cart within 1 of the "
                "centre) earns +1, each push left or right costs 0.1, and the cart must stay within 3 of the "
                "centre. Win: a total over 100 within 10 s (a step is 0.01 s).\n"
                f"Cart position/3 {_num(x)}, cart velocity/3 {_num(x_dot)}, sin(angle) {_num(sin)}, "
                f"cos(angle) {_num(cos)} (+1: upright, -1: hanging down), angular velocity {_num(theta_dot)}, "
                f"time used {elapsed:.3f} of 1, cart central {x_ok:+.0f}, spin slow {spin_ok:+.0f}. "
                f"Total so far {self.episode_return:+.1f}.")  # fmt: skip

    def oracle_move(self) -> str | None:
        return swingup_move(self.env._state.x, self.env._state.x_dot, self.env._state.theta, self.env._state.theta_dot)


def swingup_move(x: float, x_dot: float, theta: float, theta_dot: float) -> str:
    """Energy pumping while the pole is low (push so the cart's force adds energy, never toward a wall
    past 0.6), a PD rule on the angle and the cart once cos(angle) > 0.85 (theta 0: upright)."""
    th = (theta + math.pi) % (2 * math.pi) - math.pi
    mass, half, g = 0.1, 0.5, 9.8  # the library's CartpoleConfig
    energy = 0.5 * (4 / 3) * mass * half * half * theta_dot**2 + mass * g * half * (math.cos(th) - 1)
    if math.cos(th) > 0.85:
        return "right" if th + 0.3 * theta_dot + 0.05 * x + 0.1 * x_dot > 0 else "left"
    if energy >= 0:
        return "none"
    push = -1.0 if theta_dot * math.cos(th) > 0 else 1.0
    if abs(x) > 0.6 and math.copysign(1, x) == push:
        return "none"
    return "right" if push > 0 else "left"


_GAMES: dict[str, Callable[[Identity], Bsuite]] = {
    "catch": Catch,
    "memory_len": MemoryLen,
    "umbrella_length": UmbrellaLength,
    "mountain_car": MountainCar,
    "cartpole_swingup": CartpoleSwingup,
}
_INTROS = {
    "catch": "Catch the falling ball.",
    "memory_len": "Remember the cue.",
    "umbrella_length": "Take the umbrella if you will need it.",
    "mountain_car": "Drive the car up the mountain.",
    "cartpole_swingup": "Swing the pole up and balance it.",
}


def make(identity: Identity) -> Episode:
    return _GAMES[BsuiteGenerator.check(identity.get("game"))](identity)


@register_generator("bsuite")
class BsuiteGenerator(TurnGenerator):
    kind = "bsuite environment"
    names = staticmethod(names)
    make = staticmethod(make)

    def intro(self, identity: Identity) -> str:
        return _INTROS[identity["game"]]


@register_interaction("bsuite")
class BsuiteInteraction(TurnInteraction):
    make = staticmethod(make)


def bootcamp_dict(name: str, **splits: int) -> dict[str, Any]:
    game = BsuiteGenerator.check(name)
    turns = {"catch": 9, "memory_len": 31, "umbrella_length": 30, "mountain_car": 200}.get(game, 1001) + STRIKES
    return game_config(f"{PREFIX}{game}", "bsuite", game, turns=turns, max_tokens=64, **splits)
