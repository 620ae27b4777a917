"""ptbench: LLM post-training trials and agentic rollouts on HPC clusters."""

__version__ = "0.1.0"
