"""The judge agreement columns of the tables: one per kind of judge some trial had several of (the
task's judges, from extra_metrics; the integrity check's, from `integrity_judge_agreement`), as mean
agreement per agent, per (agent, task) and per (agent, base model, task). Absent, not empty, when no
trial had several judges."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from ptbench.results import agreement
from ptbench.results.aggregate import Collation, ScoredTrial
from ptbench.results.schema import ResultRecord

JUDGE_AGREEMENT_NOTE = (
    "judge agreement: mean over the agent's trials judged by several judges (n) of Cohen's (two judges) "
    "or Fleiss' kappa and of percent agreement over the judges' verdicts."
)
INTEGRITY_JUDGE_NOTE = (
    "integrity judge agreement: the same over the agent's trials whose integrity check ran several judges, "
    "over their answers to its two questions (with two questions per trial the kappa is a rough figure)."
)


@dataclass(frozen=True)
class JudgeSource:
    """Whose judges (`kind`, a key of `agreement.READERS`): a table column `title`; CSV columns
    <prefix>_trials, <prefix>_kappa, <prefix>_agreement; JSON key <prefix>_agreement."""

    kind: str
    title: str
    prefix: str
    note: str

    def of(self, record: ResultRecord) -> dict[str, Any] | None:
        """One record's agreement of these judges; None with one judge."""
        return agreement.READERS[self.kind](record)


JUDGE_SOURCES = (
    JudgeSource("task", "judge agreement", "judge", JUDGE_AGREEMENT_NOTE),
    JudgeSource("integrity", "integrity judge agreement", "integrity_judge", INTEGRITY_JUDGE_NOTE),
)


def judge_agreement_by(
    c: Collation, key: Callable[[ScoredTrial], Hashable], source: JudgeSource = JUDGE_SOURCES[0]
) -> dict[Any, dict[str, Any]] | None:
    """Judge agreement (`agreement.mean_of`) per group of trials (key: agent, (agent, task), ...), for
    the groups that had a trial with several judges; None when no trial had several judges."""
    per: dict[Any, list[dict[str, Any] | None]] = {}
    for t in c.trials:
        per.setdefault(key(t), []).append(source.of(t.record))
    fields = {k: agreement.mean_of(f) for k, f in per.items()}
    found = {k: f for k, f in fields.items() if f is not None}
    return found or None


def judge_sources(c: Collation) -> list[JudgeSource]:
    """The sources some trial of the collation had several judges of: each one column, else none."""
    return [s for s in JUDGE_SOURCES if s.kind in c.judge_kinds]


def by_agent(t: ScoredTrial) -> str:
    return t.record.agent.label


def by_agent_task(t: ScoredTrial) -> tuple[str, str]:
    return t.record.agent.label, t.record.task.label


def by_agent_base_task(t: ScoredTrial) -> tuple[str, str, str]:
    return t.record.agent.label, t.record.base_model.label, t.record.task.label


def judge_agreement_cells(c: Collation, source: JudgeSource = JUDGE_SOURCES[0]) -> dict[str, str] | None:
    """agent -> its trials' mean judge agreement as a cell, or None when no trial had several judges."""
    per_agent = judge_agreement_by(c, by_agent, source)
    return None if per_agent is None else {a: agreement.summary_text(f) for a, f in per_agent.items()}


def with_judge_agreement(c: Collation, head: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """The main table with a column per judge source some trial had several judges of ("judge
    agreement", "integrity judge agreement"); rows are the agents, then the baseline settings: those
    get an empty cell, never an agent's."""
    n = len(c.agents)
    for source in judge_sources(c):
        cells = judge_agreement_cells(c, source) or {}
        head = [*head, source.title]
        rows = [[*r, cells.get(r[0], "") if i < n else ""] for i, r in enumerate(rows)]
    return head, rows


LEVELS = {"agent": by_agent, "cell": by_agent_task, "base": by_agent_base_task}


def judge_levels(c: Collation) -> Callable[[str, Hashable], dict[str, dict[str, Any] | None]]:
    """(level, key) -> {<prefix>: mean agreement or None} for each judge source the collation has
    (an empty dict when no trial had several judges: no column, no field anywhere)."""
    sources = judge_sources(c)
    by = {(s.prefix, lv): judge_agreement_by(c, key, s) or {} for s in sources for lv, key in LEVELS.items()}

    def at(level: str, k: Hashable) -> dict[str, dict[str, Any] | None]:
        return {s.prefix: by[(s.prefix, level)].get(k) for s in sources}

    return at
