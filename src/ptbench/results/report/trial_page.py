"""What one trial's report page shows, read from its folder: status, budget use, the agent's
trajectory, evaluation samples, integrity evidence, links to the raw files.

Everything here is hostile input (the agent wrote its trajectory and its model wrote the samples):
it is only ever passed to autoescaping templates, and long texts are cut to a preview plus the rest
behind an expander, with a hard cap so one trial cannot blow up the site.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import escape

from ptbench.core.files import link_or_copy
from ptbench.results.coverage import verdict_text

PREVIEW_CHARS = 600  # shown inline
FULL_CHARS = 8_000  # behind the expander; the raw file has the rest
MAX_STEPS = 1_000
MAX_SAMPLES = 50
NOT_CHECKS = ("verdicts.json", "summary.json")  # the harness's files in checks/ beside the checks' reports
RAW_FILES = (
    "result.json",
    "trial.json",
    "state.json",
    "events.jsonl",
    "prompt.txt",
    "agent/native.log",
    "agent/trajectory.json",
    "agent/usage.json",
    "agent/calls.jsonl",
    "eval/metrics.json",
    "eval/samples.jsonl",
    "eval/eval.log",
    "checks/verdicts.json",
)


@dataclass
class Text:
    preview: str
    rest: str = ""  # the continuation, shown in <details>
    cut: int = 0  # characters not shown at all

    @property
    def size(self) -> int:
        return len(self.preview) + len(self.rest) + self.cut

    def __html__(self) -> str:
        """Rendered here rather than by a template macro (thousands per page); escaped by markupsafe,
        the escaping jinja's autoescape uses."""
        html = f"<pre>{escape(self.preview)}</pre>"
        if self.rest:
            cut = f" (the last {self.cut} are only in the raw file)" if self.cut else ""
            html += (
                f"<details><summary>{self.size} characters: show all{cut}</summary>"
                f"<pre>{escape(self.rest)}</pre></details>"
            )
        return html


def clip(value: Any) -> Text:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False, default=str)
    if len(text) <= PREVIEW_CHARS:
        return Text(text)
    return Text(text[:PREVIEW_CHARS], text[PREVIEW_CHARS:FULL_CHARS], max(0, len(text) - FULL_CHARS))


@dataclass
class TrialPage:
    trial_id: str
    campaign: str
    record: dict
    rule: str
    reason: str
    value: float | None
    steps: list[dict] = field(default_factory=list)
    steps_cut: int = 0
    trajectory_note: str = ""
    samples: list[dict] = field(default_factory=list)
    samples_total: int = 0
    checks: list[dict] = field(default_factory=list)
    raw_links: list[tuple[str, str]] = field(default_factory=list)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(errors="replace"))
    except (OSError, json.JSONDecodeError):
        return None


def _steps(trajectory: Any) -> tuple[list[dict], int, str]:
    if not isinstance(trajectory, dict) or not isinstance(trajectory.get("steps"), list):
        return [], 0, "no trajectory (agent/trajectory.json is missing or not readable)"
    steps = []
    for s in trajectory["steps"][:MAX_STEPS]:
        if not isinstance(s, dict):
            continue
        call = s.get("tool_call") if isinstance(s.get("tool_call"), dict) else None
        steps.append(
            {
                "index": s.get("index"),
                "run": s.get("run"),
                "kind": str(s.get("kind", "")),
                "text": clip(s["text"]) if s.get("text") else None,
                "tool": None
                if call is None
                else {
                    "name": str(call.get("name", "")),
                    "status": str(call.get("status", "")),
                    "exit_code": call.get("exit_code"),
                    "arguments": clip(call.get("arguments")),
                    "output": clip(call["output"]) if call.get("output") is not None else None,
                },
            }
        )
    return steps, max(0, len(trajectory["steps"]) - MAX_STEPS), ""


def _samples(path: Path) -> tuple[list[dict], int]:
    if not path.is_file():
        return [], 0
    rows: list[dict] = []
    total = 0
    with path.open(errors="replace") as f:
        for line in f:
            total += 1
            if len(rows) >= MAX_SAMPLES:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict):
                rows.append(
                    {
                        "id": str(row.get("id", "")),
                        "prompt": clip(row["prompt"]) if "prompt" in row else None,
                        "completion": clip(row.get("completion", "")),
                        "reference": clip(row.get("reference", "")),
                        "score": row.get("score"),
                    }
                )
    return rows, total


def _checks(trial_dir: Path, integrity: dict, reasons: dict) -> list[dict]:
    """Every verdict in the record, with the evidence its checks/<check>.json holds (if any). The
    harness's own files in checks/ (verdicts.json, summary.json) are not checks."""
    out = []
    names = sorted(set(integrity) | {p.stem for p in (trial_dir / "checks").glob("*.json") if p.name not in NOT_CHECKS})
    for name in names:
        detail = _read_json(trial_dir / "checks" / f"{name}.json")
        detail = detail if isinstance(detail, dict) else {}
        evidence = detail.get("evidence")
        if not isinstance(evidence, list):
            evidence = []
        verdict = str(integrity.get(name, detail.get("verdict", "unchecked")))
        out.append(
            {
                "name": name,
                "verdict": verdict,
                "verdict_text": verdict_text(verdict),
                "reason": clip(detail.get("reason") or reasons.get(name, "")),
                "evidence": [clip(e) for e in evidence[:50]],
            }
        )
    return out


def load_trial_page(trial_dir: Path, scored, page_dir: Path, raw_dir: Path) -> TrialPage:
    """`scored`: the trial's ScoredTrial (its record and the rule the policy gave it). The raw files
    are put into `raw_dir` (inside the site: hard links where possible, else copies) and linked from
    there, so a copied site keeps them; a symlink among them is left out, never followed."""
    r = scored.record
    page = TrialPage(r.trial_id, r.campaign, r.model_dump(mode="json"), scored.rule, scored.reason, scored.value)
    page.steps, page.steps_cut, page.trajectory_note = _steps(_read_json(trial_dir / "agent" / "trajectory.json"))
    page.samples, page.samples_total = _samples(trial_dir / "eval" / "samples.jsonl")
    page.checks = _checks(trial_dir, r.integrity, r.integrity_detail)
    for name in RAW_FILES:
        if not (trial_dir / name).is_file():
            continue
        (raw_dir / name).parent.mkdir(parents=True, exist_ok=True)
        if link_or_copy(trial_dir / name, raw_dir / name):
            page.raw_links.append((name, quote(os.path.relpath(raw_dir / name, page_dir))))
    return page
