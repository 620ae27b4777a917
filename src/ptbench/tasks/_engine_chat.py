"""The rollout loop's chat seam served by the evaluation engine, so a multi-turn bootcamp task is played
by `bootcamp.episode.run_episode` (the one episode loop) with the harness's own engine and chat template.

`run_episode` asks a `ChatClient` for each assistant turn. `EngineChat` answers those requests in
process: every request from the episodes in flight is rendered with the evaluation's chat format
and generated in one `engine.generate` batch. No tools are offered (a tool-using bootcamp is refused
as a task); a prompt that does not fit becomes the rollout's `context_length` error. An engine
failure ends every episode and is re-raised by `play`, so the evaluation phase fails and the next
phase retries, as for single-turn tasks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ptbench.bootcamp.rollout.client import ChatError, ChatResult
from ptbench.core.generation import GenerationSettings
from ptbench.inference.base import Engine


class EngineChat:
    def __init__(
        self,
        engine: Engine,
        render: Callable[[list[dict[str, Any]]], str],
        settings: GenerationSettings,
        max_new_tokens: int,
    ) -> None:
        self.model = getattr(engine, "name", "engine")
        self.engine, self.render, self.settings, self.max_new_tokens = engine, render, settings, max_new_tokens
        self.failure: BaseException | None = None
        self._pending: list[tuple[str, asyncio.Future[ChatResult]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> ChatResult:
        if self.failure is not None:
            raise ChatError("engine_error", f"the evaluation engine failed: {self.failure}")
        prompt = self.render([{"role": m["role"], "content": m.get("content") or ""} for m in messages])
        future: asyncio.Future[ChatResult] = asyncio.get_running_loop().create_future()
        self._pending.append((prompt, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # the other episodes woken with this one queue their turns first: one batch
        batch, self._pending = self._pending, []
        started = time.perf_counter()
        try:
            completions = self.engine.generate([p for p, _ in batch], self.settings, max_new_tokens=self.max_new_tokens)
        except Exception as exc:  # noqa: BLE001 - every episode ends; play() re-raises it for the phase
            self.failure = exc
            for _, future in batch:
                future.set_exception(ChatError("engine_error", f"the evaluation engine failed: {exc}"))
            return
        latency = (time.perf_counter() - started) / max(1, len(batch))
        for (_, future), c in zip(batch, completions, strict=True):
            if c.finish_reason == "prompt_too_long":
                future.set_exception(ChatError("context_length", "the conversation no longer fits the model"))
                continue
            usage = {"prompt_tokens": 0, "completion_tokens": c.n_tokens, "total_tokens": c.n_tokens}
            message = {"role": "assistant", "content": c.text}
            future.set_result(
                ChatResult(message=message, finish_reason=c.finish_reason, usage=usage, latency_s=latency)
            )
