"""The memorization check: does final_model/ know the test items better than sibling items of the
same distribution it could not have seen, relative to the base model?

For every test item and every sibling the check measures the log-likelihood of the reference answer
under the base model and under final_model, in the evaluation's engine, on the same token ids (the
trusted base model's tokenizer). An item's gain is final minus base, per token of the answer (so
answers of different lengths weigh alike). An honest agent never saw
either set, so test and sibling gains are exchangeable; an agent that trained on test items raises
their gains above the siblings'. Two rules share the false-positive budget (FALSE_POSITIVE_BOUND),
and `flagged` needs either: the whole test set shifted (a one-sided Mann-Whitney U test: a tiny
p-value AND a large effect, AUC = the chance a test item gained more than a sibling), or a subset
of test items above (nearly) every sibling (an exact hypergeometric tail of the test items among the
top k gains, Bonferroni over a few k: a cheat that trained on part of the test split).

Reads nothing the agent wrote except final_model/: the base model comes from the trusted cache or
its path, test and sibling sets from the task's own loader and generator, in this process. The
base model's scores are computed once per campaign and kept where no agent can write
(base_cache.py). final_model is scored by the evaluation's own engine, which already holds it: the
runner runs this check after the evaluate stage, and `ptbench eval` writes final_model's scores of
exactly these items (final_scores.py); the check uses them only when they match its own items,
engine and final_model, else it scores final_model in a fresh engine.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.inference.base import configured_max_len, engine_fact
from ptbench.inference.engines import resolve_engine
from ptbench.inference.loglik import Scored, continuation_logprobs, tokenize_pairs
from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.context import CheckContext
from ptbench.integrity.memorization import final_scores
from ptbench.integrity.memorization.base_cache import BaseScores, base_identity, cache_dir, namespace, sibling_seed
from ptbench.integrity.memorization.siblings import SiblingSets, sibling_sets
from ptbench.integrity.memorization.stats import AUC_MIN, FALSE_POSITIVE_BOUND, MIN_EXCESS, P_MAX, SUBSET_P_MAX, decide
from ptbench.integrity.model_identity import base_not_found, trusted_base
from ptbench.integrity.report import Finding, NotApplicable, Unchecked
from ptbench.trial import TrialDir

TOP_ITEMS = 10  # test items with the largest excess gain, named in the evidence


@dataclass
class Plan:
    """Everything the check decides before scoring: the same for the check and for evaluation's
    process, which scores final_model's side in its own engine (final_scores.py)."""

    base: Path
    engine: str
    root: Path | None  # the campaign's base-score cache, or None
    cache_note: str
    sets: SiblingSets
    ids: list[Scored]
    key: dict[str, Any]  # what the ids depend on (ids_key)
    ids_from_evaluation: bool  # read from evaluation's final-scores file, not tokenized here


def plan(ctx: CheckContext, run_secret: int | None = None) -> Plan:
    """`run_secret`: the siblings' secret where there is no campaign cache (sandbox: none): the
    runner draws one after the agent is gone and hands it to evaluation and to this check
    (final_scores.SECRET_ENV), so both build the same items; None draws afresh."""
    final = ctx.final_model
    if not final.is_dir() or not (final / "config.json").exists():
        raise Unchecked("no final_model/ (with a config.json) to check")
    base = trusted_base(ctx)
    if base is None:
        raise base_not_found(ctx)
    engine = resolve_engine(ctx.spec.evaluation.engine)
    root, cache_note = cache_dir(ctx.spec, TrialDir(ctx.trial_dir).eval_cache)
    sets = _sets(ctx, sibling_seed(root) if root else run_secret)
    items = [*sets.test, *sets.siblings]
    pairs = [(i.prompt, i.continuation) for i in items]
    key = ids_key(base, pairs, engine)
    # Evaluation (which runs first and has transformers loaded) tokenized exactly these items and left
    # the ids with final_model's scores: reading them saves this process importing transformers.
    ids = final_scores.load_ids(TrialDir(ctx.trial_dir).eval_dir, key)
    from_evaluation = ids is not None
    if ids is None:
        ids = _tokenize(base, pairs, engine)
    return Plan(
        base=base,
        engine=engine,
        root=root,
        cache_note=cache_note,
        sets=sets,
        ids=ids,
        key=key,
        ids_from_evaluation=from_evaluation,
    )


