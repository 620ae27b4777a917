"""What each agent spent: time, tokens, cost, tool calls, continuations, and its failures by kind.

From each record's budget, usage (agent/usage.json as the runner copied it) and failure. Where a
trial folder holds `agent/calls.jsonl` (one JSON object per model call, from the model gateway), its
token and cost figures replace usage.json's, since the gateway saw every call.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

from ptbench.results.policy import baseline_setting
from ptbench.results.schema import ResultRecord

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass
class AgentCost:
    agent: str
    trials: int = 0
    hours_used: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None  # None: no trial reported a cost
    tool_calls: int = 0
    continuations: int = 0
    failures: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def gateway_usage(calls: str) -> dict | None:
    """Sum the gateway's per-call log; None when absent or unreadable (then usage.json counts)."""
    if not os.path.isfile(calls):
        return None
    total: dict = {f: 0 for f in TOKEN_FIELDS} | {"cost_usd": None}
    try:
        with open(calls, errors="replace") as f:
            lines = f.read().splitlines()
        for line in lines:
            if not line.strip():
                continue
            call = json.loads(line)
            usage = call.get("usage", call) if isinstance(call, dict) else {}
            for field in TOKEN_FIELDS:
                total[field] += int(_number(usage.get(field)))
            if isinstance(usage.get("cost_usd"), (int, float)):
                total["cost_usd"] = (total["cost_usd"] or 0.0) + usage["cost_usd"]
    except (json.JSONDecodeError, AttributeError, OSError):
        return None
    return total


def cost_table(records: list[ResultRecord], trial_dirs: dict[tuple[str, str], str] | None = None) -> list[AgentCost]:
    """One row per agent (baselines left out: they spend no agent budget)."""
    rows: dict[str, AgentCost] = {}
    failures: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        if baseline_setting(r) is not None:
            continue
        row = rows.setdefault(r.agent.label, AgentCost(r.agent.label))
        row.trials += 1
        row.hours_used += r.budget.solve_seconds_used / 3600
        usage = dict(r.usage)
        where = (trial_dirs or {}).get((r.campaign, r.trial_id))
        gateway = gateway_usage(os.path.join(where, "agent", "calls.jsonl")) if where else None
        if gateway is not None:
            usage.update({k: v for k, v in gateway.items() if v is not None})
        for f in TOKEN_FIELDS:
            setattr(row, f, getattr(row, f) + int(_number(usage.get(f))))
        if isinstance(usage.get("cost_usd"), (int, float)):
            row.cost_usd = (row.cost_usd or 0.0) + float(usage["cost_usd"])
        row.tool_calls += int(_number(usage.get("tool_calls")))
        row.continuations += max(0, int(_number(usage.get("runs"))) - 1)
        if r.failure is not None:
            failures[r.agent.label][r.failure.kind] += 1
    for agent, row in rows.items():
        row.failures = dict(sorted(failures[agent].items()))
    return [rows[a] for a in sorted(rows)]
