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

    def apply_chat_template(self, messages: list[dict], tools: list[dict] | None = None) -> str: ...


TOOLS_SYSTEM_PROMPT = (
    "You may call one of the following functions. To call one, answer with\n"
    '<tool_call>{{"name": <function-name>, "arguments": <args-json-object>}}</tool_call>\n\n'
    "<tools>\n{tools}\n</tools>"
)


def render_chat(tokenizer, messages: list[dict], tools: list[dict] | None = None) -> str:
    """The prompt text from the model's own chat template. Where the template ignores tools, the
    tools go into a system message in the Hermes format (what the reference's parser expects)."""
    import json

    from ptbench.errors import UserError

    template = tokenizer.chat_template
    if not template:
        raise UserError("this model has no chat template: evaluate it with task option prompt_format=base "
                        "(an explicit completion template), or give its tokenizer a chat template")
    if tools and "tools" not in str(template):
        listing = "\n".join(json.dumps(t) for t in tools)
        messages = [{"role": "system", "content": TOOLS_SYSTEM_PROMPT.format(tools=listing)}, *messages]
        tools = None
    return tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)


def encode_prompt(tokenizer, text: str) -> list[int]:
    """Token ids of a prompt: a BOS is added only where the tokenizer adds one and the text (e.g. a
    rendered chat template) does not already start with it, so no prompt gets two."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    bos, bos_id = tokenizer.bos_token, tokenizer.bos_token_id
    if bos_id is not None and bos and not text.startswith(bos):
        probe = tokenizer("a", add_special_tokens=True)["input_ids"]
        if probe and probe[0] == bos_id:
            ids = [bos_id, *ids]
    return ids


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
