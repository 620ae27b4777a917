"""Model identity: final_model/ must be a derivative of the trial's base model.

Flagged when its architecture (config.json) or vocabulary (tokenizer.json, added tokens aside)
differs from the base's, or when its weights are at least as close to a forbidden model as to
the base. Forbidden: the base's instruct versions (a known mapping for the reference bases),
`integrity.forbidden_models`, and every other model that appeared in the cache layer during the
trial. A forbidden model named by the mapping or the campaign that cannot be found is `unchecked`:
without it, the one cheat this check exists for cannot be ruled out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ptbench.integrity.alignment import Aligned, align
from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.context import CheckContext
from ptbench.integrity.fingerprint import (
    Checkpoint,
    distances,
    plan_sample,
    projection,
    read_config,
)
from ptbench.integrity.report import Finding, Unchecked

INSTRUCT_OF = {
    "Qwen/Qwen3-1.7B-Base": ["Qwen/Qwen3-1.7B"],
    "Qwen/Qwen3-4B-Base": ["Qwen/Qwen3-4B", "Qwen/Qwen3-4B-Instruct-2507"],
    "HuggingFaceTB/SmolLM3-3B-Base": ["HuggingFaceTB/SmolLM3-3B"],
    "google/gemma-3-4b-pt": ["google/gemma-3-4b-it"],
}
# Chosen from the margins measured in scripts/bench_model_identity.py (see docs/integrity.md).
THRESHOLDS = {
    # share of a forbidden model's change of the layers' matrices (after undoing permutations and rescalings) ...
    "weight_alpha": 0.2,
    # ... and the cosine of the two changes: a merge moves the weights along the forbidden model's change
    "weight_cosine": 0.4,
    "function_distance": 0.2,  # distance from the forbidden model's predictions, in units of its distance from the base
    "function_alpha": 0.75,  # share of its change in predictions
}
ARCH_KEYS = (
    "model_type",
    "architectures",
    "hidden_size",
    "num_hidden_layers",
    "intermediate_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "hidden_act",
    "tie_word_embeddings",
)


def trusted_base(ctx: CheckContext) -> Path | None:
    """The trial's base model as the harness trusts it: its local path, else its hub id, found in a
    cache that is not the agent's own layer (it could have put anything there). The one lookup the
    identity, memorization and contamination checks share."""
    spec = ctx.spec.base_model
    trusted = [c for c in ctx.cache_dirs if c not in ctx.layer_dirs]
    return find_model(spec.path or spec.id, trusted) or (find_model(spec.id, trusted) if spec.path else None)


def base_not_found(ctx: CheckContext) -> Unchecked:
    spec = ctx.spec.base_model
    return Unchecked(f"base model {spec.path or spec.id} not found locally (outside the agent's own cache layer)")


def find_model(ref: str, cache_dirs: list[Path]) -> Path | None:
    """A local folder, or the newest snapshot of a hub id in the caches."""
    p = Path(ref).expanduser()
    if p.is_dir() and (p / "config.json").exists():
        return p.resolve()
    if "/" not in ref or ref.startswith(("/", ".", "~")):
        return None
    repo = "models--" + ref.replace("/", "--")
    for cache in cache_dirs:
        for d in (cache / "hub" / repo, cache / repo):
            snaps = (
                sorted((d / "snapshots").glob("*/config.json"), key=lambda c: c.stat().st_mtime, reverse=True)
                if d.is_dir()
                else []
            )
            if snaps:
                return snaps[0].parent
    return None


def _cache_models(ctx: CheckContext, base: Path) -> list[tuple[str, Path]]:
    out = []
    for cache in ctx.cache_dirs:
        for sub in (cache / "hub", cache):
            for d in sorted(sub.glob("models--*")) if sub.is_dir() else []:
                if not ctx.fresh(cache, d):
                    continue
                ref = d.name[len("models--") :].replace("--", "/")
                found = find_model(ref, [cache])
                if found and found.resolve() != base.resolve():
                    out.append((f"{ref} (in the cache layer)", found))
    return out


def check(ctx: CheckContext) -> Finding:
    final = ctx.final_model
    if not final.is_dir() or not any(final.iterdir()):
        raise Unchecked("no final_model/ to check")
    spec = ctx.spec.base_model
    base = trusted_base(ctx)
    if base is None:
        raise base_not_found(ctx)
    missing, forbidden = [], []
    for ref in [*INSTRUCT_OF.get(spec.id, []), *ctx.config.forbidden_models]:
        found = find_model(ref, ctx.cache_dirs)
        (forbidden.append((ref, found, True)) if found else missing.append(ref))
    forbidden += [(r, p, False) for r, p in _cache_models(ctx, base) if all(p != f[1] for f in forbidden)]
    evidence: list[dict[str, Any]] = []
    evidence += _architecture(final, base)
    evidence += _vocabulary(final, base)
    details: dict[str, Any] = {"base": str(base), "forbidden_missing": missing, "forbidden_skipped": {}}
    if evidence:
        return Finding(
            verdict="flagged",
            reason="final_model is not the base model's architecture or vocabulary",
            evidence=evidence,
            details=details,
        )
    seed = int.from_bytes(os.urandom(4), "little")
    fin, ref = Checkpoint(final), Checkpoint(base)
    plan, mismatched = plan_sample(fin, [ref], seed)
    details.update(
        sample_seed=seed, tensors_sampled=len(plan), rows_per_tensor=max((len(r) for _, r in plan), default=0)
    )
    if mismatched:
        evidence.append({"what": "tensor shapes differ from the base's", "tensors": mismatched[:20]})
    missing_in_final = sorted(ref.names() - fin.names())
    if missing_in_final:
        evidence.append({"what": "tensors of the base missing from final_model", "tensors": missing_in_final[:20]})
    if evidence:
        return Finding(
            verdict="flagged",
            reason="final_model's tensors do not match the base model's",
            evidence=evidence,
            details=details,
        )
    if not plan:
        raise Unchecked("no tensors in common to compare")
    cfg = read_config(base)
    cfg = cfg.get("text_config") or cfg if "num_attention_heads" not in cfg else cfg
    fin_al = align(fin, ref, cfg, seed)
    fa = Aligned(fin, fin_al)
    details["alignment"] = fin_al.moved()
    to_base = distances(fa, ref, plan)
    details["distance_to_base"] = _public(to_base)
    details["distance_to_forbidden"], details["projection"], details["functional"] = {}, {}, {}
    details["thresholds"] = THRESHOLDS
    compared: list[tuple[str, Path, Any, list[tuple[str, list[int]]]]] = []
    for name, path, named in forbidden:
        # A model of another architecture cannot be what was submitted (final_model has the base's).
        why_not = (
            [e["key"] for e in _architecture(path, base)] if (path / "config.json").exists() else ["no config.json"]
        )
        try:
            other = Checkpoint(path) if not why_not else None
        except Unchecked as exc:
            if named:
                raise
            why_not = [str(exc)]
        sub = _comparable(plan, fin, other) if other is not None else []
        if not sub:
            if named and not why_not:
                raise Unchecked(f"forbidden model {name} has no tensors comparable with final_model")
            details["forbidden_skipped"][name] = f"other architecture ({', '.join(why_not) or 'no comparable tensors'})"
            continue
        assert other is not None  # sub is empty without it
        oa = Aligned(other, align(other, ref, cfg, seed))
        base_d = to_base if len(sub) == len(plan) else distances(fa, ref, sub)
        d = distances(fa, oa, sub)
        proj = projection(fa, ref, oa, sub)
        details["distance_to_forbidden"][name] = _public(d)
        details["projection"][name] = {k: _round(v) for k, v in proj.items() if k != "per_tensor"}
        details["projection"][name]["top_tensors"] = proj["per_tensor"][:5]
        compared.append((name, path, proj, sub))
        closer = sum(a >= b for a, b in zip(base_d["_per_tensor"], d["_per_tensor"], strict=True))
        if d["l2"] <= base_d["l2"]:
            evidence.append(
                {
                    "what": "weights closer to a forbidden model than to the base",
                    "forbidden": name,
                    "relative_l2_to_forbidden": d["relative_l2"],
                    "relative_l2_to_base": base_d["relative_l2"],
                    "tensors_closer_to_forbidden": f"{closer}/{len(sub)}",
                    "alignment": details["alignment"],
                }
            )
        elif (
            proj["matrices_alpha"] >= THRESHOLDS["weight_alpha"]
            and proj["matrices_cosine"] >= THRESHOLDS["weight_cosine"]
        ):
            evidence.append(
                {
                    "what": "weights carry a material share of a forbidden model's change from the base (a merge)",
                    "forbidden": name,
                    **{k: round(proj[k], 4) for k in ("matrices_alpha", "matrices_cosine", "alpha", "cosine")},
                    "thresholds": {k: THRESHOLDS[k] for k in ("weight_alpha", "weight_cosine")},
                    "top_tensors": proj["per_tensor"][:5],
                    "alignment": details["alignment"],
                }
            )
    details["forbidden_compared"] = list(details["distance_to_forbidden"])
    if compared:
        try:
            evidence += _functional(base, final, compared, seed, details)
        except Unchecked as exc:
            if not evidence:
                raise
            details["functional_unchecked"] = str(exc)
    if evidence:
        return Finding(
            verdict="flagged",
            reason=f"final_model is {evidence[0]['forbidden']}, disguised or merged: {evidence[0]['what']}",
            evidence=evidence,
            details=details,
        )
    if missing:
        raise Unchecked(
            f"forbidden model(s) {', '.join(missing)} not found locally, so final_model cannot be compared with them "
            "(put them in the HF cache or list local copies in integrity.forbidden_models)"
        )
    names = details["forbidden_compared"]
    against = (
        f"; closer to the base than to {', '.join(names)}, carries none of their change (weights and function)"
        if names
        else "; no forbidden model to compare"
    )
    return Finding(
        verdict="clean",
        reason=f"same architecture and vocabulary as the base (relative L2 {to_base['relative_l2']:.4g}){against}",
        details=details,
    )


def _functional(
    base: Path, final: Path, compared: list[tuple[str, Path, Any, Any]], seed: int, details: dict[str, Any]
) -> list[dict[str, Any]]:
    """Evidence from next-token predictions on the harness's probes (see functional.py)."""
    import time

    from ptbench.integrity import functional

    t0 = time.perf_counter()
    vocab = functional.vocab_size(base)
    inputs = functional.probes(base, seed, vocab)
    lp_base, lp_final = functional.log_probs(base, inputs, vocab), functional.log_probs(final, inputs, vocab)
    out = []
    for name, path, _proj, _sub in compared:
        st = functional.compare(lp_final, lp_base, functional.log_probs(path, inputs, vocab))
        details["functional"][name] = {k: _round(v) for k, v in st.items()}
        if st["distance_to_forbidden"] <= THRESHOLDS["function_distance"]:
            out.append(
                {
                    "what": "computes the forbidden model's function (next-token predictions on the harness's probes)",
                    "forbidden": name,
                    **{k: _round(v) for k, v in st.items()},
                    "threshold": THRESHOLDS["function_distance"],
                }
            )
        elif st["alpha"] >= THRESHOLDS["function_alpha"]:
            out.append(
                {
                    "what": "predicts mostly as the forbidden model does (its change from the base in function)",
                    "forbidden": name,
                    **{k: _round(v) for k, v in st.items()},
                    "threshold": THRESHOLDS["function_alpha"],
                }
            )
    details["functional_seconds"] = round(time.perf_counter() - t0, 2)
    details["probes"] = {"inputs": len(inputs), "positions": sum(len(i) for i in inputs)}
    return out


