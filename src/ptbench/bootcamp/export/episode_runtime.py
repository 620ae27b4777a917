"""One episode's live environment for a foreign rollout loop (verl): tool states, budget, interaction.

Our own rollout (episode.py) owns its loop. Under verl the loop is verl's, and verl 0.9.1 creates,
executes and releases a tool instance per call, so state that must last the episode (an SQLite
connection with the model's temporary tables, a guess counter) lives here instead: the `ptbench_agent`
loop makes one `EpisodeRuntime` per trajectory, the tool adapters call `call_tool`, and the loop calls
`release` when the trajectory ends. Same semantics as episode.py: a tool-call budget, a per-call
timeout, tool bugs shown to the model as an error text, `ToolError` ending the episode.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from functools import lru_cache
from typing import Any

from ptbench.bootcamp.api import (
    INTERACTIONS,
    TOOLS,
    Identity,
    Interaction,
    InteractionResult,
    Tool,
    ToolError,
    ToolResult,
    canonical_json,
)
from ptbench.bootcamp.data.rowschema import EpisodeSpec


@lru_cache(maxsize=256)
def _tool(name: str, params_json: str) -> Tool:
    """Tool objects are stateless between episodes (state is what `create` returns), so one per params."""
    return TOOLS.get(name)(**json.loads(params_json))


def import_modules(modules: list[str]) -> None:
    """A verl worker is a fresh process: import the bootcamp's own modules so its parts are registered."""
    for mod in modules:
        importlib.import_module(mod)


class EpisodeRuntime:
    def __init__(self, spec: EpisodeSpec, identity: Identity) -> None:
        import_modules(spec.imports)
        self.spec = spec
        self.identity = identity
        self.tools: dict[str, Tool] = {
            t["name"]: _tool(t["name"], canonical_json(t.get("params") or {})) for t in spec.tools
        }
        self.timeouts = {t["name"]: float(t.get("timeout_s", 30.0)) for t in spec.tools}
        self.states: dict[str, Any] = {}
        self.tool_calls = 0
        self.step_rewards: list[float] = []
        self.turn_scores: list[float] = []
        self.error: dict[str, Any] | None = None
        self.interaction: Interaction | None = None
        self.interaction_state: Any = None
        if spec.interaction:
            self.interaction = INTERACTIONS.get(spec.interaction["name"])(**(spec.interaction.get("params") or {}))
            self.interaction_state = self.interaction.start(identity)
        self._lock = asyncio.Lock()

    @classmethod
    def from_row(cls, extra_info: dict[str, Any], ground_truth: Any) -> EpisodeRuntime:
        identity = json.loads(ground_truth) if isinstance(ground_truth, str) else ground_truth
        return cls(EpisodeSpec.from_extra_info(extra_info), identity)

    async def call_tool(self, name: str, arguments: Any) -> ToolResult:
        """Run one tool call; never raises except `ToolError` (the episode cannot go on)."""
        tool = self.tools.get(name)
        if self.tool_calls >= self.spec.max_tool_calls:
            return ToolResult(
                text="error: tool-call budget exhausted; give your final answer now", error="budget_exhausted"
            )
        self.tool_calls += 1
        if tool is None:
            return ToolResult(
                text=f"error: no tool named '{name}' (available: {', '.join(self.tools) or 'none'})",
                error="unknown_tool",
            )
        if not isinstance(arguments, dict):
            return ToolResult(text="error: arguments are not a JSON object", error="bad_arguments")
        async with self._lock:  # parallel calls in one turn must not race the lazy create
            if name not in self.states:
                self.states[name] = await tool.create(self.identity)
        timeout = self.timeouts[name]
        try:
            result = await asyncio.wait_for(tool.execute(self.states[name], arguments), timeout)
        except TimeoutError:
            result = ToolResult(text=f"error: tool call took longer than {timeout:g} s", error="timeout")
        except ToolError as exc:
            self.error = {"kind": exc.kind, "message": str(exc)[:500]}
            raise
        except Exception as exc:  # a tool bug is shown to the model, as in our own rollout
            result = ToolResult(text=f"error: tool failed: {type(exc).__name__}: {exc}", error="tool_exception")
        self.step_rewards.append(float(result.step_reward))
        return result

    def respond(self, assistant_text: str) -> InteractionResult | None:
        """The interaction's answer to a turn without tool calls (None: this bootcamp has none)."""
        if self.interaction is None:
            return None
        result = self.interaction.respond(self.interaction_state, self.identity, assistant_text)
        self.turn_scores.append(float(result.turn_score))
        return result

    async def release(self) -> None:
        states, self.states = self.states, {}
        for name, state in states.items():
            try:
                await self.tools[name].release(state)
            except Exception:  # release must not hide the episode's own outcome
                pass
