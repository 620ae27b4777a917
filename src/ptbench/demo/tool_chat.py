"""A tool-capable chat template (ChatML with Hermes tool calls, as Qwen2.5 renders them) for tiny test models.

Like Qwen2.5's and Llama 3's templates it renders a tool call's `arguments` with `tojson`, so data
that stores arguments as a JSON *string* comes out double-encoded: the tests train and roll out on
this template to prove our SFT and verl data do not. `<|im_start|>`/`<|im_end|>` are special tokens,
so `decode(skip_special_tokens=True)` drops them, as it does for Qwen.
"""

from __future__ import annotations

TOOL_CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}\n\n{% endif %}"
    "# Tools\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"
    "{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n"
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "{% elif messages[0]['role'] == 'system' %}<|im_start|>system\n{{ messages[0]['content'] }}<|im_end|>\n{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'system' and loop.first %}"
    "{% elif message['role'] == 'user' or message['role'] == 'system'"
    " or (message['role'] == 'assistant' and not message.get('tool_calls')) %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% elif message['role'] == 'assistant' %}<|im_start|>assistant\n"
    "{% if message['content'] %}{{ message['content'] }}{% endif %}"
    "{% for tool_call in message['tool_calls'] %}"
    "{% set tc = tool_call['function'] if tool_call['function'] is defined else tool_call %}"
    '\n<tool_call>\n{"name": "{{ tc[\'name\'] }}", "arguments": {{ tc[\'arguments\'] | tojson }}}\n</tool_call>'
    "{% endfor %}<|im_end|>\n"
    "{% elif message['role'] == 'tool' %}"
    "<|im_start|>user\n<tool_response>\n{{ message['content'] }}\n</tool_response><|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

CHATML_SPECIAL = ["<|im_start|>", "<|im_end|>"]


def tool_tokenizer():
    """The tiny character-level tokenizer with ChatML special tokens and the tool template."""
    from ptbench.demo.tiny_model import _tokenizer

    tok = _tokenizer()
    tok.add_special_tokens({"additional_special_tokens": CHATML_SPECIAL})
    tok.eos_token = "<|im_end|>"
    tok.chat_template = TOOL_CHAT_TEMPLATE
    return tok
