"""Integrity coverage: per benchmark, which checks decided its trials.

A table's number is only as good as the checks behind it: a gsm8k cell checked by four checks and an
arena cell checked by three (memorization has no method for judged writing) must not look alike.
Counted over the trials whose own score integrity could keep or replace (a valid score of their
own): a trial without one takes the policy's number whatever its verdicts, and the rule line says so.

A check *decided* a benchmark when every such trial has its verdict `clean` or `flagged`; it is *not
applicable* when every trial says `not_applicable` (a fact of the task or the campaign: the trial keeps
its score); anything else (some `unchecked`, a mix) is shown with its counts. A trial with no verdict
for a check that others of the benchmark ran counts as `unchecked` for it, as the policy reads it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ptbench.results.policy import VERDICTS, ScoredTrial, own_score

DECIDING = frozenset({"clean", "flagged"})
HEADING = (
    "Integrity coverage: per benchmark, the checks that decided (clean or flagged) every trial with a "
    "score of its own (k/m: of the checks run); a not applicable check has no method for the task and "
    "leaves the score as it is."
)


def verdict_text(verdict: str) -> str:
    """A verdict as a reader reads it (`not_applicable` -> `not applicable`)."""
    return verdict.replace("_", " ")


def counts_text(counts: Counter) -> str:
    """'3 clean, 1 unchecked', in the order of VERDICTS."""
    return ", ".join(f"{counts[v]} {verdict_text(v)}" for v in VERDICTS if counts.get(v))


@dataclass
class Coverage:
    task: str
    trials: int  # trials with a score of their own
    verdicts: dict[str, Counter] = field(default_factory=dict)  # check -> verdict -> trials, in the order run

    @property
    def decided(self) -> list[str]:
        return [name for name, n in self.verdicts.items() if set(n) <= DECIDING]

    @property
    def not_applicable(self) -> list[str]:
        return [name for name, n in self.verdicts.items() if set(n) == {"not_applicable"}]

    @property
    def undecided(self) -> list[str]:
        """Checks some trial of the benchmark has no decision from, not for want of a method."""
        done = set(self.decided) | set(self.not_applicable)
        return [name for name in self.verdicts if name not in done]

    def decided_text(self) -> str:
        """'contamination (5 clean, 1 flagged), model_identity (2/3)'; a check all clean is named bare."""
        names = [
            name if set(self.verdicts[name]) == {"clean"} else f"{name} ({counts_text(self.verdicts[name])})"
            for name in self.decided
        ]
        return f"{', '.join(names) or 'no check'} ({len(self.decided)}/{len(self.verdicts)})"

    def text(self) -> str:
        """One line: 'gsm8k, 6 trials: decided by contamination, memorization, model_identity (3/3)'."""
        head = f"{self.task}, {self.trials} trial{'s' if self.trials != 1 else ''}"
        if not self.trials:
            return f"{head}: none has a score of its own"
        if not self.verdicts:
            return f"{head}: no integrity check ran"
        parts = [f"decided by {self.decided_text()}"]
        parts += [f"{name} {counts_text(self.verdicts[name])}" for name in self.undecided]
        if self.not_applicable:
            parts.append(f"{', '.join(self.not_applicable)} not applicable")
        return f"{head}: " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "trials": self.trials,
            "checks": {name: {v: n[v] for v in VERDICTS if n.get(v)} for name, n in self.verdicts.items()},
            "decided": self.decided,
            "not_applicable": self.not_applicable,
            "undecided": self.undecided,
            "text": self.text(),
        }


def coverage(trials: list[ScoredTrial], tasks: list[str]) -> list[Coverage]:
    """One Coverage per task label (in `tasks`' order) over the agents' trials with a score of their own."""
    by_task: dict[str, list[dict[str, str]]] = {t: [] for t in tasks}
    for t in trials:
        if own_score(t.record) is not None:
            by_task.setdefault(t.record.task.label, []).append(t.record.integrity)
    out = []
    for task, records in by_task.items():
        names = list(dict.fromkeys(name for integrity in records for name in integrity))
        verdicts: dict[str, Counter] = {name: Counter() for name in names}
        for integrity in records:
            for name in names:  # unknown words and missing verdicts read as the policy reads them
                v = integrity.get(name)
                verdicts[name][v if v in VERDICTS else "unchecked"] += 1
        out.append(Coverage(task, len(records), verdicts))
    return out
