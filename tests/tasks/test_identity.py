"""Test-set identity: every evaluation records a content hash of exactly what it scored, and the
collator refuses to put results with different test sets or evaluation settings in one column
unless asked (the real `ptbench collate` command on records in the real schema)."""

from __future__ import annotations

import json
import shutil

import pytest

from ptbench.core.errors import UserError
from ptbench.results.comparable import check_comparable
from ptbench.results.schema import ResultRecord
from ptbench.tasks import get_task
from ptbench.tasks.identity import scored_set_identity
from tests.conftest import ptbench

from .conftest import FIXTURES


def _identity(limit=None, **options):
    task = get_task("gsm8k", **options)
    return scored_set_identity(task.test_examples(limit), task.dataset)


def test_hash_changes_with_any_scored_item_and_not_otherwise(tmp_path):
    base = _identity(data_path=str(FIXTURES / "gsm8k"))
    assert base == _identity(data_path=str(FIXTURES / "gsm8k")) and len(base["sha256"]) == 64 and base["n"] == 3
    copy = tmp_path / "gsm8k"
    shutil.copytree(FIXTURES / "gsm8k", copy)
    rows = [json.loads(line) for line in (copy / "test.jsonl").read_text().splitlines()]
    rows[-1]["answer"] = rows[-1]["answer"].rsplit("####", 1)[0] + "#### 999999"  # one reference changed
    (copy / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _identity(data_path=str(copy))["sha256"] != base["sha256"]
    assert _identity(data_path=str(FIXTURES / "gsm8k"), limit=2)["sha256"] != base["sha256"]
    assert _identity(data_path=str(FIXTURES / "gsm8k"), prompt_format="base")["sha256"] != base["sha256"]
    # Shuffled choices are part of GPQA's test set: another seed is another test set.
    gpqa = [
        scored_set_identity(t.test_examples(), t.dataset)["sha256"]
        for t in (get_task("gpqa", data_path=str(FIXTURES / "gpqa"), seed=s) for s in (0, 0, 1))
    ]
    assert gpqa[0] == gpqa[1] != gpqa[2]


def _record(trial: str, agent: str, sha: str, judge_model: str = "gpt-5-mini") -> dict:
    return ResultRecord.model_validate(
        {
            "campaign": "c",
            "trial_id": trial,
            "agent": {"name": agent, "label": agent},
            "seed": 0,
            "base_model": {"id": "Qwen/Qwen3-1.7B-Base", "label": "qwen"},
            "task": {"name": "healthbench_easy", "label": "healthbench_easy", "version": "1"},
            "status": "completed",
            "budget": {"hours": 1, "gpus": 1},
            "finished_at": 0,
            "primary_metric": {"name": "score", "value": 0.4, "stderr": 0.02, "n": 245},
            "evaluation": {
                "test_set": {"sha256": sha, "n": 245},
                "prompt_format": "chat",
                "fewshot": 0,
                "limit": None,
                "chat_template": {"source": "harness", "family": "qwen3"},
                "generation": {
                    "max_new_tokens": 16384,
                    "retry_max_new_tokens": [12288, 8192],
                    "temperature": 0.0,
                    "stop": [],
                },
                "judge": {"base_url": "https://api.openai.com/v1", "model": judge_model, "temperature": None},
            },
            "provenance": {"ptbench_version": "0", "host": "h", "scheduler": "local"},
        }
    ).model_dump(mode="json")


def _write(root, records):
    for r in records:
        (root / r["trial_id"]).mkdir(parents=True)
        (root / r["trial_id"] / "result.json").write_text(json.dumps(r))


def test_collate_refuses_mixed_test_sets_and_says_which_differ(tmp_path):
    a, b = "a" * 64, "b" * 64
    _write(tmp_path / "mixed", [_record("t1", "claude", a), _record("t2", "claude", a), _record("t3", "codex", b)])
    run = ptbench("collate", str(tmp_path / "mixed"))
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert "column 'healthbench_easy': test-set hash differs" in run.stderr
    assert (
        "aaaaaaaaaaaa… in 2 (t1, t2)" in run.stderr
        and "bbbbbbbbbbbb… in 1 (t3)" in run.stderr
        and "--allow-mixed" in run.stderr
    )
    assert not (tmp_path / "mixed" / "tables").exists()
    allowed = ptbench("collate", str(tmp_path / "mixed"), "--allow-mixed")
    assert (
        allowed.returncode == 0
        and "test-set hash differs" in allowed.stderr
        and (tmp_path / "mixed" / "tables" / "results.md").exists()
    )


def _check(records, **kw):
    return check_comparable([ResultRecord.model_validate(r) for r in records], **kw)


def test_a_different_judge_is_refused_and_alike_results_pass():
    with pytest.raises(UserError, match="judge differs: .*gpt-4o"):
        _check([_record("t1", "claude", "a" * 64), _record("t2", "codex", "a" * 64, judge_model="gpt-4o")])
    assert _check([_record("t1", "claude", "a" * 64), _record("t2", "codex", "a" * 64)]) == []
    warned = _check([_record("t1", "claude", "a" * 64), _record("t2", "codex", "b" * 64)], allow_mixed=True)
    assert len(warned) == 1 and "test-set hash differs" in warned[0]


def test_baseline_rows_keep_their_own_prompt_format_but_not_another_judge():
    base = _record("baseline-base-zero-shot-qwen-healthbench_easy", "base (zero-shot)", "c" * 64)
    base["campaign"] = "baselines"
    base["evaluation"].update(prompt_format="base", chat_template={"source": "unused (completion prompts)"})
    assert _check([_record("t1", "claude", "a" * 64), base]) == []
    other = _record("baseline-instruct", "instruct", "a" * 64, judge_model="gpt-4o")
    other["campaign"] = "baselines"
    with pytest.raises(UserError, match="judge differs"):
        _check([_record("t1", "claude", "a" * 64), other])
