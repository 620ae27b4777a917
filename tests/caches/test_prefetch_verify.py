"""`ptbench cache prefetch` and `ptbench cache verify` against a local stand-in of the Hub.

The Hub cannot be reached from here, so tests/caches/hub_standin.py serves the endpoints
huggingface_hub really calls (HF_ENDPOINT); huggingface_hub itself (snapshot_download, its resume
and cache layout) is the real one, run by the real `ptbench` command in a subprocess.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from safetensors.numpy import save

from tests.caches.hub_standin import Hub, Repo
from tests.conftest import ptbench

rng = np.random.default_rng(0)
SHAPES = {"embed.weight": (64, 32), "lm_head.weight": (64, 32)}
BASE_WEIGHTS = save({k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()})
INSTRUCT_WEIGHTS = save(
    {k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}
)  # same header, other data
TRAIN = b"question,answer\n" + b"".join(b"train %d,%d\n" % (i, i) for i in range(200))
TEST = b"question,answer\n" + b"".join(b"test %d,%d\n" % (i, i * 7) for i in range(200))
SLOW = rng.bytes(1_500_000)


@pytest.fixture
def hub():
    h = Hub(
        [
            Repo(
                "model", "org/tiny-base", {"config.json": b'{"model_type": "llama"}', "model.safetensors": BASE_WEIGHTS}
            ),
            Repo(
                "model",
                "org/tiny-instruct",
                {"config.json": b'{"model_type": "llama"}', "model.safetensors": INSTRUCT_WEIGHTS},
            ),
            Repo(
                "dataset",
                "org/bench",
                {"main/train-00000.csv": TRAIN, "main/test-00000.csv": TEST, "README.md": b"# bench"},
            ),
            Repo("dataset", "org/evalonly", {"data.jsonl": b'{"q": "secret"}\n'}),
            Repo("dataset", "org/big", {"slow-shard.bin": SLOW}),
        ]
    )
    url = h.start()
    yield h, url
    h.stop()


@pytest.fixture
def lists(tmp_path):
    resources = tmp_path / "resources.json"
    resources.write_text(
        json.dumps(
            {
                "models": ["org/tiny-base", "org/tiny-instruct"],
                "datasets": [
                    {"dataset": "org/bench", "splits": ["train", "test"]},
                    {"dataset": "org/evalonly"},
                    "org/big",
                ],
            }
        )
    )
    evals = tmp_path / "eval.json"
    evals.write_text(
        json.dumps(
            {
                "test_sets": [{"repo": "org/bench", "patterns": ["*/test-*"]}, {"repo": "org/evalonly"}],
                "instruct_models": [{"repo": "org/tiny-instruct"}],
            }
        )
    )
    return resources, evals


def _env(url: str) -> dict[str, str]:
    return {"HF_ENDPOINT": url, "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1", "HF_HUB_ETAG_TIMEOUT": "30"}


def test_prefetch_continues_after_a_kill_excludes_evaluation_data_and_verify_catches_planted_files(
    hub, lists, tmp_path
):
    h, url = hub
    resources, evals = lists
    agent, ev = tmp_path / "agent-hf", tmp_path / "eval-hf"
    argv = [
        sys.executable,
        "-m",
        "ptbench",
        "cache",
        "prefetch",
        str(resources),
        "--cache",
        str(agent),
        "--eval-resources",
        str(evals),
    ]

    # 1. killed in the middle of the slow file
    proc = subprocess.Popen(
        argv, env={**os.environ, **_env(url)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        for _ in range(600):
            if h.bytes_sent.get("slow-shard.bin", 0) > 200_000:
                break
            time.sleep(0.05)
        assert h.bytes_sent.get("slow-shard.bin", 0) > 200_000, (
            proc.stdout.read().decode() if proc.poll() is not None else "no bytes"
        )
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    partial = list((agent / "hub" / "datasets--org--big" / "blobs").glob("*.incomplete"))
    assert len(partial) == 1  # the file being written when the process died

    # 2. run again: what was finished is not downloaded again; the partial leftover is removed;
    # the interrupted file is fetched again from its first byte: huggingface_hub >= 1 writes each
    # process's download to a file of its own, so a new process cannot continue the dead one's
    # (caches/prefetch.py names the code; a dropped connection inside one process does resume:
    # the next test)
    h.requests.clear()
    again = ptbench(
        "cache", "prefetch", str(resources), "--cache", str(agent), "--eval-resources", str(evals), env=_env(url)
    )
    assert again.returncode == 0, again.stdout + again.stderr
    gets = [r for r in h.requests if r["method"] == "GET" and "/resolve/" in r["path"]]
    assert gets and all(r["path"].endswith("slow-shard.bin") and r["range"] is None for r in gets), gets
    assert not partial[0].exists() and not list((agent / "hub").glob("*/blobs/*.incomplete"))
    snap = next((agent / "hub" / "datasets--org--big" / "snapshots").iterdir())
    assert hashlib.sha256((snap / "slow-shard.bin").read_bytes()).digest() == hashlib.sha256(SLOW).digest()
    # the summary: outcomes and sizes
    assert "skipped" in again.stdout and "downloaded" in again.stdout and "1.5 MB" in again.stdout

    # 3. nothing the evaluation owns reached the agent cache
    hubdir = agent / "hub"
    assert not (hubdir / "models--org--tiny-instruct").exists() and not (hubdir / "datasets--org--evalonly").exists()
    bench = next((hubdir / "datasets--org--bench" / "snapshots").iterdir())
    assert (bench / "main" / "train-00000.csv").read_bytes() == TRAIN and not (
        bench / "main" / "test-00000.csv"
    ).exists()
    assert not any(r["path"].endswith("test-00000.csv") for r in h.requests)
    pins = json.loads((agent / "ptbench-pins.json").read_text())
    assert pins["model:org/tiny-base"] == h.repos[("model", "org/tiny-base")].sha

    # 4. the evaluation cache gets exactly the evaluation list
    evp = ptbench("cache", "prefetch", "--eval", "--cache", str(ev), "--eval-resources", str(evals), env=_env(url))
    assert evp.returncode == 0, evp.stdout + evp.stderr
    assert (ev / "hub" / "models--org--tiny-instruct").is_dir()

    # 5. verify: clean (the base model shares the instruct model's header, not its weights)
    verify = ["cache", "verify", "--agent-cache", str(agent), "--eval-cache", str(ev), "--eval-resources", str(evals)]
    clean = ptbench(*verify)
    assert clean.returncode == 0 and "clean" in clean.stdout, clean.stdout + clean.stderr

    # 6. hostile: a test-set file renamed and hidden in the agent cache; instruct weights as a blob without a name
    (agent / "my-data").mkdir()
    (agent / "my-data" / "extra_train.bin").write_bytes(TEST)
    (hubdir / "models--org--tiny-base" / "blobs" / ("0" * 64)).write_bytes(INSTRUCT_WEIGHTS)
    dirty = ptbench(*verify)
    assert dirty.returncode == 1, dirty.stdout
    out = " ".join(dirty.stdout.split())
    assert "test_set_file" in out and "extra_train.bin" in out and "org/bench/main/test-00000.csv" in out
    assert "instruct_weights" in out and "org/tiny-instruct/model.safetensors" in out

    # 7. hostile: the instruct model's repository itself in the agent cache
    (hubdir / "models--org--tiny-instruct").mkdir()
    assert "repo_id" in ptbench(*verify).stdout


def test_a_connection_dropped_mid_file_resumes_with_a_range_request_for_the_rest(tmp_path):
    """huggingface_hub's http_get retries a dropped download inside the same process with
    `Range: bytes=<bytes on disk>-` (it writes in DOWNLOAD_CHUNK_SIZE pieces, 10 MB, so what it
    holds is whole pieces); the stand-in cuts the first GET of a `flaky` file at three quarters."""
    from huggingface_hub import constants

    data = rng.bytes(constants.DOWNLOAD_CHUNK_SIZE + 6_000_000)
    h = Hub([Repo("dataset", "org/flaky", {"flaky-shard.bin": data})])
    url = h.start()
    try:
        resources = tmp_path / "resources.json"
        resources.write_text(json.dumps({"datasets": ["org/flaky"]}))
        cache = tmp_path / "agent-hf"
        out = ptbench("cache", "prefetch", str(resources), "--cache", str(cache), env=_env(url))
    finally:
        h.stop()
    assert out.returncode == 0, out.stdout + out.stderr
    first, second = [s for s in h.served if s["file"] == "flaky-shard.bin"]
    assert first == {"file": "flaky-shard.bin", "start": 0, "bytes": len(data) * 3 // 4}  # the drop
    ranges = [r["range"] for r in h.requests if r["method"] == "GET" and r["path"].endswith("flaky-shard.bin")]
    resumed_at = constants.DOWNLOAD_CHUNK_SIZE  # what the client had written when the connection died
    assert ranges == [None, f"bytes={resumed_at}-"]  # the continuation asks for the rest only
    assert second == {"file": "flaky-shard.bin", "start": resumed_at, "bytes": len(data) - resumed_at}
    snap = next((cache / "hub" / "datasets--org--flaky" / "snapshots").iterdir())
    assert hashlib.sha256((snap / "flaky-shard.bin").read_bytes()).digest() == hashlib.sha256(data).digest()


def test_offline_prefetch_uses_the_cache_and_fails_for_what_is_missing(hub, lists, tmp_path):
    h, url = hub
    resources, evals = lists
    agent = tmp_path / "agent-hf"
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"models": ["org/tiny-base"]}))
    assert (
        ptbench(
            "cache", "prefetch", str(small), "--cache", str(agent), "--eval-resources", str(evals), env=_env(url)
        ).returncode
        == 0
    )
    h.requests.clear()
    offline = {**_env(url), "HF_HUB_OFFLINE": "1"}
    cached = ptbench(
        "cache", "prefetch", str(small), "--cache", str(agent), "--eval-resources", str(evals), env=offline
    )
    assert cached.returncode == 0, cached.stdout + cached.stderr
    assert h.requests == []  # offline: not one request
    missing = ptbench(
        "cache", "prefetch", str(resources), "--cache", str(agent), "--eval-resources", str(evals), env=offline
    )
    assert missing.returncode == 1 and "failed" in missing.stdout
    assert h.requests == []


def test_verify_without_the_evaluation_cache_is_not_a_proof(lists, tmp_path):
    _resources, evals = lists
    (tmp_path / "agent-hf" / "hub").mkdir(parents=True)
    out = ptbench(
        "cache",
        "verify",
        "--agent-cache",
        str(tmp_path / "agent-hf"),
        "--eval-cache",
        str(tmp_path / "none"),
        "--eval-resources",
        str(evals),
    )
    assert out.returncode == 1 and "not proven" in out.stdout
    assert (
        ptbench(
            "cache",
            "verify",
            "--agent-cache",
            str(tmp_path / "agent-hf"),
            "--eval-cache",
            str(tmp_path / "none"),
            "--eval-resources",
            str(evals),
            "--allow-unchecked",
        ).returncode
        == 0
    )


def test_bad_resources_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"models": [42]}')
    out = ptbench("cache", "prefetch", str(bad), "--cache", str(tmp_path / "c"))
    assert out.returncode == 2 and "models[0]" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_the_default_lists_ship_with_the_package():
    from ptbench.caches.resources import agent_resources
    from ptbench.tasks.base import evaluation_list

    res = agent_resources()
    assert sum(r.kind == "model" for r in res) == 14 and sum(r.kind == "dataset" for r in res) == 382
    ev = evaluation_list()  # the shipped instruct models and each registered benchmark's held-out data
    assert ev.whole_repo("model", "Qwen/Qwen3-1.7B") and ev.ignore_patterns("dataset", "openai/gsm8k")
