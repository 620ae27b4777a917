"""Merge shard trace files into one dataset (one record per episode, in dataset order) plus a summary."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ptbench.bootcamp.data.datagen import load_rows
from ptbench.bootcamp.rollout.runner import read_settings
from ptbench.bootcamp.rollout.traces import EpisodeTrace, current_trace, is_final
from ptbench.core import fastjson
from ptbench.core.files import atomic_write_bytes, atomic_write_json, read_jsonl


def _better(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Which of two records of one episode to keep: a success beats a failure, then the later attempt."""

    def rank(r: dict[str, Any]) -> tuple[bool, bool, int]:
        return r.get("status") == "ok", is_final(r), r.get("attempt", 0)

    return rank(new) > rank(old)


def collect(out: Path) -> tuple[dict[str, dict[str, Any]], int]:
    """sample_id -> kept record, and how many records were superseded (earlier failed attempts)."""
    kept: dict[str, dict[str, Any]] = {}
    total = 0
    for path in sorted((out / "shards").glob("shard-*.jsonl")):
        for rec in read_jsonl(path):
            sid = rec.get("sample_id")
            if sid is None:
                continue
            total += 1
            if sid not in kept or _better(rec, kept[sid]):
                kept[sid] = rec
    return kept, total - len(kept)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(r["data_source"], []).append(r)
    return {src: _stats(rs) for src, rs in sorted(groups.items())}


def summarize_levels(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """data source -> generator level -> stats: accuracy by difficulty, for curriculum studies."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in records:
        groups.setdefault(r["data_source"], {}).setdefault(str(r.get("level")), []).append(r)
    return {src: {lv: _stats(rs) for lv, rs in sorted(levels.items())} for src, levels in sorted(groups.items())}


def _stats(rs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rs if r["status"] == "ok"]
    scores = [float(r["score"]) for r in ok if r.get("score") is not None]
    errors: dict[str, int] = {}
    for r in rs:
        if r["status"] != "ok":
            kind = (r.get("error") or {}).get("kind", "unknown")
            errors[kind] = errors.get(kind, 0) + 1
    n = len(rs)

    def mean(xs: list[float]) -> float | None:
        return round(sum(xs) / len(xs), 4) if xs else None

    return {
        "n": n,
        "ok": len(ok),
        "errors": errors,
        "success_rate": round(sum(1 for r in ok if r.get("correct")) / n, 4) if n else None,
        "score_mean": mean(scores),
        "score_min": min(scores) if scores else None,
        "score_max": max(scores) if scores else None,
        "turns_mean": mean([r.get("turns", 0) for r in rs]),
        "tool_calls": sum(r.get("n_tool_calls", 0) for r in rs),
        "tool_calls_mean": mean([r.get("n_tool_calls", 0) for r in rs]),
        "prompt_tokens": sum((r.get("usage") or {}).get("prompt_tokens", 0) for r in rs),
        "completion_tokens": sum((r.get("usage") or {}).get("completion_tokens", 0) for r in rs),
        "retries": sum(sum((r.get("retries") or {}).values()) for r in rs),
        "stop_reasons": _count(r.get("stop_reason", "?") for r in rs),
    }


def _count(xs: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in xs:
        out[x] = out.get(x, 0) + 1
    return dict(sorted(out.items()))


def merge(out_dir: str | Path) -> dict[str, Any]:
    """Write `merged/traces.jsonl` and `merged/summary.json`; returns the summary."""
    out = Path(out_dir)
    settings = read_settings(out)
    rows = load_rows(settings.data_dir, settings.split)
    if settings.limit is not None:
        rows = rows[: settings.limit]
    kept, superseded = collect(out)
    ordered, missing = [], []
    for row in rows:
        sid = row["extra_info"]["sample_id"]
        rec = kept.get(sid)
        if rec is None:
            missing.append(sid)
        else:
            rec = current_trace(rec, where=f"{out}/shards: sample {sid}")
            EpisodeTrace.model_validate(rec)  # a malformed record fails here, not in someone's training run
            ordered.append(rec)
    (out / "merged").mkdir(parents=True, exist_ok=True)
    data = b"".join(fastjson.dumps_line(r) for r in ordered)
    atomic_write_bytes(out / "merged" / "traces.jsonl", data)
    summary = {
        "episodes": len(ordered),
        "expected": len(rows),
        "missing": len(missing),
        "missing_sample_ids": missing[:50],
        "superseded_records": superseded,
        "model": settings.model,
        "config_hash": settings.config_hash,
        "split": settings.split,
        "traces_sha256": hashlib.sha256(data).hexdigest(),
        "by_data_source": summarize(ordered),
        "by_level": summarize_levels(ordered),
    }
    atomic_write_json(out / "merged" / "summary.json", summary)
    return summary


def summary_table(summary: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(
        title=f"bootcamp rollout: {summary['episodes']}/{summary['expected']} episodes, model {summary['model']}"
    )
    for col in (
        "data source",
        "n",
        "ok",
        "success",
        "score mean [min, max]",
        "turns",
        "tool calls",
        "tokens in/out",
        "retries",
        "errors",
    ):
        table.add_column(col, justify="left" if col in ("data source", "errors") else "right")
    rows = [(src, s) for src, s in summary["by_data_source"].items()]
    for src, levels in (summary.get("by_level") or {}).items():
        if len(levels) > 1:  # one level is the data source's own row again
            rows += [(f"  {src} / {lv}", s) for lv, s in levels.items()]
    rows.sort(key=lambda x: x[0].strip())
    for src, s in rows:
        score = (
            "-" if s["score_mean"] is None else f"{s['score_mean']:.3f} [{s['score_min']:.2f}, {s['score_max']:.2f}]"
        )
        errs = ", ".join(f"{k}: {v}" for k, v in s["errors"].items()) or "-"
        table.add_row(
            src,
            str(s["n"]),
            str(s["ok"]),
            f"{s['success_rate']:.3f}" if s["success_rate"] is not None else "-",
            score,
            f"{s['turns_mean']:.2f}",
            str(s["tool_calls"]),
            f"{s['prompt_tokens']}/{s['completion_tokens']}",
            str(s["retries"]),
            errs,
        )
    return table
