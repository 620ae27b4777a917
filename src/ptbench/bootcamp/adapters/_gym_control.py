"""Gymnasium's classic-control environments with discrete actions, as `gym.<family>` environments of the
Gymnasium adapter (adapters/gymnasium_toytext.py registers them; same extra, `bootcamp-gymnasium`).

Each runs step by step in the library's own environment (`gymnasium.make`, reset from the case's seed);
the user turn shows the library's observation as numbers with 3 decimals and the model answers
`Move: <action>`, one of the action names below (the library's action numbers in order). A case is a
seed of the library's `reset` (the start state is drawn from it; the dynamics have no noise after it).
The reward is 1 only for the library's own success, read from its `terminated`/`truncated` flags:
- `gym.cartpole` (CartPole-v1 with the v0 limit of 200 steps, `max_episode_steps=200`): the pole stays
  up and the cart on the track until the library truncates the episode at 200 steps (not terminated).
  200 rather than v1's 500: a balanced pole is the same skill at step 200 as at 500, and 200 answers
  already make a long conversation. **Oracle:** a PD rule on the live state (push right when
  theta + 0.5 theta_dot + 0.05 x + 0.1 x_dot > 0: the angle and its rate, with a little of the cart's
  position and speed so the cart does not drift off the track in 200 steps).
- `gym.mountain_car` (MountainCar-v0): the car reaches the flag (position >= 0.5) before the library's
  200-step limit. **Oracle:** push in the direction of the velocity (right at rest): the car pumps
  energy by swinging, 100-125 steps.
- `gym.acrobot` (Acrobot-v1): the free end swings above the bar (-cos t1 - cos(t1 + t2) > 1) before the
  library's 500-step limit. **Oracle:** energy pumping, torque in the direction of the second joint's
  angular velocity (so the torque always adds energy): 60-215 steps.
Each controller's moves are checked by playing them out on a copy of the environment before the first
one is played; where the rule alone would not win (Acrobot: 7 of seeds 0-2999), the oracle forces up to
three moves before it, the first such prefix that wins (3,000 of 3,000 seeds each, and 2,000 random
32-bit seeds for Acrobot, win). An idle or constant-action player never wins (CartPole falls in about
10 steps; the car and the acrobot never get high enough). Left out: the continuous-action ones (Pendulum,
MountainCarContinuous): no discrete move to name, and Pendulum has no success, only a cost.
"""

from __future__ import annotations

import copy
import itertools
from abc import abstractmethod
from typing import Any

from ptbench.bootcamp.adapters.turns import Episode
from ptbench.bootcamp.api import Identity

EXCLUDED = {
    "pendulum": "continuous torque, and no success to reach (a cost per step): no move to name, no win",
    "mountain_car_continuous": "continuous force: the discrete MountainCar-v0 is gym.mountain_car",
}


def _num(value: Any) -> str:
    return f"{float(value):+.3f}"


class Control(Episode):
    """One classic-control episode; subclasses name the environment, its actions, win and oracle."""

    env_id: str
    ACTIONS: tuple[str, ...]
    steps: int | None = None  # max_episode_steps given to make (None: the library's own)

    def __init__(self, identity: Identity) -> None:
        super().__init__()
        from ptbench.bootcamp.adapters.gymnasium_toytext import library

        kwargs = {} if self.steps is None else {"max_episode_steps": self.steps}
        self.env = library().make(self.env_id, **kwargs)
        self.obs, _ = self.env.reset(seed=int(identity["seed"]))
        self.limit = int(self.env.spec.max_episode_steps)
        self.terminated = False
        self.truncated = False

    def legal(self) -> list[str]:
        return list(self.ACTIONS)

    def play(self, move: str) -> None:
        self.obs, _, term, trunc, _ = self.env.step(self.ACTIONS.index(move))
        self.terminated, self.truncated = bool(term), bool(trunc)

    def finished(self) -> bool:
        return self.terminated or self.truncated

    def won(self) -> bool:
        return self.terminated  # MountainCar, Acrobot: the library terminates only on reaching the goal

    @property
    def state(self) -> Any:
        return self.env.unwrapped.state

    @abstractmethod
    def rule(self, state: Any) -> int:
        """The scripted controller's action number for a live state."""

    def succeeds(self, terminated: bool, steps: int, left: int) -> bool:
        """Whether a rollout that ended this way (`steps` of the `left` steps used) is a win."""
        return terminated

    def oracle_move(self) -> str | None:
        """The scripted controller's move, checked by playing it out on a copy of the environment (the
        dynamics have no noise, so the copy's future is the episode's): if the controller alone would not
        win from here, the first of up to three forced moves before it that makes it win. The plan is
        kept while the episode follows it (each state as the copy predicted)."""
        import numpy as np

        at = self.moves_made
        plan = getattr(self, "_plan", None)
        if plan is not None and at < len(plan[0]) and np.array_equal(plan[1][at], self.state):
            return self.ACTIONS[plan[0][at]]
        left = self.limit - at
        for depth in range(4):
            for prefix in itertools.product(range(len(self.ACTIONS)), repeat=depth):
                found = self._rollout(list(prefix), left)
                if found is not None:
                    self._plan = ([0] * at + found[0], [None] * at + found[1])
                    return self.ACTIONS[found[0][0]]
        return self.ACTIONS[self.rule(self.state)]  # none found: the controller's move (the episode may lose)

    def _rollout(self, prefix: list[int], left: int) -> tuple[list[int], list[Any]] | None:
        import numpy as np

        sim = copy.deepcopy(self.env.unwrapped)
        actions: list[int] = []
        states: list[Any] = []
        for step in range(left):
            states.append(np.array(sim.state, dtype=float))
            action = prefix[step] if step < len(prefix) else self.rule(sim.state)
            actions.append(action)
            _, _, terminated, _, _ = sim.step(action)
            if terminated or step == left - 1:
                return (actions, states) if self.succeeds(bool(terminated), step + 1, left) else None
        return None


