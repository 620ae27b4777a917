"""The environment API: generator, tool, interaction, reward calculator, and their registries.

A bootcamp YAML names each part by its registered name; `@register_generator("arithmetic")` etc.
put a class in its registry where it is defined. Everything here is plain Python with no heavy
imports, so `verl` reward workers and the CLI can import it cheaply.
"""

from __future__ import annotations

import asyncio
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ptbench.core.registry import Registry

Identity = dict[str, Any]
"""A case: the problem and its ground truth, JSON-serialisable."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(obj: Any) -> str:
    """The one JSON spelling used for hashing and for `ground_truth` (sorted keys, no spaces):
    `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`, with the encoder
    made once (json.dumps builds one per call with these options)."""
    return _CANONICAL.encode(obj)


# --------------------------------------------------------------------------------------- generator


class Generator(ABC):
    """Makes cases. `case(rng)` must depend only on `rng` and the constructor params, so case k of
    seed s is always the same case (the harness derives `rng` from seed, split, level and k)."""

    # (module, extra) pairs the generator imports when it makes a case: checked before any work, so a
    # missing optional package is one line naming the extra instead of a traceback (or, where a case
    # loop retries failures, a loop that never ends).
    requires: tuple[tuple[str, str], ...] = ()

    def __init__(self, **params: Any) -> None:
        self.params = params

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        """Validation before anything runs (bootcamp config loading): the packages it needs are here."""
        import importlib.util

        from ptbench.core.errors import UserError

        for module, extra in cls.requires:
            if importlib.util.find_spec(module) is None:
                raise UserError(f"{module} is not installed; pip install 'ptbench[{extra}]'")

    @abstractmethod
    def case(self, rng: random.Random) -> Identity: ...

    @abstractmethod
    def prompt(self, identity: Identity) -> str:
        """The user message for this case."""

    def system_prompt(self) -> str | None:
        return None

    def dedup_key(self, identity: Identity) -> str:
        """Two cases with the same key are the same task (override to ignore irrelevant fields)."""
        return canonical_json(identity)

    def reference_completion(self, identity: Identity) -> str | None:
        """A correct final answer, used as the SFT completion for this case (None: no SFT row)."""
        return None


# -------------------------------------------------------------------------------------------- tool


@dataclass
class ToolResult:
    """What one tool call returns: the text the model sees, a step reward and free-form metrics."""

    text: str
    step_reward: float = 0.0
    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def from_wire(cls, payload: dict[str, Any]) -> ToolResult:
        """A tool server's reply to an execute call (toolserver.py's protocol)."""
        return cls(
            text=payload["text"],
            step_reward=payload.get("step_reward", 0.0),
            metrics=payload.get("metrics") or {},
            error=payload.get("error"),
        )


class ToolError(Exception):
    """A tool failed in a way the episode cannot continue from (e.g. its server is gone)."""

    def __init__(self, message: str, kind: str = "tool_error") -> None:
        super().__init__(message)
        self.kind = kind


class Tool:
    """A tool with per-episode state: `create` once per episode, `execute` per call, `release` at
    the end. Subclasses that block (SQLite, simulations) set `blocking = True` and implement the
    `*_sync` methods; the harness then runs them in a worker thread, off the event loop. Every hook
    has a default (no state, nothing to close), so the class is a base, not an ABC: a tool that
    overrides neither `execute` nor `execute_sync` is told so at its first call."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "required": []}
    blocking: ClassVar[bool] = False
    enforces_timeout: ClassVar[bool] = False
    """True for a tool that applies its `timeout_s` itself and answers a timeout ToolResult (a
    replica-backed tool, which must tell a slow call from a dead replica before the limit ends)."""

    def __init__(self, **params: Any) -> None:
        self.params = params

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema sent with every chat request."""
        # `required` always present: verl's OpenAIFunctionToolSchema and strict OpenAI servers expect it.
        parameters = {"required": [], **self.parameters}
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": parameters},
        }

    # Synchronous hooks: override these (simple tools) or the async ones (tools that await I/O).
    def create_sync(self, identity: Identity) -> Any:
        return {}

    def execute_sync(self, state: Any, arguments: dict[str, Any]) -> ToolResult:
        # The one hook every tool must provide (this or the async `execute`): the base class has no call to make.
        raise NotImplementedError(
            f"tool {self.name!r} ({type(self).__name__}) overrides neither execute_sync nor execute"
        )

    def release_sync(self, state: Any) -> None:
        return None

    async def create(self, identity: Identity) -> Any:
        return await self._call(self.create_sync, identity)

    async def execute(self, state: Any, arguments: dict[str, Any]) -> ToolResult:
        return await self._call(self.execute_sync, state, arguments)

    async def release(self, state: Any) -> None:
        await self._call(self.release_sync, state)

    async def aclose(self) -> None:
        """Called once when a shard finishes (close connections to a tool server, etc.)."""

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self.blocking:
            return await asyncio.to_thread(fn, *args)
        return fn(*args)


# ------------------------------------------------------------------------------------- interaction


@dataclass
class InteractionResult:
    """After a turn without tool calls: stop or not, feedback for the model, a turn score."""

    terminate: bool
    feedback: str = ""
    turn_score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class Interaction(ABC):
    """Talks back to the model after each turn without tool calls; may end the episode."""

    oracle_wins: ClassVar[bool] = True
    """Whether the oracle's episode scores 1 on every case. False for a game against a seeded random
    opponent, where even perfect play can lose or draw: there `bootcamp verify` asks instead that the
    oracle finishes every game with every move accepted (docs/bootcamp.md, "Verification")."""

    def __init__(self, **params: Any) -> None:
        self.params = params

    def start(self, identity: Identity) -> Any:
        """Per-episode state."""
        return {}

    @abstractmethod
    def respond(self, state: Any, identity: Identity, assistant_text: str) -> InteractionResult: ...

    def oracle(self, state: Any, identity: Identity) -> str | None:
        """The assistant text a scripted, search-based or library-solver player sends next, given the
        live episode state `start` returned (and `respond` has updated). `ptbench bootcamp verify`
        plays start -> oracle -> respond ... until terminate and then scores the episode as a model's
        would be (the interaction's `outcome` for a game, else the reward on the last text). None: this
        interaction has no oracle (verify reports the environment unverified, never passed)."""
        return None


# ---------------------------------------------------------------------------------------- reward


@dataclass
class RewardResult:
    score: float
    extracted: str | None
    correct: bool


class RewardCalculator(ABC):
    """Scores the final assistant message against the case. Only the final assistant text is
    given, never tool outputs, so a tool that echoes the ground truth cannot leak it into the score."""

    partial_credit: ClassVar[bool] = False
    """True where a wrong answer earns a share by design (a forecast's error ratio, an optimality
    gap): `bootcamp verify` then asks a wrong answer for less than 1, and a hedge for no more than the
    wrong answer alone, instead of 0."""

    def __init__(self, **params: Any) -> None:
        self.params = params

    @abstractmethod
    def extract(self, text: str) -> str | None: ...

    @abstractmethod
    def verify(self, extracted: str, identity: Identity) -> float:
        """1.0 for a correct answer, 0.0 for a wrong one (partial credit allowed)."""

    def score(self, text: str | None, identity: Identity) -> RewardResult:
        extracted = self.extract(text or "")
        if extracted is None:
            return RewardResult(score=float(self.params.get("format_penalty", 0.0)), extracted=None, correct=False)
        value = float(self.verify(extracted, identity))
        return RewardResult(score=value, extracted=extracted, correct=value >= 1.0)


# -------------------------------------------------------------------------------------- registries


def _name_tool(name: str, cls: type) -> None:
    if isinstance(cls, type) and issubclass(cls, Tool) and not cls.name:
        cls.name = name


def _registry(kind: str) -> Registry[type]:
    return Registry(kind, load=lambda: _load_builtin_envs(), hint="check the bootcamp YAML", on_register=_name_tool)


GENERATORS = _registry("generator")
TOOLS = _registry("tool")
INTERACTIONS = _registry("interaction")
REWARDS = _registry("reward")

register_generator = GENERATORS.register
register_tool = TOOLS.register
register_interaction = INTERACTIONS.register
register_reward = REWARDS.register


def tool_schema(name: str) -> dict[str, Any]:
    """A registered tool's schema, without running its constructor (its parameters come per episode)."""
    cls: type[Tool] = TOOLS.get(name)
    return cls.__new__(cls).schema()


def _load_builtin_envs() -> None:
    import ptbench.bootcamp.envs  # noqa: F401  (registers the shipped environments)
    from ptbench.bootcamp.adapters import register_all

    register_all()  # the adapters' parts (each imports its library only when used)
