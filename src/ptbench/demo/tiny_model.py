"""A random tiny Llama with a character-level tokenizer trained on the fly.

No model can be downloaded on an offline cluster node or in CI, so the demo and the tests build
their own. head_dim is 64 because vLLM's CPU attention kernels do not support smaller heads.
"""

from __future__ import annotations

import string
from pathlib import Path

# A chat template so the same model also exercises chat-formatted prompts (vLLM server, tasks).
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SPECIAL = ["<pad>", "<s>", "</s>", "<unk>"]


def _tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("[\\s\\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()  # characters join back without spaces
    corpus = [string.printable]
    trainer = trainers.WordLevelTrainer(special_tokens=SPECIAL, min_frequency=1)
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def make_tiny_model(path: str | Path, *, seed: int = 0, hidden: int = 128, layers: int = 4, tokenizer=None) -> Path:
    """Write a random tiny Llama + tokenizer to `path` (idempotent: an existing model is kept).
    `tokenizer`: another tokenizer to use (e.g. `tool_chat.tool_tokenizer()`), default the plain one."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = Path(path)
    if (path / "config.json").is_file() and (path / "tokenizer.json").is_file():
        return path
    torch.manual_seed(seed)
    tokenizer = tokenizer if tokenizer is not None else _tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        num_key_value_heads=hidden // 64,
        head_dim=64,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    tmp = path.with_name(path.name + ".partial")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    tmp.replace(path)
    return path
