"""Every task end to end on the tiny random model with fixture data in each dataset's real schema:
through vLLM's CPU build (one engine per module: its start-up is slow on 2 cores) and through
transformers. The model talks nonsense, so this checks the plumbing and the records, not scores."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ptbench.inference.vllm_engine import RPC_ENV
from ptbench.tasks.evaluate import evaluate
from tests.tasks.conftest import ARENA_FIXTURE, FIXTURES, HEALTHBENCH_FIXTURE, judge_options, require

SHORT = {"max_new_tokens": 24, "retry_max_new_tokens": [12]}
TASKS = {
    "gsm8k": {"data_path": str(FIXTURES / "gsm8k")},
    "aime2025": {"data_path": str(FIXTURES / "aime2025")},
    "gpqa": {"data_path": str(FIXTURES / "gpqa")},
    "humaneval": {"data_path": str(FIXTURES / "humaneval" / "humaneval.jsonl")},
    "bfcl": {"data_path": str(FIXTURES / "bfcl"), "functions_module": str(FIXTURES / "bfcl" / "functions.py")},
    "arena_hard_writing": ARENA_FIXTURE,
    "healthbench_easy": HEALTHBENCH_FIXTURE,
}
N = {"gsm8k": 3, "aime2025": 2, "gpqa": 3, "humaneval": 3, "bfcl": 3, "arena_hard_writing": 3, "healthbench_easy": 3}


def _options(name, judge, tmp_path, **extra):
    opts = {**TASKS[name], **SHORT, **extra}
    if name in ("arena_hard_writing", "healthbench_easy"):
        opts.update(judge_options(judge, tmp_path))
    return opts


def _check(metrics: dict, name: str, engine: str, out: Path) -> None:
    assert metrics["task"]["name"] == name
    p = metrics["primary"]
    assert p["n"] == N[name] and 0.0 <= p["value"] <= 1.0
    assert metrics["settings"]["engine"] == engine
    assert metrics["settings"]["phases"][-1] == {**metrics["settings"]["phases"][-1], "ok": True, "max_new_tokens": 24}
    assert json.loads((out / "metrics.json").read_text()) == json.loads(json.dumps(metrics))
    assert len((out / "samples.jsonl").read_text().splitlines()) == N[name]
    identity = metrics["settings"]["test_set"]  # every task records what it scored
    assert identity["n"] == N[name] and len(identity["sha256"]) == 64


def _vllm_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


@pytest.fixture(scope="module")
def vllm_engine(tiny_model, tmp_path_factory):
    require(_vllm_available(), "vllm (CPU build) is needed for the vLLM end-to-end tests")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    # The worker may end without running exit handlers: its sockets go to a folder pytest owns
    os.environ.setdefault(RPC_ENV, str(tmp_path_factory.mktemp("vllm-rpc")))
    from ptbench.inference.vllm_engine import VLLMEngine

    # Started with the memorization check's own arguments, so test_vllm_prompt_logprobs_equal_transformers_scores
    # scores on the engine the check would start (generation does not depend on them).
    engine = VLLMEngine(str(tiny_model), max_model_len=2048, dtype="float32", batch_size=16, **VLLMEngine.scoring_args)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def hf_engine(tiny_model):
    from ptbench.inference.hf import TransformersEngine

    return TransformersEngine(str(tiny_model), batch_size=8)


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_through_vllm(name, vllm_engine, judge, tmp_path, tiny_model):
    out = tmp_path / "eval"
    metrics = evaluate(name, str(tiny_model), out, task_options=_options(name, judge, tmp_path), engine=vllm_engine)
    _check(metrics, name, "vllm", out)
    assert metrics["settings"]["engine_settings"]["max_model_len"] == 2048


def test_vllm_makes_its_sockets_in_the_folder_it_is_given(vllm_engine):
    """vLLM leaves ZMQ socket files where VLLM_RPC_BASE_PATH points (about 17 were left in /tmp by a
    suite run before the engine and the test server were given a folder of their own)."""
    sockets = [p for p in Path(os.environ[RPC_ENV]).iterdir() if p.is_socket()]
    assert sockets, "vLLM made its sockets elsewhere: VLLM_RPC_BASE_PATH no longer reaches it"


_RPC_CHILD = """
import json, os, socket, sys
from ptbench.inference.vllm_engine import private_rpc_folder
folder = private_rpc_folder()
assert private_rpc_folder() == folder  # once per process
if sys.argv[1:] == ["bind"]:
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(folder, "3f2c1d4e-0000-4000-8000-000000000000"))  # a socket vLLM leaves behind
print(json.dumps([folder, os.listdir(folder)]))
"""


def _rpc_child(env: dict[str, str], *argv: str) -> tuple[str, list[str]]:
    out = subprocess.run([sys.executable, "-c", _RPC_CHILD, *argv], env=env, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    folder, inside = json.loads(out.stdout)
    return folder, inside


def test_the_engines_socket_folder_is_its_process_own_and_goes_with_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != RPC_ENV}
    short = Path(tempfile.mkdtemp(prefix="pt-", dir="/tmp"))  # a socket's path must fit in 107 bytes
    try:
        folder, inside = _rpc_child(env | {"TMPDIR": str(short)}, "bind")
        assert Path(folder).parent == short and inside  # the socket was made in a folder of its own
        assert not Path(folder).exists() and list(short.iterdir()) == []  # and nothing is left
    finally:
        shutil.rmtree(short, ignore_errors=True)
    chosen = tmp_path / "mine"  # a folder the user set is kept, and used
    chosen.mkdir()
    assert _rpc_child(env | {RPC_ENV: str(chosen)})[0] == str(chosen) and chosen.exists()
    deep = tmp_path / ("d" * 60)  # a temp folder too deep for a socket path: vLLM's own default, unchanged
    deep.mkdir()
    assert _rpc_child(env | {"TMPDIR": str(deep)})[0] == str(deep)


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_through_transformers(name, hf_engine, judge, tmp_path, tiny_model):
    out = tmp_path / "eval"
    metrics = evaluate(name, str(tiny_model), out, task_options=_options(name, judge, tmp_path), engine=hf_engine)
    _check(metrics, name, "transformers", out)
    if name in ("arena_hard_writing", "healthbench_easy"):
        assert (
            metrics["settings"]["judge"]["model"] == "scripted-judge" and metrics["extra"]["judge_failed_examples"] == 0
        )
    if name == "humaneval":
        assert metrics["settings"]["sandbox"]["isolation"] == "bwrap"  # fails closed: never silently unisolated


@pytest.mark.slow
@pytest.mark.integration
def test_vllm_prompt_logprobs_equal_transformers_scores(vllm_engine, hf_engine):
    """Memorization's GPU path: vLLM's prompt_logprobs (its CPU build here) give the transformers
    engine's numbers for the same token ids. On this module's engine, started with the check's
    VLLMEngine.scoring_args, not one of its own (a start is most of a minute here)."""
    from ptbench.inference.loglik import continuation_logprobs, tokenize_pairs
    from ptbench.tasks.arithmetic import Arithmetic

    pairs = [(e.prompt, e.reference) for e in Arithmetic(digits=2, n_test=100).test_examples()[:12]]
    items = tokenize_pairs(hf_engine.tokenizer, pairs, 512)
    expected = continuation_logprobs(hf_engine, items)
    got = continuation_logprobs(vllm_engine, items)
    assert got == pytest.approx(expected, abs=1e-3)
    assert len(set(round(x, 3) for x in got)) > 1  # real, item-specific numbers


@pytest.mark.slow
@pytest.mark.integration
def test_base_prompt_format_through_transformers(hf_engine, judge, tmp_path, tiny_model):
    for name in ("gsm8k", "gpqa", "humaneval", "bfcl", "aime2025"):
        extra = {"prompt_format": "base", **({"fewshot": 2} if name == "gsm8k" else {})}
        m = evaluate(
            name,
            str(tiny_model),
            tmp_path / name,
            task_options=_options(name, judge, tmp_path, **extra),
            engine=hf_engine,
        )
        assert m["settings"]["prompt_format"] == "base" and m["primary"]["n"] == N[name]


def _cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "ptbench", "eval", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.slow
@pytest.mark.integration
def test_cli_eval_and_judge_failure_exit_code(tiny_model, tmp_path):
    ok = _cli(
        "gsm8k",
        "--model",
        str(tiny_model),
        "--out",
        str(tmp_path / "ok"),
        "--engine",
        "transformers",
        "--batch-size",
        "4",
        "--limit",
        "2",
        "--task-options",
        json.dumps({**TASKS["gsm8k"], **SHORT}),
    )
    assert ok.returncode == 0, ok.stderr
    metrics = json.loads((tmp_path / "ok" / "metrics.json").read_text())
    assert metrics["primary"]["n"] == 2 and metrics["task"]["options"]["data_path"]
    opts = {
        **TASKS["healthbench_easy"],
        **SHORT,
        "judge_base_url": "http://127.0.0.1:9/v1",
        "judge_max_retries": 0,
        "judge_cache_dir": str(tmp_path / "cache"),
    }
    bad = _cli(
        "healthbench_easy",
        "--model",
        str(tiny_model),
        "--out",
        str(tmp_path / "bad"),
        "--engine",
        "transformers",
        "--task-options",
        json.dumps(opts),
    )
    assert bad.returncode != 0 and "had a failed judge call" in bad.stderr
    assert not (tmp_path / "bad" / "metrics.json").exists()
    failure = json.loads((tmp_path / "bad" / "failure.json").read_text())
    assert failure["judge_failed_calls"] == failure["judge_calls"] == 7 and failure["judge_failed_examples"] == 3


def test_vllm_memory_errors_map_to_generation_failed():
    from ptbench.inference.vllm_engine import _is_memory_error

    assert _is_memory_error(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert _is_memory_error(ValueError("Insufficient memory for the KV cache: increase gpu_memory_utilization"))
    assert not _is_memory_error(ValueError("unknown model architecture"))
