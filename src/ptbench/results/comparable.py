"""May these records share a table? Refuse mixed evaluation settings or test sets; warn on labels
that name different things in different campaigns.

`check_comparable` is the one place that decides; collate calls it on everything it merges.
"""

from __future__ import annotations

import json
from collections import defaultdict

from ptbench.results.policy import baseline_setting
from ptbench.results.schema import ResultRecord

# Compared across every record of a task, baselines included: what was scored.
SCORED_ON = ("limit", "test_set_sha256")
# Differ between trials for honest reasons (retry phases, engine build details, the serving engine).
VOLATILE = {"phases", "engine_settings", "engine"}


def _show(value) -> str:
    if value is None or isinstance(value, (bool, int, float, str)):
        return json.dumps(value)[:120]
    return json.dumps(value, sort_keys=True, default=str)[:120]


def check_comparable(records: list[ResultRecord]) -> list[str]:
    """One line per difference, naming the task, the setting and who used which value; [] if none.

    Every record is compared on what it was scored on (limit, test-set hash); agent trials also on
    every other evaluation setting (generation, judge, prompt format...), since baselines
    legitimately use other prompt formats."""
    seen: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in records:
        if not r.evaluation:
            continue  # not evaluated (failed trials): nothing to compare
        keys = SCORED_ON if baseline_setting(r) else sorted(set(r.evaluation) - VOLATILE | set(SCORED_ON))
        for key in keys:
            seen[(r.task.label, key)][_show(r.evaluation.get(key))].add(r.campaign)
    problems = []
    for (task, key), values in sorted(seen.items()):
        if len(values) > 1:
            shown = "; ".join(f"{v} (campaign {', '.join(sorted(c))})" for v, c in sorted(values.items()))
            problems.append(f"{task}: evaluation.{key} differs: {shown}")
    return problems


def label_conflicts(records: list[ResultRecord]) -> list[str]:
    """Labels that mean different agents, models or tasks in different records (a warning)."""
    meaning: dict[str, dict[str, set[str]]] = {"agent": defaultdict(set), "base model": defaultdict(set), "task": defaultdict(set)}
    for r in records:
        meaning["agent"][r.agent.label].add(f"{r.agent.name}" + (f" ({r.agent.model})" if r.agent.model else ""))
        meaning["base model"][r.base_model.label].add(r.base_model.id)
        meaning["task"][r.task.label].add(r.task.name)
    return [f"{kind} label {label!r} names different things: {', '.join(sorted(things))}"
            for kind, labels in meaning.items() for label, things in sorted(labels.items()) if len(things) > 1]


def duplicate_trials(records: list[ResultRecord]) -> list[str]:
    """The same (agent, base model, task, seed) from several campaigns: both count, said so."""
    where: dict[tuple, list[str]] = defaultdict(list)
    for r in records:
        if baseline_setting(r) is None:
            where[(r.agent.label, r.base_model.label, r.task.label, r.seed)].append(r.campaign)
    return [f"trial {' / '.join(map(str, k))} appears {len(c)} times (campaigns {', '.join(sorted(c))}); their scores are averaged"
            for k, c in sorted(where.items()) if len(c) > 1]
