"""Harness-fixed chat templates: evaluation formats chat prompts with ptbench's own template for the
trial's base-model family, never with the template the agent left in `final_model/`.

An agent that may edit its tokenizer's chat template could otherwise change what the benchmark
asks (a system prompt with hints, a pre-filled answer) while the test items stay the same. The
family is read from the *base model id of the trial* (an input the agent does not control).
Opting into the model's own template (`--chat-template model`) is possible and recorded.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.inference.base import TOOLS_SYSTEM_PROMPT

TEMPLATE_DIR = Path(__file__).parent / "chat_templates"
# Base-model ids (hub ids or local paths) -> family, first match wins.
FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("qwen3", re.compile(r"qwen-?3", re.I)),
    ("gemma3", re.compile(r"gemma-?3", re.I)),
    ("smollm3", re.compile(r"smollm-?3", re.I)),
    ("llama3", re.compile(r"llama-?3", re.I)),
)
CHOICES = ("harness", "model", *(name for name, _ in FAMILIES))


def family_of(base_model: str) -> str | None:
    for name, pattern in FAMILIES:
        if pattern.search(base_model):
            return name
    return None


@cache
def _compiled(family: str):
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return env.from_string((TEMPLATE_DIR / f"{family}.jinja").read_text())


def _with_tools(messages: list[dict], tools: list[dict] | None) -> list[dict]:
    """Tools as a Hermes-format system message (what the BFCL parser reads), merged into a system turn."""
    if not tools:
        return messages
    text = TOOLS_SYSTEM_PROMPT.format(tools="\n".join(json.dumps(t) for t in tools))
    if messages and messages[0].get("role") == "system":
        return [{"role": "system", "content": messages[0]["content"] + "\n\n" + text}, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


@dataclass(frozen=True)
class ChatFormat:
    """How chat prompts are turned into text. `source` is "harness" (a ptbench template for
    `family`) or "model" (the tokenizer's own template, only when asked for)."""

    source: str
    family: str | None = None
    base_model: str | None = None
    why: str = ""

    def render(self, messages: list[dict], tools: list[dict] | None, model_render: Callable[..., str] | None) -> str:
        if self.source == "model":
            assert model_render is not None, "the model's own template needs the engine's renderer"
            return model_render(messages, tools=tools) if tools else model_render(messages)
        if self.family is None:
            raise UserError(
                f"no harness chat template for base model '{self.base_model}' (families: "
                f"{', '.join(n for n, _ in FAMILIES)}): pass --chat-template FAMILY to pick one, or "
                "--chat-template model to use the model's own template (recorded in the metrics)"
            )
        return _compiled(self.family).render(messages=_with_tools(messages, tools), add_generation_prompt=True)

    def record(self, model_template: str | None = None) -> dict[str, Any]:
        """What the metrics record: which template, and a hash of its text."""
        if self.source == "model":
            text = model_template or ""
            return {
                "source": "model",
                "sha256": hashlib.sha256(text.encode()).hexdigest() if text else None,
                **({"why": self.why} if self.why else {}),
            }
        text = (TEMPLATE_DIR / f"{self.family}.jinja").read_text() if self.family else ""
        return {
            "source": "harness",
            "family": self.family,
            "base_model": self.base_model,
            "sha256": hashlib.sha256(text.encode()).hexdigest() if text else None,
        }


def choose_chat_format(base_model: str | None, choice: str = "harness") -> ChatFormat:
    """`harness`: the family of `base_model`; a family name: that family's template; `model`: the
    model's own. Without a base model (a hand-run `ptbench eval`), the model's own, recorded so."""
    if choice not in CHOICES:
        raise UserError(f"--chat-template {choice!r}: use one of {', '.join(CHOICES)}")
    if choice == "model":
        return ChatFormat("model", why="asked for (--chat-template model)")
    if choice != "harness":
        return ChatFormat("harness", family=choice, base_model=base_model)
    if not base_model:
        return ChatFormat("model", why="no --base-model given")
    return ChatFormat("harness", family=family_of(base_model), base_model=base_model)
