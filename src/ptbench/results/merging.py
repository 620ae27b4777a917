"""Merging campaigns into one table: warnings for labels that name different things and for trials
present twice. (Whether results may share a column at all is `comparable.check_comparable`.)"""

from __future__ import annotations

from collections import defaultdict

from ptbench.results.policy import baseline_setting
from ptbench.results.schema import ResultRecord


def label_conflicts(records: list[ResultRecord]) -> list[str]:
    """Labels that mean different agents, models or tasks in different records (a warning)."""
    meaning: dict[str, dict[str, set[str]]] = {
        "agent": defaultdict(set),
        "base model": defaultdict(set),
        "task": defaultdict(set),
    }
    for r in records:
        meaning["agent"][r.agent.label].add(f"{r.agent.name}" + (f" ({r.agent.model})" if r.agent.model else ""))
        meaning["base model"][r.base_model.label].add(r.base_model.id)
        meaning["task"][r.task.label].add(r.task.name)
    return [
        f"{kind} label {label!r} names different things: {', '.join(sorted(things))}"
        for kind, labels in meaning.items()
        for label, things in sorted(labels.items())
        if len(things) > 1
    ]


def duplicate_trials(records: list[ResultRecord]) -> list[str]:
    """The same (agent, base model, task, seed) from several campaigns: both count, said so."""
    where: dict[tuple, list[str]] = defaultdict(list)
    for r in records:
        if baseline_setting(r) is None:
            where[(r.agent.label, r.base_model.label, r.task.label, r.seed)].append(r.campaign)
    twice = sorted((k, c) for k, c in where.items() if len(c) > 1)  # only those sorted: 10,000 keys in a big campaign
    return [
        f"trial {' / '.join(map(str, k))} appears {len(c)} times (campaigns {', '.join(sorted(c))}); their scores are "
        "averaged"
        for k, c in twice
    ]
