"""transformers generation: the CPU fallback engine (and the one the demo uses)."""

from __future__ import annotations

from ptbench.core.errors import GenerationFailed
from ptbench.core.generation import Completion, GenerationSettings
from ptbench.inference.base import ENGINES, encode_prompt


@ENGINES.register("transformers")
class TransformersEngine:
    name = "transformers"
    cpu_dtype = "float32"  # its fact (inference/base.py ENGINE_FACTS): __init__ loads float32 on a CPU

    def __init__(self, model_path: str, *, batch_size: int = 32, dtype: str = "auto") -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.tokenizer.padding_side = "left"  # decoder-only models generate after the prompt
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        torch_dtype = torch.float32 if self.device == "cpu" else dtype
        model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch_dtype)
        self.model = model.to(self.device).eval()
        self.batch_size = batch_size

    def apply_chat_template(self, messages: list[dict], tools: list[dict] | None = None) -> str:
        from ptbench.inference.base import render_chat

        return render_chat(self.tokenizer, messages, tools)

    def generate(
        self, prompts: list[str], settings: GenerationSettings, *, max_new_tokens: int | None = None
    ) -> list[Completion]:
        import torch

        limit = max_new_tokens or settings.max_new_tokens
        out: list[Completion] = []
        for start in range(0, len(prompts), self.batch_size):
            batch = prompts[start : start + self.batch_size]
            ids = [encode_prompt(self.tokenizer, text) for text in batch]
            enc = self.tokenizer.pad({"input_ids": ids}, return_tensors="pt", padding=True).to(self.device)
            kwargs = {
                "do_sample": settings.temperature > 0,
                "max_new_tokens": limit,
                "pad_token_id": self.tokenizer.pad_token_id,
            }
            if settings.temperature > 0:
                kwargs["temperature"] = settings.temperature
            try:
                with torch.inference_mode():
                    gen = self.model.generate(**enc, **kwargs)
            except torch.OutOfMemoryError as exc:
                raise GenerationFailed(f"out of memory at max_new_tokens={limit}") from exc
            new = gen[:, enc["input_ids"].shape[1] :]
            for row in new:
                ids = [t for t in row.tolist() if t != self.tokenizer.pad_token_id]
                text = self.tokenizer.decode(ids, skip_special_tokens=True)
                assert isinstance(text, str)  # one sequence in, one string out
                hit_stop = False
                for stop in settings.stop:
                    if stop in text:
                        text, hit_stop = text.split(stop, 1)[0], True
                ended = hit_stop or self.tokenizer.eos_token_id in ids or len(ids) < limit
                finish = "stop" if ended else "length"
                out.append(Completion(text=text, finish_reason=finish, n_tokens=len(ids)))
        return out
