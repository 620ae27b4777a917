"""The engine protocol every generator implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ptbench.core.errors import UserError
from ptbench.core.generation import Completion, GenerationSettings
from ptbench.core.registry import Registry


@runtime_checkable
class Engine(Protocol):
    name: str

    def __init__(self, model_path: str, **options: Any) -> None: ...

    def generate(
        self, prompts: list[str], settings: GenerationSettings, *, max_new_tokens: int | None = None
    ) -> list[Completion]: ...

    def apply_chat_template(self, messages: list[dict], tools: list[dict] | None = None) -> str: ...


def _load_builtin() -> None:
    import ptbench.inference.hf
    import ptbench.inference.vllm_engine  # noqa: F401  (both import torch / vLLM only when started)


def _named(name: str, cls: type) -> None:
    if getattr(cls, "name", None) != name:
        raise TypeError(
            f"engine class {cls.__qualname__} is named {getattr(cls, 'name', None)!r}, registered as '{name}'"
        )


ENGINES: Registry[type[Engine]] = Registry("engine", load=_load_builtin, on_register=_named)
"""engine name -> its class, `cls(model_path, **options)`; each registers where it is defined."""

# Facts an engine class may carry (class attributes; the default where it does not), read through
# `engine_fact` by the memorization check and log-likelihood scoring, never by comparing its name:
ENGINE_FACTS: dict[str, Any] = {
    # continuation_logprobs asks the engine for prompt log-probs (`engine.llm`); False: it runs the
    # engine's `model` forward on `device` itself.
    "prompt_logprobs": False,
    # libraries besides torch and transformers whose versions decide its scores (base score cache key)
    "libs": (),
    # the dtype it loads a model in on a CPU ("auto": the checkpoint's)
    "cpu_dtype": "auto",
    # environment variables that bound its context length (part of the tokenized items' cache key)
    "limit_env": (),
    # keyword arguments for an engine started only to score log-likelihoods (prefill only)
    "scoring_args": {},
}


def engine_fact(name: str, fact: str) -> Any:
    """Fact `fact` of engine `name` (ENGINE_FACTS' default where its class does not carry it, or where
    the name is not registered: starting that engine fails on its own)."""
    try:
        cls = ENGINES.get(name)
    except UserError:
        return ENGINE_FACTS[fact]
    return getattr(cls, fact, ENGINE_FACTS[fact])


def configured_max_len(name: str) -> list[Any]:
    """The context limits engine `name` is configured with outside the model (its `configured_max_len()`)."""
    try:
        cls: Any = ENGINES.get(name)
    except UserError:
        return []
    read = getattr(cls, "configured_max_len", None)
    return list(read()) if read is not None else []


TOOLS_SYSTEM_PROMPT = (
    "You may call one of the following functions. To call one, answer with\n"
    '<tool_call>{{"name": <function-name>, "arguments": <args-json-object>}}</tool_call>\n\n'
    "<tools>\n{tools}\n</tools>"
)


def render_chat(tokenizer, messages: list[dict], tools: list[dict] | None = None) -> str:
    """The prompt text from the model's own chat template. Where the template ignores tools, the
    tools go into a system message in the Hermes format (what the reference's parser expects)."""
    import json

    template = tokenizer.chat_template
    if not template:
        raise UserError(
            "this model has no chat template: evaluate it with task option prompt_format=base "
            "(an explicit completion template), or give its tokenizer a chat template"
        )
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