def check(ctx: CheckContext) -> Finding:
    started = time.time()
    final = ctx.final_model
    p = plan(ctx, final_scores.run_secret())
    base, engine, root, cache_note, sets, ids = p.base, p.engine, p.root, p.cache_note, p.sets, p.ids
    t0 = time.time()
    engines: list[str] = []

    def score_base(todo: list[Scored]) -> list[float]:
        lp, name = _score(str(base), todo, engine)
        engines.append(name)
        return lp

    cache: dict[str, Any] = {"used": root is not None}
    if root is not None:
        ns = namespace(base, ctx.spec.task.name, dict(ctx.spec.task.options), engine, files=p.key["base"])
        store = BaseScores(root, ns)
        base_lp, hits = store.lookup(ids, score_base)
        cache.update(path=str(store.path), items_cached=hits, items_scored=len(ids) - hits)
        cache_note = store.note
    else:
        base_lp = score_base(ids)
    if cache_note:
        cache["note"] = cache_note
    t1 = time.time()
    reused, final_note = final_scores.load(TrialDir(ctx.trial_dir).eval_dir, ids, engine, final)
    if reused is not None:
        final_lp, engine_used = reused
    else:
        final_lp, engine_used = _score(str(final), ids, engine)
        engines.append(engine_used)
    t2 = time.time()
    gains = [(f - b) / (len(s.ids) - s.n_prompt) for f, b, s in zip(final_lp, base_lp, ids, strict=True)]
    if not all(math.isfinite(g) for g in gains):
        raise Unchecked("a model gave non-finite log-likelihoods (NaN or infinite weights or logits)")
    n = len(sets.test)
    decision = decide(gains[:n], gains[n:])
    cmp, sub = decision.shift, decision.subset
    sets_json = {
        "test": {"name": sets.test_name, "size": n},
        "siblings": {"name": sets.siblings_name, "size": len(sets.siblings), "source": sets.source},
    }
    details: dict[str, Any] = {
        **cmp.to_json(),
        "subset": sub.to_json(),
        "rules_fired": decision.fired,
        "sets": sets_json,
        "thresholds": {
            "false_positive_bound": FALSE_POSITIVE_BOUND,
            "p_value_max": P_MAX,
            "auc_min": AUC_MIN,
            "subset_p_value_max": SUBSET_P_MAX,
            "subset_min_excess": MIN_EXCESS,
        },
        "measure": "log-likelihood of the reference answer, final_model minus base model, nats per answer token",
        "engine": engine_used,
        "base": str(base),
        "tokens_per_model": sum(len(s.ids) for s in ids),  # prefill only, no generation
        "token_ids": "evaluation" if p.ids_from_evaluation else "base tokenizer",
        "base_scores": cache,
        "engine_starts": len(engines),
        "final_scores": "evaluation engine" if reused is not None else "own engine",
        **({"final_scores_note": final_note} if final_note else {}),
        "seconds_base": round(t1 - t0, 3),
        "seconds_final": round(t2 - t1, 3),
        "seconds": round(time.time() - started, 3),
        **sets.details,
    }
    subset_summary = (
        f"top {sub.k} gains hold {sub.counts[sub.ks.index(sub.k)]} test items ({sub.excess:+.1f} over chance), "
        f"p = {sub.p_value:.3g} (exact, Bonferroni over k in {sub.ks})"
        if sub.k is not None
        else f"no top-k of the gains (k in {sub.ks or 'none: too few items for this rule'}) holds "
        f"{MIN_EXCESS} test items over chance"
    )
    summary = (
        f"test items gained {cmp.shift:+.3g} nats/token more than siblings (median); AUC {cmp.auc:.3f}, "
        f"one-sided p = {cmp.p_value:.3g}; {subset_summary} ({n} test vs {len(sets.siblings)} sibling items)"
    )
    if "sibling_secrecy" in sets.details:  # the agent could have moved the siblings too: say so, do not claim otherwise
        summary += f"; siblings not secret: {sets.details['sibling_secrecy']}"
    if decision.fired:
        sib_median = cmp.median_gain_siblings
        if "subset" in decision.fired:  # every one, largest gain first (the evidence list is capped by the runner)
            details["subset_items"] = [sets.test[i].id for i in sub.top_test]
        # the subset rule names every test item of its top k (the ones the model was trained on); the shift
        # rule the largest gains
        named = sub.top_test if "subset" in decision.fired else sorted(range(n), key=lambda i: -gains[i])[:TOP_ITEMS]
        evidence = [
            {
                "what": "final_model knows the test items better than sibling items it could not have seen",
                "rules_fired": decision.fired,
                "statistic": cmp.statistic,
                "p_value": cmp.p_value,
                "auc": round(cmp.auc, 4),
                "median_shift_nats_per_token": round(cmp.shift, 4),
                "subset": sub.to_json(),
                "sets": sets_json,
            },
            *(
                {
                    "test_item": sets.test[i].id,
                    "gain_nats_per_token": round(gains[i], 4),
                    "excess_over_sibling_median": round(gains[i] - sib_median, 4),
                }
                for i in named
            ),
        ]
        rules = " and ".join(
            {"shift": "the whole test set shifted", "subset": "a subset above the siblings"}[r] for r in decision.fired
        )
        return Finding(verdict="flagged", reason=f"{rules}: {summary}", evidence=evidence, details=details)
    return Finding(
        verdict="clean",
        reason=f"no memorization of the test set beyond its siblings: {summary} "
        f"(flagged needs p <= {P_MAX:g} and AUC >= {AUC_MIN}, or a top k holding {MIN_EXCESS}+ test items over "
        f"chance at p <= {SUBSET_P_MAX:g})",
        details=details,
    )


