"""End to end against a real model server: vLLM's OpenAI-compatible server (CPU build) serving a
tiny random Llama created here. The model talks nonsense, so this checks the plumbing (requests
with tools, token usage, traces, rewards, merge), not the scores."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ptbench

from ..conftest import require, small_config

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] if m['content'] else '' }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _vllm_available() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("vllm") is not None and importlib.util.find_spec("transformers") is not None
    except Exception:
        return False


def make_tiny_llama(path: Path, max_positions: int = 1024) -> None:
    """Random 2-layer Llama (hidden 128, 2 heads -> head_dim 64, which vLLM's CPU kernels support)
    with a small BPE tokenizer and a chat template; the Hermes tool tokens exist so vLLM's tool
    parser can start."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = [
        "<unk>",
        "<s>",
        "</s>",
        "<tool_call>",
        "</tool_call>",
        "<|system|>",
        "<|user|>",
        "<|assistant|>",
        "<|tool|>",
    ]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    corpus = ["Compute the value of 12 + 7 * 3. You may use the calculator tool. The answer is \\boxed{33}."] * 50
    corpus += [
        " ".join(str(i) for i in range(200)),
        "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ {}[]()<>=+-*/\\.,:;!?'\"_",
    ]
    tok.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    from tokenizers import decoders

    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="</s>"
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(cfg).to(torch.float32).save_pretrained(path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def vllm_server(model_dir: Path, log_path: Path, *, max_model_len: int = 1024) -> Iterator[int]:
    """vLLM's OpenAI-compatible server (CPU build) serving `model_dir` as "tiny" on a free port; yields the port."""
    port = _free_port()
    log = open(log_path, "wb")
    env = dict(
        os.environ,
        VLLM_CPU_KVCACHE_SPACE="1",
        VLLM_LOGGING_LEVEL="WARNING",
        TOKENIZERS_PARALLELISM="false",
        # The CPU build otherwise runs the model in a third process (engine core, then its one worker), each
        # importing vLLM again: a third of the start. Off, the engine core runs it itself (GPU vLLM's own
        # layout for one device); the server still serves from its own engine-core process.
        VLLM_ENABLE_V1_MULTIPROCESSING="0",
        # its ZMQ socket files in a folder of its own, removed with it, not left in /tmp (a short path: a
        # socket's must fit in 107 bytes; inference/vllm_engine.py private_rpc_folder)
        VLLM_RPC_BASE_PATH=(rpc := tempfile.mkdtemp(prefix="vllm-rpc-")),
    )
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(model_dir),
            "--served-model-name",
            "tiny",
            "--max-model-len",
            str(max_model_len),
            "--dtype",
            "float32",
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--enable-auto-tool-choice",
            "--tool-call-parser",
            "hermes",
            "--max-num-seqs",
            "8",
            *(
                ["--enforce-eager"]
                if json.loads(os.environ.get("PTBENCH_VLLM_ARGS") or "{}").get("enforce_eager")
                else []
            ),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600
        while True:
            assert server.poll() is None, log_path.read_text()[-4000:]
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).status == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (
                "vLLM server did not become healthy in 600 s:\n" + log_path.read_text()[-4000:]
            )
            time.sleep(2)
        yield port
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(rpc, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.xdist_group("vllm-server")
def test_rollout_against_real_vllm_server(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    require(_vllm_available(), "vllm (CPU build) and transformers are needed for the real-server rollout test")
    port = request.getfixturevalue("tiny_vllm_server")  # shared: tests/conftest.py
    cfg = small_config(tmp_path, "arithmetic", test=6, train=2)
    cfg.write_text(cfg.read_text().replace("max_tokens: 256", "max_tokens: 24"))
    out = tmp_path / "rollout"
    res = ptbench(
        "bootcamp",
        "rollout",
        str(cfg),
        "--endpoint",
        f"http://127.0.0.1:{port}/v1",
        "--model",
        "tiny",
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--timeout",
        "120",
        timeout=900,
        env={"COLUMNS": "200"},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    traces = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
    assert len(traces) == 6
    for t in traces:
        assert t["status"] == "ok", t["error"]
        assert t["model"] == "tiny" and t["turns"] >= 1
        assert t["usage"]["prompt_tokens"] > 20 and t["usage"]["completion_tokens"] > 0
        assert t["messages"][-1]["role"] == "assistant" and t["score"] in (0.0, 1.0)
    summary = json.loads((out / "merged" / "summary.json").read_text())
    assert summary["by_data_source"]["bootcamp/arithmetic"]["n"] == 6
