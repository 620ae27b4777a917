"""The engine protocol every generator implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ptbench.tasks.base import GenerationSettings


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str  # "stop" | "length"
    n_tokens: int


class GenerationFailed(RuntimeError):
    """Generation failed for a reason a lower max_new_tokens may fix (length, out of memory)."""


@runtime_checkable
class Engine(Protocol):
    name: str

    def generate(self, prompts: list[str], settings: GenerationSettings, *, max_new_tokens: int | None = None) -> list[Completion]: ...

    def apply_chat_template(self, messages: list[dict]) -> str: ...


def get_engine(name: str, model_path: str, **kwargs) -> Engine:
    """`auto` picks vLLM when a CUDA GPU is visible, else transformers."""
    if name == "auto":
        name = "vllm" if _cuda_available() else "transformers"
    if name == "transformers":
        from ptbench.inference.hf import TransformersEngine

        return TransformersEngine(model_path, **kwargs)
    if name == "vllm":
        from ptbench.inference.vllm_engine import VLLMEngine

        return VLLMEngine(model_path, **kwargs)
    from ptbench.errors import UserError

    raise UserError(f"unknown engine '{name}' (use auto, transformers or vllm)")


def _cuda_available() -> bool:
    import shutil
    import subprocess

    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
