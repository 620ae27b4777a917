"""The benchmark's aggregate, as the reference computes it.

For each run (seed) of an agent: per benchmark, the mean over base models of that run's scores (after
the scoring policy); then the weighted mean over benchmarks. The aggregate's mean ± std is over runs
of the aggregate itself, not over cells. Baselines (base zero-shot, few-shot, instruct) are rows of
their own: per benchmark the mean over their models.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ptbench.results import agreement
from ptbench.results.coverage import Coverage, coverage
from ptbench.results.policy import (
    BaselineIndex,
    ScoredTrial,
    baseline_setting,
    own_score,
    score_trial,
)
from ptbench.results.schema import ResultRecord
from ptbench.results.weights import Weights, resolve


@lru_cache(maxsize=65536)
def _stdev(values: tuple[float, ...]) -> float:
    # statistics.stdev is exact (it sums Fractions) and slow; every table format asks for each std again
    return statistics.stdev(values)


@dataclass
class Stat:
    """A number over runs (or models, for baselines), with the rules its trials were scored by."""

    values: list[float] = field(default_factory=list)
    rules: Counter = field(default_factory=Counter)
    incomplete: int = 0  # runs left out of an aggregate because a benchmark had no number

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values) if self.values else math.nan

    @property
    def std(self) -> float:
        if any(math.isnan(v) for v in self.values):
            return math.nan  # statistics.stdev fails on nan
        return _stdev(tuple(self.values)) if len(self.values) > 1 else 0.0


@dataclass
class Collation:
    policy: str
    integrity_policy: str | None
    weights: Weights
    tasks: list[str]
    agents: list[str]
    settings: list[str]  # baseline rows
    per_benchmark: dict[tuple[str, str], Stat]  # (agent, task)
    aggregate: dict[str, Stat]  # agent -> weighted average over runs
    per_base: dict[tuple[str, str, str], Stat]  # (agent, base, task)
    baselines: dict[tuple[str, str], Stat]  # (setting, task); values are per-model means
    baseline_aggregate: dict[str, float]
    trials: list[ScoredTrial]
    baseline_per_model: dict[tuple[str, str, str], Stat] = field(default_factory=dict)  # (setting, model, task)
    notes: list[str] = field(default_factory=list)
    # asked for with `collate --compare / --ci / --seeds-needed` (ptbench.results.compare)
    comparisons: list = field(default_factory=list)
    ci: bool = False
    seeds_needed: list[dict] = field(default_factory=list)
    seeds_width: float | None = None

    # counted once: every table asks for them, and `trials` does not change once collated
    @cached_property
    def rule_totals(self) -> Counter:
        return Counter(t.rule for t in self.trials)

    @cached_property
    def reasons(self) -> Counter:
        return Counter((t.rule, t.reason) for t in self.trials if t.rule != "scored")

    @cached_property
    def coverage(self) -> list[Coverage]:
        """Per benchmark, which integrity checks decided its trials (results.coverage)."""
        return coverage(self.trials, self.tasks)

    @cached_property
    def judge_kinds(self) -> frozenset[str]:
        """Whose judges (`agreement.READERS`: task, integrity) some trial had several of."""
        return frozenset(
            k for k, read in agreement.READERS.items() if any(read(t.record) is not None for t in self.trials)
        )


def _setting_order(label: str) -> tuple[int, int, str]:
    if label.startswith("instruct"):
        return (2, 0, label)
    shots = re.search(r"(\d+)-shot", label)
    return (0 if "zero-shot" in label else 1, int(shots.group(1)) if shots else 0, label)


def collate(
    records: list[ResultRecord], policy: str, integrity_policy: str | None = None, weights: str = "auto"
) -> Collation:
    agent_records: list[ResultRecord] = []
    baseline_records: list[ResultRecord] = []
    for r in records:  # one look per record: 10,000 of them in a big campaign
        (agent_records if baseline_setting(r) is None else baseline_records).append(r)
    index = BaselineIndex(records)
    trials = [score_trial(r, index, policy, integrity_policy) for r in agent_records]

    tasks = sorted({r.task.label for r in agent_records} or {r.task.label for r in baseline_records})
    names = {r.task.label: r.task.name for r in records}
    w = resolve(weights, records, tasks, names)

    # (agent, task, seed, base) -> values (several only for duplicates merged from campaigns)
    cell: dict[tuple[str, str, int, str], list[float]] = defaultdict(list)
    per_base: dict[tuple[str, str, str], Stat] = defaultdict(Stat)
    per_bench: dict[tuple[str, str], Stat] = defaultdict(Stat)
    runs: dict[str, set[int]] = defaultdict(set)
    for t in trials:
        r = t.record
        per_bench[(r.agent.label, r.task.label)].rules[t.rule] += 1
        per_base[(r.agent.label, r.base_model.label, r.task.label)].rules[t.rule] += 1
        runs[r.agent.label].add(r.seed)
        if t.value is not None:
            cell[(r.agent.label, r.task.label, r.seed, r.base_model.label)].append(t.value)

    seed_values: dict[tuple[str, str, int], list[float]] = defaultdict(list)  # (agent, task, seed) -> per-base values
    base_seed_values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for (agent, task, seed, base), values in sorted(cell.items()):
        v = statistics.fmean(values)
        seed_values[(agent, task, seed)].append(v)
        base_seed_values[(agent, base, task)].append(v)
    for key, values in base_seed_values.items():
        per_base[key].values = values
    bench_run: dict[tuple[str, str, int], float] = {k: statistics.fmean(v) for k, v in seed_values.items()}
    for (agent, task, _seed), v in sorted(bench_run.items()):
        per_bench[(agent, task)].values.append(v)

    agents = sorted(runs)
    aggregate: dict[str, Stat] = {}
    for agent in agents:
        stat = Stat(rules=sum((per_bench[(agent, t)].rules for t in tasks if (agent, t) in per_bench), Counter()))
        for seed in sorted(runs[agent]):
            if all((agent, t, seed) in bench_run for t in tasks):
                stat.values.append(sum(w.by_task[t] * bench_run[(agent, t, seed)] for t in tasks))
            else:
                stat.incomplete += 1
        aggregate[agent] = stat

    baselines: dict[tuple[str, str], Stat] = {}
    per_model: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    baseline_per_model: dict[tuple[str, str, str], Stat] = defaultdict(Stat)
    for r in baseline_records:
        setting, score = baseline_setting(r), own_score(r)
        if setting is not None and score is not None:
            per_model[(setting, r.task.label)][r.base_model.id].append(score)
            baseline_per_model[(setting, r.base_model.label, r.task.label)].values.append(score)
    for setting_task, models in per_model.items():
        baselines[setting_task] = Stat([statistics.fmean(v) for v in models.values()])
    settings = sorted({s for s, _ in baselines}, key=_setting_order)
    baseline_aggregate = {
        s: sum(w.by_task[t] * baselines[(s, t)].mean for t in tasks)
        for s in settings
        if tasks and all((s, t) in baselines for t in tasks)
    }

    notes = [f"Weighted average: {w.source}: " + ", ".join(f"{t} {w.by_task[t]:.4f}" for t in tasks) + "."]
    if index.sources_used:
        notes.append(
            "Base-model fallback scores come from "
            + " and ".join(
                sorted(
                    "the `ptbench baseline` zero-shot records"
                    if s == "baseline"
                    else "the campaign's base-model agent trials"
                    for s in index.sources_used
                )
            )
            + "."
        )
    if any(s.incomplete for s in aggregate.values()):
        notes.append(
            "Runs that lack a number for some benchmark are left out of the weighted average (counted as 'incomplete')."
        )
    return Collation(
        policy,
        integrity_policy,
        w,
        tasks,
        agents,
        settings,
        dict(per_bench),
        aggregate,
        dict(per_base),
        baselines,
        baseline_aggregate,
        trials,
        baseline_per_model=dict(baseline_per_model),
        notes=notes,
    )
