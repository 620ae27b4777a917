"""Agent and evaluation caches of Hugging Face models and datasets: prefetch (`prefetch`) and proof
that the agent cache holds nothing the evaluation owns (`verify`)."""
