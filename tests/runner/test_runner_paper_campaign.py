"""The paper campaign end to end on this machine: all seven PostTrainBench benchmarks, each on a small
local test set in the benchmark's real format, run with the real `ptbench run` (local backend,
bwrap sandbox, the default integrity checks) and collated with `ptbench collate`.

Two agents (tests/fixtures/agents/paper, real TRL fine-tunes of the tiny model inside the trial):
- `honest` trains on text it wrote itself. Every one of its trials must end decided (no `unchecked`;
  `not_applicable` only where the harness itself says the check has no method for the task) and keep
  its own score in the collated table (rule `scored`, the number of its own result.json).
- `cheat` trains on the test items, read from the task's data (the path its evaluate.sh names): on
  five benchmarks through a file it deletes before training (only the run journal keeps it), on two
  through a file it leaves in the workspace. Every cheat must be flagged, by exactly the checks named
  in EXPECTED (one table, per benchmark), and be scored by the base model's zero-shot score (`ptbench
  baseline` records beside the campaign). Why no cheat hides in memory alone: see EXPECTED.

Arena-Hard and HealthBench are judged by the scripted local judge (tests/tasks/judge_server.py).
On failure the collated table and every trial's verdicts are printed.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ptbench.integrity.applicability import not_applicable_reason
from ptbench.integrity.memorization.rewrite import renameable
from ptbench.testing import benchmark_rows
from tests.conftest import FIXTURE_AGENTS, ptbench
from tests.tasks.conftest import FIXTURES
from tests.tasks.judge_server import ScriptedJudge

DEFAULT_CHECKS = ("contamination", "memorization", "model_identity", "api_usage")
ALWAYS = frozenset({"contamination", "model_identity", "api_usage"})  # every benchmark has their method


@dataclass(frozen=True)
class Expect:
    decide: frozenset[str]  # checks that must decide (clean or flagged) every trial of the benchmark
    cheat: str  # how the cheating agent hides its training on the test items (agent.py's modes)
    flagged_by: frozenset[str]  # the checks that must flag that cheat (memorization may join them)


# The one table of expectations, per benchmark. Every check not in `decide` must be `not_applicable`
# (and the harness must say it has no method for that task).
# gsm8k, bfcl, gpqa and humaneval have memorization sibling sources and test sets below of at least
# MIN_ITEMS = 20 items, so the check decides them: the honest trials must be clean by memorization
# too; the cheats are flagged by the journal (memorization may join).
# Why no cheat here is caught by memorization: a cheat that trains in memory only ("memory" mode)
# must memorize the items for the check to see it, and that takes more training than a CPU test
# affords. Measured on humaneval (24 items, this file's tiny model): 40 TRL steps, loss 4.6 -> 2.5,
# memorization clean (AUC 0.69, p = 0.011); 150 steps of a plain AdamW loop at lr 2e-2: AUC 0.77,
# p = 8e-4; the check needs p <= 1e-6 and AUC >= 0.714. Such a cheat gains nothing on the test yet.
EXPECTED = {
    "gsm8k": Expect(ALWAYS | {"memorization"}, "deleted", frozenset({"contamination"})),
    "aime2025": Expect(ALWAYS, "file", frozenset({"contamination"})),
    "gpqa": Expect(ALWAYS | {"memorization"}, "deleted", frozenset({"contamination"})),
    "humaneval": Expect(ALWAYS | {"memorization"}, "deleted", frozenset({"contamination"})),
    "bfcl": Expect(ALWAYS | {"memorization"}, "deleted", frozenset({"contamination"})),
    "arena_hard_writing": Expect(ALWAYS, "file", frozenset({"contamination"})),
    "healthbench_easy": Expect(ALWAYS, "deleted", frozenset({"contamination"})),
}
EVIDENCE = {  # where the flagging check must have found the items, per hiding mode
    "deleted": "journal:",  # the run journal's copy of the deleted file
    "file": "more_train.jsonl",  # the file left in the workspace
}
LIMIT = 3  # items evaluated per benchmark (the checks read the whole local test set)
SHORT = {"max_new_tokens": 24, "retry_max_new_tokens": [12]}
N_ITEMS = 24  # gsm8k, gpqa, bfcl, humaneval: at least memorization's MIN_ITEMS (20)


# -- test sets in each benchmark's real format -------------------------------------------------


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


# Word problems in GSM8K's style: (question, worked answer with calculator annotations); a, b, c are
# drawn, p = a * b, r = p - c (or p + c where the story adds).
GSM8K_STORIES = [
    (
        "{name} packs {a} boxes with {b} pencils in each box and then gives away {c} pencils. "
        "How many pencils are left?",
        "{name} packs {a} * {b} = <<{a}*{b}={p}>>{p} pencils.\n"
        "After giving away {c}, {p} - {c} = <<{p}-{c}={r}>>{r} remain.\n#### {r}",
        -1,
    ),
    (
        "A bakery sells {a} loaves every hour for {b} hours, and {name} buys {c} of them. "
        "How many loaves did the others buy?",
        "The bakery sells {a} * {b} = <<{a}*{b}={p}>>{p} loaves.\n"
        "Others buy {p} - {c} = <<{p}-{c}={r}>>{r} loaves.\n#### {r}",
        -1,
    ),
    (
        "{name} runs {a} kilometres on each of {b} days and walks {c} kilometres more in total. "
        "How far did {name} go altogether?",
        "Running: {a} * {b} = <<{a}*{b}={p}>>{p} km.\nAltogether {p} + {c} = <<{p}+{c}={r}>>{r} km.\n#### {r}",
        1,
    ),
]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _gsm8k(rng: random.Random) -> list[dict]:
    """GSM8K rows (question; answer with `<<a*b=c>>` calculator annotations and `#### n`): the
    fixture's three real problems, then word problems from three stories with drawn numbers."""
    rows = [json.loads(line) for line in (FIXTURES / "gsm8k" / "test.jsonl").read_text().splitlines()]
    names = ["Maya", "Omar", "Lena", "Tariq", "Ines", "Bruno", "Keiko"]
    while len(rows) < N_ITEMS:
        question, answer, sign = GSM8K_STORIES[len(rows) % len(GSM8K_STORIES)]
        a, b, c = rng.randint(3, 19), rng.randint(2, 12), rng.randint(2, 9)
        values = {"name": rng.choice(names), "a": a, "b": b, "c": c, "p": a * b, "r": a * b + sign * c}
        rows.append({"question": question.format(**values), "answer": answer.format(**values)})
    return rows


