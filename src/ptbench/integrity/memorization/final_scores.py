"""final_model's side of the memorization check, scored in the evaluation's engine.

Evaluation already holds final_model in an engine (on a GPU a vLLM start is most of the check's
cost), so `ptbench eval`, given the trial's check context (the runner passes it when
`memorization` is among the trial's checks), builds exactly the check's items and token ids
(check.plan: the same sibling sets, secret and base tokenizer) after generating, scores them with
its engine (inference.loglik, as the check does) and writes `eval/memorization_final.json`
atomically: the scores, the items' token ids (and the sha256 of what they were made from, so the
check reads them instead of loading the base tokenizer itself), the engine, and the identity of
final_model's files. The runner runs the memorization check after the evaluate stage; the check
uses the file only when it is a regular file, well-formed, and names the check's own items hash,
engine and final_model's current identity (else it says why in `final_scores_note` and scores
final_model itself). The file is harness-only (written after the agent's processes are gone; the
runner deletes any earlier one before evaluation); its items hash depends on the campaign's
sibling secret, which no agent can read (under sandbox: none, on a secret the runner draws for this
run after the agent is gone: SECRET_ENV).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from pathlib import Path
from typing import Any

from ptbench.core.files import atomic_write_json
from ptbench.inference.loglik import Scored, continuation_logprobs
from ptbench.integrity.memorization.base_cache import base_identity
from ptbench.integrity.memorization.base_cache import digest as digest_of

FILE = "memorization_final.json"
FORMAT = 1
# Where there is no campaign cache (sandbox: none), the siblings' secret of this run: drawn by the
# runner after the agent's processes are gone, given to evaluation (in its check context) and to the
# deferred check (in this variable), so both draw the same siblings.
SECRET_ENV = "PTBENCH_MEMORIZATION_SECRET"


def run_secret() -> int | None:
    value = os.environ.get(SECRET_ENV, "")
    return int(value) if value.isdigit() else None


def new_secret() -> int:
    return int.from_bytes(os.urandom(8), "little")


def items_hash(ids: list[Scored]) -> str:
    return hashlib.sha256(json.dumps([[s.n_prompt, s.ids] for s in ids]).encode()).hexdigest()


def model_identity(model: Path) -> str:
    """sha256 over final_model's files (base_cache.base_identity: whole small files, size, mtime,
    head and tail of large ones)."""
    return digest_of(base_identity(model))


def _digest(payload: dict[str, Any]) -> str:
    return digest_of({k: v for k, v in payload.items() if k != "digest"})


def score_in_evaluation(context: dict[str, Any], engine: Any, out_dir: Path) -> str:
    """Score the check's items with evaluation's `engine` and write out_dir/FILE. Never raises:
    returns what happened in one line (the check scores final_model itself when no file is written)."""
    from ptbench.integrity.context import CheckContext
    from ptbench.integrity.memorization.check import plan
    from ptbench.integrity.report import NotApplicable, Unchecked
    from ptbench.trial import TrialDir

    target = out_dir / FILE
    try:
        target.unlink(missing_ok=True)
        trial = TrialDir(context["trial_dir"])
        ctx = CheckContext(
            trial_dir=trial.path,
            spec=trial.spec,
            cache_dirs=[Path(p) for p in context["cache_dirs"]],
            since=context.get("since"),
            layer_dirs=[Path(p) for p in context.get("layer_dirs", [])],
        )
        started = time.time()
        secret = context.get("memorization_secret")
        p = plan(ctx, secret if isinstance(secret, int) else None)
        if getattr(engine, "name", None) != p.engine:
            return f"memorization: not scored here (evaluation's engine {engine.name}, the check's {p.engine})"
        scores = continuation_logprobs(engine, p.ids)
        payload: dict[str, Any] = {
            "format": FORMAT,
            "ids_key_sha256": digest_of(p.key),
            "ids": [[s.n_prompt, s.ids] for s in p.ids],
            "items_sha256": items_hash(p.ids),
            "n_items": len(p.ids),
            "engine": engine.name,
            "engine_settings": getattr(engine, "settings", {}),
            "model": {"path": str(ctx.final_model.resolve()), "identity_sha256": model_identity(ctx.final_model)},
            "scores": scores,
            "seconds": round(time.time() - started, 3),
        }
        payload["digest"] = _digest(payload)
        atomic_write_json(target, payload)
        return f"memorization: final_model's scores of {len(scores)} items written to {target}"
    except (Unchecked, NotApplicable) as exc:
        return f"memorization: not scored here ({exc})"
    except Exception as exc:  # noqa: BLE001  (the check scores final_model itself; evaluation's result stands)
        target.unlink(missing_ok=True)
        return f"memorization: not scored here ({type(exc).__name__}: {exc})"


def load_ids(eval_dir: Path, key: dict[str, Any]) -> list[Scored] | None:
    """The token ids evaluation scored, when eval_dir/FILE is a regular, well-formed file of this
    format, its digest right, made for exactly `key` (check.ids_key: the base's files, the items,
    the engine); else None (the check tokenizes them itself). Trusted as the scores beside them are:
    by where and when the file was written."""
    path = eval_dir / FILE
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        items = data["ids"]
        if data.get("format") != FORMAT or data.get("digest") != _digest(data):
            return None
        if data.get("ids_key_sha256") != digest_of(key):
            return None
        ids = [Scored(ids=list(t), n_prompt=n) for n, t in items]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    ok = all(isinstance(s.n_prompt, int) and all(type(t) is int for t in s.ids) for s in ids)
    return ids if ok and ids else None


def load(eval_dir: Path, ids: list[Scored], engine: str, final: Path) -> tuple[tuple[list[float], str] | None, str]:
    """((scores, engine name), "") when eval_dir/FILE can be trusted for exactly these items, engine
    and final_model; else (None, why not) ("" when there is no file)."""
    path = eval_dir / FILE
    if not path.exists() and not path.is_symlink():
        return None, ""
    why = _untrusted(path, ids, engine, final)
    if why is not None:
        return None, f"{path} not used: {why}; final_model scored in the check's own engine"
    data = json.loads(path.read_text())
    return (data["scores"], data["engine"]), ""


def _untrusted(path: Path, ids: list[Scored], engine: str, final: Path) -> str | None:
    if path.is_symlink() or not path.is_file():
        return "not a regular file"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"unreadable ({type(exc).__name__})"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return "not a final-scores file of this format"
    if data.get("digest") != _digest(data):
        return "its digest does not match its content"
    if data.get("items_sha256") != items_hash(ids):
        return "scored other items than the check's"
    if data.get("engine") != engine:
        return f"scored in engine {data.get('engine')!r}, the check uses {engine!r}"
    model = data.get("model")
    if not isinstance(model, dict):
        return "no model identity"
    if model.get("path") != str(final.resolve()) or model.get("identity_sha256") != model_identity(final):
        return "final_model changed since evaluation scored it (or another model was scored)"
    scores = data.get("scores")
    if (
        not isinstance(scores, list)
        or len(scores) != len(ids)
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in scores)
    ):
        return "scores missing, of the wrong length or not finite"
    return None
