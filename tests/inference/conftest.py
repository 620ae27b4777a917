"""The fixtures the inference tests share with the task tests: the tiny model with a longer position range
(task prompts are long in characters) and the scripted judge."""

from tests.tasks.conftest import judge, tiny_model  # noqa: F401  (re-exported fixtures)
