"""Where an engine is chosen by name: `ENGINES` (inference/base.py), where each engine class
registers itself (`@ENGINES.register("vllm")`); `auto` is resolved here. Implementations import
vLLM and torch only when started, since they are heavy and only one of them runs."""

from __future__ import annotations

from ptbench.inference.base import ENGINES, Engine

AUTO = "auto"


def get_engine(name: str, model_path: str, **kwargs) -> Engine:
    """`auto` picks vLLM when a CUDA GPU is visible, else transformers."""
    return ENGINES.get(resolve_engine(name))(model_path, **kwargs)


def resolve_engine(name: str) -> str:
    """The engine `get_engine(name, ...)` starts (`auto` resolved), without starting it."""
    return ("vllm" if _cuda_available() else "transformers") if name == AUTO else name


def _cuda_available() -> bool:
    import shutil
    import subprocess

    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
