"""One episode: the multi-turn loop of model calls, tool calls and interaction feedback, ending in a trace."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ptbench.bootcamp.api import Identity, Tool, ToolError, ToolResult
from ptbench.bootcamp.environment import Environment
from ptbench.bootcamp.rollout.client import ChatClient, ChatError
from ptbench.bootcamp.rollout.traces import TRACE_SCHEMA
from ptbench.bootcamp.serving.heavy import score_async
from ptbench.core import fastjson


async def run_episode(
    env: Environment, row: dict[str, Any], client: ChatClient, *, config_hash: str, attempt: int = 1
) -> dict[str, Any]:
    """Play one dataset row to the end. Never raises for model, tool or server failures: they end
    the episode with `status: error` and a classified error, so every episode yields one record."""
    cfg = env.config
    extra = row["extra_info"]
    identity: Identity = fastjson.loads(row["reward_model"]["ground_truth"])
    messages: list[dict[str, Any]] = [dict(m) for m in row["prompt"]]
    trace: dict[str, Any] = {
        "schema": TRACE_SCHEMA,
        "sample_id": extra["sample_id"],
        "data_source": row["data_source"],
        "split": extra["split"],
        "index": extra["index"],
        "level": extra.get("level"),
        "config_hash": config_hash,
        "data_hash": extra.get("data_hash"),
        "model": client.model,
        "attempt": attempt,
        "started_at": time.time(),
    }
    tool_calls: list[dict[str, Any]] = []
    turn_scores: list[dict[str, Any]] = []
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "last_context_tokens": 0}
    retries: dict[str, int] = {}
    requests = 0
    model_latency = 0.0
    turns = 0
    stop_reason = "max_assistant_turns"
    error: dict[str, Any] | None = None
    t0 = time.perf_counter()
    tool_states: dict[str, Any] = {}
    schemas = env.tool_schemas or None
    inter_state = env.interaction.start(identity) if env.interaction else None
    try:
        for name, tool in env.tools.items():
            tool_states[name] = tool.create_sync(identity) if _plain(tool, "create") else await tool.create(identity)
        while turns < cfg.limits.max_assistant_turns:
            try:
                res = await client.chat(messages, schemas)
            except ChatError as exc:
                requests += exc.attempts
                for kind in exc.retry_kinds:
                    retries[kind] = retries.get(kind, 0) + 1
                error = exc.as_record()
                stop_reason = "context_length" if exc.kind == "context_length" else "error"
                break
            requests += 1 + len(res.retries)
            for kind in res.retries:
                retries[kind] = retries.get(kind, 0) + 1
            model_latency += res.latency_s
            turns += 1
            pt, ct = res.usage["prompt_tokens"], res.usage["completion_tokens"]
            usage["prompt_tokens"] += pt
            usage["completion_tokens"] += ct
            usage["last_context_tokens"] = pt + ct
            msg = _assistant_message(res.message)
            messages.append(msg)
            calls = msg.get("tool_calls")
            if calls:
                for call in calls:
                    tool_msg, record = await _run_tool_call(env, tool_states, call, turns, len(tool_calls))
                    messages.append(tool_msg)
                    tool_calls.append(record)
                continue
            if env.interaction is None:
                stop_reason = "final_answer"
                break
            ir = env.interaction.respond(inter_state, identity, msg.get("content") or "")
            turn_scores.append({"turn": turns, "score": ir.turn_score, "terminate": ir.terminate, "extra": ir.extra})
            if ir.terminate:
                stop_reason = "interaction"
                break
            messages.append({"role": "user", "content": ir.feedback})
    except ToolError as exc:
        error = {"kind": exc.kind, "message": str(exc)[:500], "status": None, "retryable": True, "attempts": 1}
        stop_reason = "error"
    except Exception as exc:  # a bug in an environment's code: record it; never lose the episode
        error = _bug_record(exc)
        stop_reason = "error"
    finally:
        for name, state in tool_states.items():
            try:
                tool = env.tools[name]
                if _plain(tool, "release"):
                    tool.release_sync(state)
                else:
                    await tool.release(state)
            except Exception:  # release must not hide the episode's own outcome
                pass
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    final_text = _final_assistant_text(messages)
    trace.update(
        messages=messages,
        tool_calls=tool_calls,
        step_rewards=[c["step_reward"] for c in tool_calls],
        turn_scores=turn_scores,
        turns=turns,
        n_tool_calls=len(tool_calls),
        usage=usage,
        requests=requests,
        retries=retries,
        model_latency_s=round(model_latency, 6),
        stop_reason=stop_reason,
        final_text=final_text,
    )
    if error is None:
        try:
            outcome = getattr(env.interaction, "outcome", None)
            if outcome is not None:  # a game: the reward is what the interaction saw happen, not any text
                reward = outcome(inter_state, identity)
            else:
                reward = await score_async(env.reward, final_text, identity, list(env.tools.values()))
        except Exception as exc:
            error = _bug_record(exc, "reward_error")
            stop_reason = trace["stop_reason"] = "error"
    if error is None:
        trace.update(status="ok", error=None, score=reward.score, correct=reward.correct, extracted=reward.extracted)
    else:
        trace.update(status="error", error=error, score=None, correct=None, extracted=None)
    trace["latency_s"] = round(time.perf_counter() - t0, 6)
    return trace


def _bug_record(exc: Exception, kind: str = "environment_error") -> dict[str, Any]:
    # Deterministic code failures would fail again: not retryable, so resume does not loop on them.
    return {
        "kind": kind,
        "message": f"{type(exc).__name__}: {exc}"[:500],
        "status": None,
        "retryable": False,
        "attempts": 1,
    }


def _assistant_message(message: dict[str, Any]) -> dict[str, Any]:
    """Keep only what a chat request accepts back, plus the reasoning text for the trace (vLLM and
    others return it as `reasoning_content` or `reasoning`; the client strips it before sending)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        out["reasoning_content"] = reasoning
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c["function"]["name"], "arguments": c["function"].get("arguments") or "{}"},
            }
            for c in calls
            if isinstance(c, dict) and isinstance(c.get("function"), dict) and "name" in c["function"]
        ]
        if not out["tool_calls"]:
            del out["tool_calls"]
    return out


