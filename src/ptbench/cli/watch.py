"""`ptbench status CAMPAIGN --watch`: the status table refreshed in place until every trial is final,
with one line per state (how many, and which trials) under it."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from rich.console import Group
from rich.live import Live
from rich.text import Text

from ptbench.commands import console, status_table
from ptbench.status import FINAL_STATES, TrialStatus

MAX_IDS = 6  # trial ids named per state line; the rest are counted


def state_lines(rows: list[TrialStatus]) -> list[str]:
    by_state: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        by_state[r.state].append(r.trial_id)
    lines = []
    for state, ids in sorted(by_state.items(), key=lambda kv: (kv[0] in FINAL_STATES, kv[0])):
        shown = ", ".join(ids[:MAX_IDS]) + (f", … {len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else "")
        lines.append(f"{state} {len(ids)}: {shown}")
    return lines


# States that change only when the user acts (resubmits, --retry-failed): watching them is pointless.
STUCK = {"failed", "interrupted", "corrupt"}


def all_final(rows: list[TrialStatus]) -> bool:
    return all(r.state in FINAL_STATES or r.state in STUCK for r in rows)


def _view(campaign_dir: Path, rows: list[TrialStatus], done: bool):
    stuck = sum(r.state in STUCK for r in rows)
    end = f"nothing left running; {stuck} need you (resubmit or --retry-failed)" if stuck else "every trial is final"
    footer = "\n".join(state_lines(rows)) + "\n" + (end if done else "watching (Ctrl-C to stop)")
    return Group(status_table(campaign_dir, rows), Text(footer))


def watch_status(campaign_dir: Path, rows_fn: Callable[[], list[TrialStatus]], interval: float = 5.0) -> int:
    """Refresh until every trial is final or stuck (exit 0), or the user interrupts (exit 130)."""
    rows = rows_fn()
    try:
        with Live(_view(campaign_dir, rows, all_final(rows)), console=console, auto_refresh=False) as live:
            while not all_final(rows):
                time.sleep(max(0.2, interval))
                rows = rows_fn()
                live.update(_view(campaign_dir, rows, all_final(rows)), refresh=True)
    except KeyboardInterrupt:
        return 130
    return 0