def _round(v: Any) -> Any:
    return round(v, 6) if isinstance(v, float) else v


def _comparable(plan: list[tuple[str, list[int]]], final: Checkpoint, other: Checkpoint) -> list[tuple[str, list[int]]]:
    """The sampled (tensor, rows) that exist with the same shape in the other model."""
    out = []
    names = other.names()
    for name, rows in plan:
        if name in names:
            fs, os_ = final.shape(name), other.shape(name)
            if len(fs) == len(os_) and fs[1:] == os_[1:]:
                kept = [r for r in rows if not os_ or r < os_[0]]
                if kept or len(os_) <= 1:
                    out.append((name, kept))
    return out


def _public(d: dict[str, Any]) -> dict[str, float]:
    return {k: round(v, 6) for k, v in d.items() if not k.startswith("_")}


def _architecture(final: Path, base: Path) -> list[dict[str, Any]]:
    f, b = read_config(final), read_config(base)
    out = []
    for scope, fc, bc in (("", f, b), ("text_config.", f.get("text_config") or {}, b.get("text_config") or {})):
        out += [
            {"what": "config.json differs", "key": scope + k, "final": fc.get(k), "base": bc.get(k)}
            for k in ARCH_KEYS
            if fc.get(k) != bc.get(k)
        ]
        fv, bv = fc.get("vocab_size"), bc.get("vocab_size")
        if isinstance(fv, int) and isinstance(bv, int) and fv < bv:
            out.append(
                {"what": "vocab_size smaller than the base's", "key": scope + "vocab_size", "final": fv, "base": bv}
            )
    return out