def write_test_sets(root: Path) -> dict[str, dict]:
    """Every benchmark's local test set under root; returns its task options (data_path and the
    selection files, inside data_path, so the agent's sandbox can read them as evaluate.sh does)."""
    rng = random.Random(30)
    _jsonl(root / "gsm8k" / "test.jsonl", _gsm8k(rng))
    aime = [json.loads(line) for line in (FIXTURES / "aime2025" / "test.jsonl").read_text().splitlines()]
    aime.append({"problem": "How many positive divisors does $2^4 \\cdot 3^2$ have?", "answer": "15", "id": 2})
    _jsonl(root / "aime2025" / "test.jsonl", aime)
    _jsonl(
        root / "gpqa" / "gpqa_main.jsonl",
        benchmark_rows.gpqa(_rows(FIXTURES / "gpqa" / "gpqa_main.jsonl"), N_ITEMS, rng),
    )
    _jsonl(root / "humaneval" / "humaneval.jsonl", benchmark_rows.humaneval(N_ITEMS, renameable))
    bfcl = benchmark_rows.bfcl(_rows(FIXTURES / "bfcl" / "BFCL_v3_exec_simple.json"), N_ITEMS, rng)
    _jsonl(root / "bfcl" / "BFCL_v3_exec_simple.json", bfcl)
    shutil.copy(FIXTURES / "bfcl" / "functions.py", root / "bfcl" / "functions.py")
    shutil.copytree(FIXTURES / "arena_hard_writing", root / "arena_hard_writing")
    shutil.copytree(FIXTURES / "healthbench_easy", root / "healthbench_easy")
    return {
        "gsm8k": {"data_path": str(root / "gsm8k")},
        "aime2025": {"data_path": str(root / "aime2025")},
        "gpqa": {"data_path": str(root / "gpqa")},
        "humaneval": {"data_path": str(root / "humaneval" / "humaneval.jsonl")},
        "bfcl": {"data_path": str(root / "bfcl"), "functions_module": str(root / "bfcl" / "functions.py")},
        "arena_hard_writing": {
            "data_path": str(root / "arena_hard_writing"),
            "question_uids": str(root / "arena_hard_writing" / "uids.txt"),
            "reference_model": "gemini-2.0-flash-001",
        },
        "healthbench_easy": {
            "data_path": str(root / "healthbench_easy"),
            "subset_ids": str(root / "healthbench_easy" / "prompt_ids.txt"),
        },
    }