class CartPole(Control):
    env_id = "CartPole-v1"
    ACTIONS = ("left", "right")  # push the cart left (0) or right (1)
    steps = 200

    def won(self) -> bool:
        return self.truncated and not self.terminated  # balanced until the library's step limit

    def board(self) -> str:
        x, x_dot, theta, theta_dot = self.obs
        return ("Cart-pole: a pole is hinged on a cart on a track. Keep it up: the game is lost if the pole tilts "
                "more than 0.21 rad (12 degrees) from upright or the cart leaves the track (|position| > 2.4). "
                "Each move pushes the cart left or right with a fixed force.\n"
                f"Cart position {_num(x)}, cart velocity {_num(x_dot)}, pole angle {_num(theta)} rad "
                f"(positive: leaning right), pole angular velocity {_num(theta_dot)} rad/s.\n"
                f"Steps balanced: {self.moves_made} of {self.limit}.")  # fmt: skip

    def succeeds(self, terminated: bool, steps: int, left: int) -> bool:
        return not terminated and steps == left  # still up at the step limit

    def rule(self, state: Any) -> int:
        x, x_dot, theta, theta_dot = (float(v) for v in state)
        return 1 if theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0 else 0


class MountainCar(Control):
    env_id = "MountainCar-v0"
    ACTIONS = ("left", "none", "right")  # accelerate left (0), not at all (1), right (2)

    def board(self) -> str:
        position, velocity = self.obs
        return ("Mountain car: a car sits in a valley between two hills (positions -1.2 to 0.6; the valley floor "
                "is near -0.52). Its engine is too weak to climb the right hill directly. Reach the flag on "
                "the right hilltop (position >= 0.5). Each move accelerates left, right or not at all.\n"
                f"Position {_num(position)}, velocity {_num(velocity)} (positive: moving right).")  # fmt: skip

    def rule(self, state: Any) -> int:
        return 2 if float(state[1]) >= 0 else 0


class Acrobot(Control):
    env_id = "Acrobot-v1"
    ACTIONS = ("negative", "none", "positive")  # torque -1 (0), 0 (1), +1 (2) on the joint between the links

    def board(self) -> str:
        c1, s1, c2, s2, d1, d2 = self.obs
        height = -float(c1) - (float(c1) * float(c2) - float(s1) * float(s2))
        return ("Acrobot: two links hang in a chain from a fixed pivot; only the joint between them has a motor. "
                "Swing the free end up above the bar: its height -cos(t1) - cos(t1 + t2) must exceed 1.0 "
                "(t1: the first link's angle from hanging straight down, t2: the second link's angle relative to "
                "the first). Each move applies torque -1, 0 or +1 to the joint.\n"
                f"cos(t1) {_num(c1)}, sin(t1) {_num(s1)}, cos(t2) {_num(c2)}, sin(t2) {_num(s2)}, "
                f"angular velocity of t1 {_num(d1)}, of t2 {_num(d2)}; "
                f"the free end's height now {_num(height)}.")  # fmt: skip

    def rule(self, state: Any) -> int:
        return 2 if float(state[3]) > 0 else 0


EPISODES = {"cartpole": CartPole, "mountain_car": MountainCar, "acrobot": Acrobot}
INTROS = {
    "cartpole": "Balance the pole on the cart.",
    "mountain_car": "Drive the car up the mountain to the flag.",
    "acrobot": "Swing the acrobot up.",
}