def _final_assistant_text(messages: list[dict[str, Any]]) -> str | None:
    """The reward reads only the last assistant message: tool outputs and feedback never count."""
    for m in reversed(messages):
        if m["role"] == "assistant":
            return m.get("content")
    return None


def _runs_inline(tool: Tool) -> bool:
    """True for a tool whose call is plain Python on the event loop (`execute_sync`, not blocking):
    it never yields to the loop, so no deadline could interrupt it, and none is set (saves a timer a call)."""
    return _plain(tool, "execute")


def _plain(tool: Tool, hook: str) -> bool:
    """True where the tool's async `hook` (create, execute, release) is the base class's: a call of its
    `hook`_sync on the loop, which is then called directly (without `hook`'s and `_call`'s coroutines)."""
    cls = type(tool)
    return not tool.blocking and getattr(cls, hook) is getattr(Tool, hook) and cls._call is Tool._call


def _timeout_s(env: Environment, name: str) -> float:
    return next(t.timeout_s for t in env.config.tools if t.name == name)


async def _run_tool_call(
    env: Environment, states: dict[str, Any], call: dict[str, Any], turn: int, used: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    fn = call["function"]
    name, raw_args = fn["name"], fn.get("arguments") or "{}"
    record: dict[str, Any] = {
        "turn": turn,
        "id": call.get("id"),
        "name": name,
        "arguments": raw_args,
        "step_reward": 0.0,
        "error": None,
        "latency_s": 0.0,
        "metrics": {},
    }
    start = time.perf_counter()
    tool = env.tools.get(name)
    if used >= env.config.limits.max_tool_calls:
        result = ToolResult(
            text="error: tool-call budget exhausted; give your final answer now", error="budget_exhausted"
        )
    elif tool is None:
        result = ToolResult(
            text=f"error: no tool named '{name}' (available: {', '.join(env.tools) or 'none'})", error="unknown_tool"
        )
    else:
        try:
            args = fastjson.loads(raw_args) if isinstance(raw_args, str) else raw_args
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            result = ToolResult(text=f"error: arguments are not a JSON object: {exc}", error="bad_arguments")
        else:
            record["arguments"] = args
            try:
                if _runs_inline(tool):  # what `execute` would do, without its two coroutines
                    result = tool.execute_sync(states[name], args)
                elif tool.enforces_timeout:
                    result = await tool.execute(states[name], args)
                else:  # a deadline on this task, not a task per call as wait_for makes
                    async with asyncio.timeout(_timeout_s(env, name)):
                        result = await tool.execute(states[name], args)
            except TimeoutError:
                timeout = _timeout_s(env, name)
                result = ToolResult(text=f"error: tool call took longer than {timeout:g} s", error="timeout")
            except ToolError:
                raise
            except Exception as exc:  # a tool bug is shown to the model and recorded, not fatal
                result = ToolResult(text=f"error: tool failed: {type(exc).__name__}: {exc}", error="tool_exception")
    record.update(result=result.text, step_reward=float(result.step_reward), error=result.error, metrics=result.metrics)
    record["latency_s"] = round(time.perf_counter() - start, 6)
    return {"role": "tool", "tool_call_id": call.get("id"), "content": result.text}, record