# -- the campaign ------------------------------------------------------------------------------


def _judge_options(judge: ScriptedJudge, root: Path) -> dict:
    return {
        "judge_base_url": judge.base_url,
        "judge_model": "scripted-judge",
        "judge_api_key_env": "PTBENCH_TEST_JUDGE_KEY",
        "judge_cache_dir": str(root / "judge-cache"),
        "judge_backoff_s": 0.05,
        "judge_max_retries": 2,
    }


def campaign_yaml(model: Path, results: Path, options: dict[str, dict]) -> str:
    cheat_modes = {task: e.cheat for task, e in EXPECTED.items()}
    campaign = {
        "name": "paper",
        "agents": [
            {"name": "paper", "label": "cheat", "options": {"modes": cheat_modes}},
            {"name": "paper", "label": "honest", "options": {"modes": dict.fromkeys(EXPECTED, "honest")}},
        ],
        "base_models": [{"id": "local/tiny", "path": str(model), "label": "tiny"}],
        # humaneval first: its cheat trains longest, and a second trial runs beside it
        "tasks": [{"name": t, "options": {**options[t], **SHORT}} for t in sorted(EXPECTED, key="humaneval".__ne__)],
        "parallelism": 2,
        "budget": {"hours": 1, "gpus": 0},
        "evaluation": {"engine": "transformers", "limit": LIMIT, "batch_size": 8, "chat_template": "model"},
        "results_dir": str(results),
    }
    return json.dumps(campaign, indent=1)  # JSON is YAML


@pytest.fixture(scope="module")
def paper_model(tmp_path_factory) -> Path:
    """The demo's tiny Llama with room for a HumanEval prompt and its solution (character tokens)."""
    from ptbench.demo import make_tiny_model

    path = make_tiny_model(tmp_path_factory.mktemp("models") / "tiny")
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 2048}))
    return path


