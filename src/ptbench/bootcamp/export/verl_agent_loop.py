"""`ptbench_agent`: the verl agent loop that plays bootcamp rows (imports verl; verl 0.9.1).

A thin subclass of verl's `ToolAgentLoop` adding what a bootcamp episode needs and 0.9.1 lacks:
- one `EpisodeRuntime` per trajectory (tool states that last the episode, the tool-call budget, the
  bootcamp's turn limit), released when the trajectory ends;
- the row's own tools only (`extra_info.ptbench` names them; a row with none gets none);
- the interaction (there is no `verl.interactions` in 0.9.1): after a turn without tool calls the
  bootcamp's `Interaction.respond` answers as a user message, or ends the episode; its turn scores
  go to verl's `turn_scores`;
- the reward contract (reward.py): the text of the last model turn, tool-call markup and special
  tokens removed, cut where verl cuts the response, goes to `extra_fields["ptbench_final_text"]`.

Register it with `rollout.agent.agent_loop_config_path` pointing at the YAML that
`ptbench bootcamp export-verl` writes (`- name: ptbench_agent` / `_target_: <this class>`).
"""

from __future__ import annotations

import contextvars
from typing import Any

from verl.experimental.agent_loop.agent_loop import register
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop

from ptbench.bootcamp.data.rowschema import AGENT_NAME
from ptbench.bootcamp.export.episode_runtime import EpisodeRuntime
from ptbench.bootcamp.export.reward import FINAL_TEXT_KEY
from ptbench.bootcamp.export.verl_tools import RUNTIME_ATTR
from ptbench.core.private_verl import set_verl_active_tools, verl_active_tool_schemas, verl_active_tools

# The runtime is made in `run` (which sees the row) and picked up by the pending-state handler
# (which sees verl's AgentData); a context variable carries it across, one per trajectory task.
_RUNTIME: contextvars.ContextVar[EpisodeRuntime] = contextvars.ContextVar("ptbench_runtime")


@register(AGENT_NAME)
class BootcampAgentLoop(ToolAgentLoop):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        specials = getattr(self.tokenizer, "all_special_tokens", []) or []
        self._special_tokens = sorted({t for t in specials if t}, key=len, reverse=True)

    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> Any:
        runtime = EpisodeRuntime.from_row(
            kwargs.get("extra_info") or {}, (kwargs.get("reward_model") or {})["ground_truth"]
        )
        token = _RUNTIME.set(runtime)
        try:
            output = await super().run(sampling_params, priority=priority, **kwargs)
        finally:
            _RUNTIME.reset(token)
            await runtime.release()
        output.extra_fields["ptbench_tool_calls"] = runtime.tool_calls
        if runtime.error is not None:
            output.extra_fields["ptbench_error"] = runtime.error["kind"]
        return output

    async def _handle_pending_state(self, agent_data: AgentData, sampling_params: dict[str, Any]) -> AgentState:
        runtime = _RUNTIME.get()
        setattr(agent_data, RUNTIME_ATTR, runtime)
        missing = [name for name in runtime.tools if name not in self.tools]
        if missing:
            raise ValueError(
                f"bootcamp '{runtime.spec.bootcamp}' needs tools {missing} that verl's tool config lacks; "
                "point rollout.multi_turn.tool_config_path at the tools.yaml from `ptbench bootcamp export-verl`"
            )
        set_verl_active_tools(
            agent_data,
            {name: self.tools[name] for name in runtime.tools},
            [self.tools[name].tool_schema.model_dump(exclude_unset=True, exclude_none=True) for name in runtime.tools],
        )
        return await super()._handle_pending_state(agent_data, sampling_params)

    async def _handle_generating_state(
        self, agent_data: AgentData, sampling_params: dict[str, Any], ignore_termination: bool = False
    ) -> AgentState:
        state = await super()._handle_generating_state(agent_data, sampling_params, ignore_termination)
        runtime: EpisodeRuntime = getattr(agent_data, RUNTIME_ATTR)
        text, has_calls = await self._last_turn_text(agent_data)
        agent_data.extra_fields[FINAL_TEXT_KEY] = text
        if agent_data.assistant_turns >= runtime.spec.max_assistant_turns:
            return AgentState.TERMINATED
        if (
            state == AgentState.TERMINATED
            and not has_calls
            and runtime.interaction is not None
            and not self._limit_hit(agent_data)
        ):
            return await self._interact(agent_data, runtime, text)
        return state

    async def _handle_processing_tools_state(self, agent_data: AgentData) -> AgentState:
        state = await super()._handle_processing_tools_state(agent_data)
        # A ToolError (the tool's server is gone) ends the episode, as in our own rollout.
        return AgentState.TERMINATED if getattr(agent_data, RUNTIME_ATTR).error is not None else state

    def _limit_hit(self, agent_data: AgentData) -> bool:
        return (
            len(agent_data.response_mask) >= self.response_length
            or bool(self.max_assistant_turns and agent_data.assistant_turns >= self.max_assistant_turns)
            or bool(self.max_user_turns and agent_data.user_turns >= self.max_user_turns)
        )

    async def _last_turn_text(self, agent_data: AgentData) -> tuple[str, bool]:
        """The last turn as the trainer keeps it: tokens past `response_length` are cut, since the
        policy gets no gradient for them and must not be scored on them either."""
        ids = list(agent_data.response_ids)
        overflow = len(agent_data.response_mask) - self.response_length
        if overflow > 0:
            ids = ids[: max(0, len(ids) - overflow)]
        schemas = [tool.tool_schema for tool in verl_active_tools(agent_data).values()]
        content, calls = await self.tool_parser.extract_tool_calls(ids, schemas)
        for token in self._special_tokens:
            content = content.replace(token, "")
        return content.strip(), bool(calls)

    async def _interact(self, agent_data: AgentData, runtime: EpisodeRuntime, text: str) -> AgentState:
        result = runtime.respond(text)
        assert result is not None  # called only for a bootcamp with an interaction
        agent_data.turn_scores.append(result.turn_score)
        if result.terminate:
            return AgentState.TERMINATED
        previous = list(agent_data.messages)
        agent_data.messages.append({"role": "user", "content": result.feedback})
        merged, mask, logprobs = await self.ct_merge_context_msg(
            previous,
            agent_data.messages,
            agent_data.prompt_ids,
            agent_data.response_mask,
            agent_data.response_logprobs or None,
            tools=verl_active_tool_schemas(agent_data),
        )
        if len(mask) >= self.response_length:
            return AgentState.TERMINATED
        agent_data.prompt_ids = merged.token_ids
        agent_data.response_mask = mask
        if agent_data.response_logprobs:
            agent_data.response_logprobs = logprobs or []
        agent_data.user_turns += 1
        return AgentState.GENERATING
