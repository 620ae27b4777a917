"""Where an engine is chosen by name: the one factory (implementations load lazily, since vLLM and
torch are heavy and only one of them runs)."""

from __future__ import annotations

from ptbench.core.errors import UserError
from ptbench.inference.base import Engine


def get_engine(name: str, model_path: str, **kwargs) -> Engine:
    """`auto` picks vLLM when a CUDA GPU is visible, else transformers."""
    name = resolve_engine(name)
    if name == "transformers":
        from ptbench.inference.hf import TransformersEngine

        return TransformersEngine(model_path, **kwargs)
    if name == "vllm":
        from ptbench.inference.vllm_engine import VLLMEngine

        return VLLMEngine(model_path, **kwargs)
    raise UserError(f"unknown engine '{name}' (use auto, transformers or vllm)")


def resolve_engine(name: str) -> str:
    """The engine `get_engine(name, ...)` starts (`auto` resolved), without starting it."""
    return ("vllm" if _cuda_available() else "transformers") if name == "auto" else name


def _cuda_available() -> bool:
    import shutil
    import subprocess

    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