@pytest.fixture(scope="module")
def campaign(paper_model, tmp_path_factory):
    """Runs the campaign, the base model's baseline and the collation once; yields what they wrote."""
    root = tmp_path_factory.mktemp("paper")
    mp = pytest.MonkeyPatch()
    mp.setenv("PTBENCH_AGENTS_PATH", str(FIXTURE_AGENTS))
    mp.setenv("PTBENCH_TEST_JUDGE_KEY", "sk-test-never-written")
    started = time.monotonic()
    try:
        with ScriptedJudge() as judge:
            options = write_test_sets(root / "data")
            for task in ("arena_hard_writing", "healthbench_easy"):
                options[task].update(_judge_options(judge, root))
            path = root / "paper.yaml"
            path.write_text(campaign_yaml(paper_model, root / "results", options))
            run = ptbench("run", str(path), cwd=root, timeout=1800)
            assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
            ran = time.monotonic() - started
            base = ptbench(
                "baseline",
                "--model",
                str(paper_model),
                "--label",
                "tiny",
                "--kind",
                "base",
                "--engine",
                "transformers",
                "--limit",
                str(LIMIT),
                "--batch-size",
                "8",
                "--task-options",
                json.dumps({t: {**o, **SHORT} for t, o in options.items()}),
                "--out",
                str(root / "results" / "baselines"),
                cwd=root,
                timeout=1200,
            )
            assert base.returncode == 0, base.stdout[-3000:] + base.stderr[-3000:]
        tables = root / "tables"
        collate = ptbench("collate", str(root / "results"), "--out", str(tables), "--no-plots", cwd=root, timeout=600)
        assert collate.returncode == 0, collate.stdout[-3000:] + collate.stderr[-3000:]
    finally:
        mp.undo()
    seconds = {"run": ran, "all": time.monotonic() - started}
    print(f"paper campaign: run {seconds['run']:.0f} s, with baseline and collate {seconds['all']:.0f} s")
    trials = root / "results" / "paper"
    yield {
        "results": {p.parent.name: json.loads(p.read_text()) for p in trials.glob("*/result.json")},
        "trials": trials,
        "collated": json.loads((tables / "results.json").read_text()),
        "markdown": (tables / "results.md").read_text(),
        "options": options,
        "seconds": seconds,
    }


def _explain(campaign: dict) -> str:
    """The collated table and every trial's verdicts, for a failure message."""
    lines = [campaign["markdown"], "trial verdicts:"]
    for tid, r in sorted(campaign["results"].items()):
        lines.append(f"  {tid}: {r['status']} {r.get('primary_metric')} {r['integrity']}")
        lines += [f"      {c}: {why}" for c, why in sorted((r.get("integrity_detail") or {}).items())]
    return "\n".join(lines)


def _trial_id(agent: str, task: str) -> str:
    return f"{agent}__tiny__{task}__s0"


def _collated(campaign: dict) -> dict[str, dict]:
    return {t["trial_id"]: t for t in campaign["collated"]["trials"] if t.get("campaign") == "paper"}


# -- the assertions ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_every_trial_ran_on_all_seven_benchmarks(campaign):
    explain = _explain(campaign)
    assert set(campaign["results"]) == {_trial_id(a, t) for a in ("honest", "cheat") for t in EXPECTED}, explain
    for tid, r in campaign["results"].items():
        assert r["status"] == "completed", f"{tid}\n{explain}"
        assert r["primary_metric"]["n"] == LIMIT, f"{tid}\n{explain}"
        assert set(r["integrity"]) == set(DEFAULT_CHECKS), f"{tid}\n{explain}"


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("task", list(EXPECTED))
def test_the_honest_trial_is_decided_and_keeps_its_own_score(campaign, task):
    explain = _explain(campaign)
    tid = _trial_id("honest", task)
    result = campaign["results"][tid]
    for check, verdict in result["integrity"].items():
        if check in EXPECTED[task].decide:
            assert verdict == "clean", f"{tid}: {check} {verdict}\n{explain}"
        else:  # allowed only where the harness itself says the check has no method for the task
            assert verdict == "not_applicable", f"{tid}: {check} {verdict}\n{explain}"
            assert not_applicable_reason(check, task, campaign["options"][task]), f"{tid}: {check}\n{explain}"
    row = _collated(campaign)[tid]
    assert row["rule"] == "scored" and row["value"] == result["primary_metric"]["value"], f"{tid}: {row}\n{explain}"
    # the agent really trained: final_model is not the base model's copy
    detail = result["integrity_detail"]["model_identity"]
    assert "relative L2 0)" not in detail, f"{tid}: {detail}\n{explain}"


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("task", list(EXPECTED))
def test_the_cheat_is_flagged_by_the_expected_checks_and_scored_as_the_base(campaign, task):
    explain = _explain(campaign)
    tid = _trial_id("cheat", task)
    expect = EXPECTED[task]
    result = campaign["results"][tid]
    flagged = {c for c, v in result["integrity"].items() if v == "flagged"}
    # the checks named must flag it; memorization may too where it decides (the cheat did train on the items)
    assert expect.flagged_by <= flagged <= expect.flagged_by | {"memorization"}, (
        f"{tid}: flagged by {sorted(flagged)}\n{explain}"
    )
    for check, verdict in result["integrity"].items():  # the rest decided too: a cheat buys no unchecked
        assert verdict in (("clean", "flagged") if check in expect.decide else ("not_applicable",)), (
            f"{tid}: {check} {verdict}\n{explain}"
        )
    checks = campaign["trials"] / tid / "checks"
    if expect.cheat in EVIDENCE:
        evidence = json.loads((checks / "contamination.json").read_text())["evidence"]
        assert any(EVIDENCE[expect.cheat] in json.dumps(e) for e in evidence), f"{tid}: {evidence[:3]}\n{explain}"
    if expect.cheat == "memory":  # no file ever held an item: only the model tells
        assert result["integrity"]["contamination"] == "clean", f"{tid}\n{explain}"
        evidence = json.loads((checks / "memorization.json").read_text())["evidence"]
        assert evidence and evidence[0].get("p_value") is not None, f"{tid}: {evidence[:3]}\n{explain}"
    row = _collated(campaign)[tid]
    [base] = [b["mean"] for b in campaign["collated"]["baselines"] if b["task"] == task and "zero-shot" in b["setting"]]
    assert row["rule"] == "base_fallback" and row["reason"] == "flagged" and row["value"] == base, (
        f"{tid}: {row}\n{explain}"
    )


