"""Things the laptop demo needs: a tiny causal LM made locally, no hub download."""

from ptbench.demo.tiny_model import make_tiny_model

__all__ = ["make_tiny_model"]
