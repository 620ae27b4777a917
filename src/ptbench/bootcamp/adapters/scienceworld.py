"""ScienceWorld's task types as multi-turn ptbench environments (`pip install 'ptbench[bootcamp-scienceworld]'`
and a Java runtime: Debian's `default-jre-headless`).

Each of its 30 task types (boiling, melting, circuits, genetics, inclined planes, life stages …) is
one environment `sw.<task>`; its variations (objects, substances, rooms: 10 to 1,386 per task) are
the cases. A case is (task, variation), played in ScienceWorld's own simulator (a JVM through py4j)
with its `easy` simplifications (teleporting, open doors); the task description and the first
`look around` are the user turn, every observation after an action is the feedback, and the model
answers one line `Action: <command>`. An answer with no such line is refused, and the third refusal
ends the episode. The reward is completion: 1 only when the simulator marks the task completed with
a full score (its partial scores reward sub-goals, and a wrong final step scores -100), 0 otherwise.

The oracle (`ScienceWorldInteraction.oracle`) plays the simulator's own gold action sequence for
the case's variation; it completes every task type checked (tests/bootcamp/adapters/test_adapters_libraries.py).

Simulators are expensive (a JVM each, seconds to start), so each process keeps a pool of them: an
episode borrows one, loads its case (a load resets the whole world, so nothing of an earlier episode
survives) and gives it back when it ends or is dropped.
"""

from __future__ import annotations

import random
import shutil
from functools import cache
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import ACTION_LINE, EngineGame, EngineGenerator, EngineInteraction, EnginePool
from ptbench.bootcamp.api import Identity, register_generator, register_interaction
from ptbench.core.errors import UserError

EXTRA = "bootcamp-scienceworld"
PREFIX = "sw."
SOURCE = "scienceworld"
DOMAIN = "ScienceWorld science tasks (multi-turn, its simulator)"
SIMPLIFICATIONS = "easy"
STEP_LIMIT = 400  # the simulator's own move limit and the turn limit (the longest gold path seen here: 321 moves)


def library() -> ModuleType:
    module = load_library("scienceworld", "ScienceWorld", EXTRA)
    if shutil.which("java") is None:
        raise UserError("ScienceWorld needs a Java runtime on PATH; apt-get install default-jre-headless")
    return module


@cache
def _tasks() -> dict[str, dict[str, str]]:
    """The library's task list (its tasks.json: no simulator needed to read it)."""
    import json
    from importlib import resources

    library()
    rows = json.loads(resources.files("scienceworld").joinpath("tasks.json").read_text())
    return {r["task_name"]: r for r in rows}


def names() -> list[str]:
    return sorted(_tasks())


def describe(name: str) -> dict[str, str]:
    row = _tasks()[name]
    return {"domain": f"science ({row['topic']}: {row['task']})", "tools": "-", "levels": SIMPLIFICATIONS}


POOL = EnginePool(lambda: library().ScienceWorldEnv("", envStepLimit=STEP_LIMIT))


@cache
def _max_variations(task: str) -> int:
    env = POOL.borrow()
    try:
        return int(env.get_max_variations(task))
    finally:
        POOL.give_back(env)


def canonical(observation: str) -> str:
    """The observation with each run of listed objects (lines indented by a tab) sorted: the simulator
    lists a room's contents in hash-set order, which differs from run to run (the same variation gave
    two orders of the same objects), so ptbench sorts them to make a case's prompt the same bytes."""
    out: list[str] = []
    run: list[str] = []
    for line in str(observation).split("\n"):
        if line.startswith("\t"):
            run.append(line)
            continue
        out += sorted(run) + [line]
        run = []
    return "\n".join(out + sorted(run))


class Episode(EngineGame):
    """One case in play on a borrowed simulator (given back when the task ends or the episode is dropped)."""

    def __init__(self, identity: Identity, gold: bool = True) -> None:
        self.task = ScienceWorldGenerator.check(identity["task"])
        self.env, self.release = POOL.lend(self)
        self.env.load(self.task, int(identity["variation"]), SIMPLIFICATIONS, generateGoldPath=gold)
        observation, _ = self.env.reset()
        self.first = f"{self.env.get_task_description()}\n\n{canonical(observation)}".strip()
        self.gold: list[str] = list(self.env.get_gold_action_sequence()) if gold else []
        self.moves = 0
        self.points = 0  # the simulator's score

    def step(self, action: str) -> str:
        observation, _reward, completed, info = self.env.step(action)
        self.moves += 1
        self.points = int(info["score"])
        self.done = bool(completed)
        if self.done:
            self.release()
        return canonical(observation)

    def won(self) -> bool:
        """Completed with a full score (a failed task also ends the episode, with a score of -100)."""
        return self.done and self.points >= 100

    def finish(self) -> None:
        self.done = True
        self.points = 0
        self.release()


@register_generator("scienceworld")
class ScienceWorldGenerator(EngineGenerator):
    """Params: game (a ScienceWorld task name, the key every adapted game uses). A case is (task, variation)."""

    kind = "ScienceWorld task"
    names = staticmethod(names)
    library = staticmethod(library)
    make = Episode
    instructions = "Reply with one line `Action: <command>` per turn (e.g. `Action: look around`)."

    def case(self, rng: random.Random) -> Identity:
        return {"task": self.game, "variation": rng.randrange(_max_variations(self.game))}

    def open(self, identity: Identity) -> Episode:
        return Episode(identity, gold=False)

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['task']}/{identity['variation']}"


@register_interaction("scienceworld")
class ScienceWorldInteraction(EngineInteraction):
    make = Episode
    action = ACTION_LINE
    noun = "task"
    ended = "The task is over."

    def oracle(self, state: Episode, identity: Identity) -> str | None:
        """The simulator's gold action sequence for this variation, one action per turn."""
        if state.done or state.moves >= len(state.gold):
            return None
        return f"Action: {state.gold[state.moves]}"


def bootcamp_dict(task: str, **splits: int) -> dict[str, Any]:
    name = f"{PREFIX}{ScienceWorldGenerator.check(task)}"
    return game_config(name, "scienceworld", task, turns=STEP_LIMIT, max_tokens=256, **splits)