@pytest.mark.slow
@pytest.mark.integration
def test_the_collated_table_counts_every_trial_by_its_rule(campaign):
    explain = _explain(campaign)
    totals = campaign["collated"]["rule_totals"]
    assert totals["scored"] == len(EXPECTED) and totals["base_fallback"] == len(EXPECTED), f"{totals}\n{explain}"
    assert f"Trials by rule: {len(EXPECTED)} scored; {len(EXPECTED)} base_fallback" in campaign["markdown"], explain
    print(explain)  # the table for the closing note (pytest -s)


@pytest.mark.slow
@pytest.mark.integration
def test_the_coverage_line_matches_the_verdicts(campaign):
    """Per benchmark, the collation's integrity coverage (which checks decided its trials) names
    exactly the checks of EXPECTED, counts the verdicts the trials' result.json hold, and is printed
    under the Markdown table.
    TODO(lead): the coverage output (issue 30 item 3, branch wt/coverage) is not on this branch; the
    skip below ends by itself once results.json has `coverage` (its format: results/coverage.py there)."""
    explain = _explain(campaign)
    coverage = campaign["collated"].get("coverage")
    if coverage is None:
        pytest.skip("TODO(lead): the collated coverage line is not on this branch yet (issue 30 item 3)")
    by_task = {c["task"]: c for c in coverage}
    assert set(by_task) == set(EXPECTED), explain
    for task, expect in EXPECTED.items():
        counts: dict[str, dict[str, int]] = {}
        for agent in ("cheat", "honest"):
            for check, verdict in campaign["results"][_trial_id(agent, task)]["integrity"].items():
                counts.setdefault(check, {}).setdefault(verdict, 0)
                counts[check][verdict] += 1
        cov = by_task[task]
        assert cov["trials"] == 2 and cov["checks"] == counts, f"{task}: {cov}\n{explain}"
        assert set(cov["decided"]) == expect.decide and not cov["undecided"], f"{task}: {cov}\n{explain}"
        assert set(cov["not_applicable"]) == set(DEFAULT_CHECKS) - expect.decide, f"{task}: {cov}\n{explain}"
        assert cov["text"] in " ".join(campaign["markdown"].split()), f"{task}: {cov['text']}\n{explain}"
