"""Generation engines behind one protocol: transformers (CPU fallback) and vLLM."""

from ptbench.inference.base import Completion, Engine, GenerationFailed, get_engine

__all__ = ["Completion", "Engine", "GenerationFailed", "get_engine"]
