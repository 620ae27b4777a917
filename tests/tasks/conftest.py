from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"


def require(ok: bool, why: str) -> None:
    """In CI a missing real component fails the test; locally it skips."""
    if not ok:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(why)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """The demo's tiny Llama with a longer position range (task prompts are long in characters)."""
    from ptbench.demo import make_tiny_model

    path = make_tiny_model(tmp_path_factory.mktemp("models") / "tiny")
    cfg = json.loads((path / "config.json").read_text())
    cfg["max_position_embeddings"] = 4096
    (path / "config.json").write_text(json.dumps(cfg))
    return path


@pytest.fixture
def judge():
    from .judge_server import ScriptedJudge

    with ScriptedJudge() as server:
        yield server


def judge_options(judge, tmp_path: Path, **extra) -> dict:
    return {
        "judge_base_url": judge.base_url,
        "judge_model": "scripted-judge",
        "judge_api_key_env": "PTBENCH_TEST_JUDGE_KEY",
        "judge_cache_dir": str(tmp_path / "judge-cache"),
        "judge_backoff_s": 0.05,
        "judge_max_retries": 2,
        **extra,
    }


# The fixture folders hold a few items in the official schemas; these options select them the way
# the shipped id lists select the real subsets.
ARENA_FIXTURE = {
    "data_path": str(FIXTURES / "arena_hard_writing"),
    "question_uids": str(FIXTURES / "arena_hard_writing" / "uids.txt"),
    "reference_model": "gemini-2.0-flash-001",
}
HEALTHBENCH_FIXTURE = {
    "data_path": str(FIXTURES / "healthbench_easy"),
    "subset_ids": str(FIXTURES / "healthbench_easy" / "prompt_ids.txt"),
}
