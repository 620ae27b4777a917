"""Generation engines behind one protocol: transformers (CPU fallback) and vLLM."""

from ptbench.inference.base import Engine
from ptbench.inference.engines import get_engine

__all__ = ["Engine", "get_engine"]