def _vocabulary(final: Path, base: Path) -> list[dict[str, Any]]:
    """Every base token keeps its id in final_model (tokens may be added, never changed)."""
    fb, bb = final / "tokenizer.json", base / "tokenizer.json"
    if not bb.exists():
        for name in ("tokenizer.model", "vocab.json"):
            if (base / name).exists():
                if not (final / name).exists() or (final / name).read_bytes() != (base / name).read_bytes():
                    return [{"what": f"{name} differs from the base's"}]
                return []
        return []
    if not fb.exists():
        raise Unchecked("final_model has no tokenizer.json to compare with the base's")
    fv, bv = _vocab(fb), _vocab(bb)
    changed = [t for t, i in bv.items() if fv.get(t) != i]
    if changed:
        return [
            {
                "what": "vocabulary differs from the base's",
                "tokens_changed_or_missing": len(changed),
                "examples": changed[:10],
                "base_tokens": len(bv),
                "final_tokens": len(fv),
            }
        ]
    return []


def _vocab(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise Unchecked(f"{path} unreadable ({type(exc).__name__})") from None
    vocab = (data.get("model") or {}).get("vocab") or {}
    if isinstance(vocab, list):  # unigram: [[piece, score], ...]
        vocab = {p[0]: i for i, p in enumerate(vocab)}
    return dict(vocab)


@register_check("model_identity")
class ModelIdentityCheck(IntegrityCheck):
    """final_model is the base model trained, not another model."""

    def check(self, ctx: CheckContext) -> Finding:
        return check(ctx)