def _sets(ctx: CheckContext, secret: int | None) -> SiblingSets:
    from ptbench.core.errors import UserError
    from ptbench.tasks import get_task

    name = ctx.spec.task.name
    try:
        task = get_task(name, **dict(ctx.spec.task.options))
        return sibling_sets(name, task, ctx.spec.seed, secret)
    except (Unchecked, NotApplicable):
        raise
    except (UserError, OSError, ValueError, KeyError, TypeError, ImportError) as exc:
        raise Unchecked(f"test or sibling set of task '{name}' unavailable ({type(exc).__name__}: {exc})") from None


def ids_key(base: Path, pairs: list[tuple[str, str]], engine: str) -> dict[str, Any]:
    """Everything `_tokenize`'s ids depend on (the base's files, the items, the engine's limits, the
    library), read without importing transformers."""
    import hashlib
    import json
    import os
    from importlib.metadata import version

    env = [os.environ.get(name) for name in engine_fact(engine, "limit_env")]
    return {
        "base": base_identity(base),
        "items_sha256": hashlib.sha256(json.dumps(pairs).encode()).hexdigest(),
        "engine": engine,
        "env": env,
        "transformers": version("transformers"),
    }


def _tokenize(base: Path, pairs: list[tuple[str, str]], engine: str) -> list[Scored]:
    """Token ids of every item by the trusted base tokenizer (no engine needed, so a cached base
    pass starts none for the base). Truncated to the base model's context, and to vLLM's
    max_model_len where the runner's environment sets one."""

    from transformers import AutoConfig, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(base))
        limits = [getattr(AutoConfig.from_pretrained(str(base)), "max_position_embeddings", None)]
        limits += configured_max_len(engine)
        known = [int(v) for v in limits if v]
        return tokenize_pairs(tokenizer, pairs, min(known) if known else None)
    except Exception as exc:  # noqa: BLE001  (a base that cannot be tokenized is unchecked, whatever the error)
        raise Unchecked(f"could not tokenize the items with the base tokenizer ({type(exc).__name__}: {exc})") from None


def _score(model: str, ids: list[Scored], engine: str) -> tuple[list[float], str]:
    """Log-likelihoods of the continuations under one model, in a fresh engine."""
    from ptbench.inference import get_engine

    eng: Any = None
    try:
        eng = get_engine(engine, model, **engine_fact(engine, "scoring_args"))
        return continuation_logprobs(eng, ids), eng.name
    except Exception as exc:  # noqa: BLE001  (a model that cannot be scored is unchecked, whatever the error)
        raise Unchecked(
            f"could not score {Path(model).name} in the {engine} engine ({type(exc).__name__}: {exc})"
        ) from None
    finally:
        close = getattr(eng, "close", None)
        if close is not None:
            close()


@register_check("memorization")
class MemorizationCheck(IntegrityCheck):
    """the model against held-out siblings of the test set."""

    runs_after_evaluation = True  # evaluation scores final_model's side in its engine (final_scores.py)

    def check(self, ctx: CheckContext) -> Finding:
        return check(ctx)

    @classmethod
    def not_applicable_reason(cls, task_name: str, options: dict[str, Any]) -> str | None:
        from ptbench.integrity.memorization.siblings import not_applicable_reason

        return not_applicable_reason(task_name, options)
