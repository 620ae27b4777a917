"""verl tool adapters: any registered bootcamp tool as a `verl.tools.base_tool.BaseTool` (imports verl).

One class serves every tool: its `config.ptbench_tool` names the registered tool, and the tool YAML
written by `ptbench bootcamp export-verl` has one entry per tool, loadable by
`verl.tools.tool_registry.initialize_tools_from_config`. The adapter is thin: verl 0.9.1's
`ToolAgentLoop._call_tool` runs create -> execute -> release around every single call, so the
episode's state lives in the trajectory's `EpisodeRuntime`, which the `ptbench_agent` loop attaches
to verl's `AgentData` (passed to `execute` as `agent_data`). Without it (plain `tool_agent`) the
tool answers with an error text rather than run without its episode (no identity, no state).
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from ptbench.bootcamp.api import tool_schema
from ptbench.bootcamp.export.episode_runtime import EpisodeRuntime, import_modules

RUNTIME_ATTR = "_ptbench_runtime"


def registered_tool_schema(name: str, imports: list[str] | None = None) -> OpenAIFunctionToolSchema:
    """The registered tool's OpenAI schema, validated by verl's own model."""
    import_modules(list(imports or []))
    return OpenAIFunctionToolSchema.model_validate(tool_schema(name))


class BootcampTool(BaseTool):
    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema | None = None) -> None:
        name = config.get("ptbench_tool")
        if not name:
            raise ValueError("ptbench BootcampTool: config.ptbench_tool must name a registered bootcamp tool")
        schema = tool_schema or registered_tool_schema(name, config.get("imports"))
        if schema.function.name != name:
            raise ValueError(
                f"ptbench BootcampTool: tool_schema names '{schema.function.name}' but config.ptbench_tool is '{name}'"
            )
        super().__init__(config, schema)
        self._calls: dict[str, list[float]] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        instance_id = instance_id or uuid4().hex
        self._calls[instance_id] = []
        return instance_id, ToolResponse()

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[ToolResponse, float, dict]:
        runtime: EpisodeRuntime | None = getattr(kwargs.get("agent_data"), RUNTIME_ATTR, None)
        if runtime is None:
            text = f"error: tool '{self.name}' needs its episode; run this dataset with agent_name ptbench_agent"
            return ToolResponse(text=text), 0.0, {"error": "no_episode"}
        result = await runtime.call_tool(self.name, parameters)
        self._calls.setdefault(instance_id, []).append(float(result.step_reward))
        metrics = dict(result.metrics)
        if result.error:
            metrics["error"] = result.error
        return ToolResponse(text=result.text), float(result.step_reward), metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The step rewards this instance earned (not the task reward: that is compute_score's)."""
        return float(sum(self._calls.get(instance_id, [])))

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        # Per-call instances go; the episode's tool state is released by the agent loop at the end.
        self._calls.pop(instance_id, None)
