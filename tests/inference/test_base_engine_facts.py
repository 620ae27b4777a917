"""Each engine carries its scoring facts (inference/base.py ENGINE_FACTS), read by name through
ENGINES: pinned to what the `engine == "vllm"` comparisons they replaced decided."""

from __future__ import annotations

from ptbench.inference.base import ENGINE_FACTS, configured_max_len, engine_fact


def test_the_engines_facts(monkeypatch) -> None:
    assert engine_fact("vllm", "prompt_logprobs") and not engine_fact("transformers", "prompt_logprobs")
    assert engine_fact("vllm", "libs") == ("vllm",) and engine_fact("transformers", "libs") == ()
    assert (engine_fact("vllm", "cpu_dtype"), engine_fact("transformers", "cpu_dtype")) == ("auto", "float32")
    assert engine_fact("vllm", "scoring_args") == {"enforce_eager": True}
    assert engine_fact("transformers", "scoring_args") == {}
    assert engine_fact("vllm", "limit_env") == ("PTBENCH_VLLM_MAX_MODEL_LEN", "PTBENCH_VLLM_ARGS")
    assert engine_fact("no-such-engine", "libs") == ENGINE_FACTS["libs"]
    monkeypatch.setenv("PTBENCH_VLLM_MAX_MODEL_LEN", "512")
    monkeypatch.setenv("PTBENCH_VLLM_ARGS", '{"max_model_len": 256}')
    assert configured_max_len("vllm") == ["512", 256] and configured_max_len("transformers") == []
