"""A toy agent CLI, as a site would add one (docs/guides/add-an-agent-cli.md): its agent folder
ships as package data (agents/toy-copy/: agent.yaml naming its trace format, state folders, pinned
package and failure patterns, and the CLI itself, run.sh), registered into the agents registry
here; its own output format's parser registers under the name agent.yaml gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ptbench.agents.spec import AGENTS
from ptbench.agents.traces import register_trace_format
from ptbench.agents.traces._builder import Builder
from ptbench.agents.traces.model import RunSummary

AGENTS.add("toy-copy", Path(__file__).resolve().parent / "agents" / "toy-copy")


@register_trace_format("toy-lines")
def parse_run(events: list[dict[str, Any]], b: Builder, summary: RunSummary) -> None:
    """One JSON object a line: {"toy": "say", "text"}, {"toy": "run", "cmd"}, {"toy": "error", "text"},
    {"toy": "done", "text"}."""
    for ev in events:
        kind = ev.get("toy")
        if kind == "say":
            b.message(str(ev.get("text") or ""))
        elif kind == "run":
            b.call("shell", {"command": str(ev.get("cmd") or "")})
        elif kind == "error":
            b.error(str(ev.get("text") or ""))
            summary.is_error = True
        elif kind == "done":
            summary.final_message = str(ev.get("text") or "")
