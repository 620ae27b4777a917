"""Each CLI's native output (agent/native.log) -> the common trajectory (agent/trajectory.json) and usage.json."""

from __future__ import annotations

from pathlib import Path

from ptbench.agents.traces._builder import Builder
from ptbench.agents.traces.formats import TRACE_FORMATS, plain_text, register_trace_format
from ptbench.agents.traces.model import RUN_MARKER_KEY, RunSummary, Step, ToolCall, Trajectory, Usage, split_runs
from ptbench.core.files import atomic_write_json

__all__ = [
    "RUN_MARKER_KEY",
    "RunSummary",
    "Step",
    "TRACE_FORMATS",
    "ToolCall",
    "Trajectory",
    "Usage",
    "parse_native_log",
    "register_trace_format",
    "write_traces",
]


def parse_native_log(text: str, trace_format: str, *, agent: str = "", model: str | None = None) -> Trajectory:
    traj = Trajectory(agent=agent, model=model, trace_format=trace_format)
    parse = TRACE_FORMATS.get(trace_format)  # agent.yaml's format was checked when it was loaded
    parser = None if parse is plain_text else parse
    for marker, events, other in split_runs(text):
        run = int(marker.get(RUN_MARKER_KEY, len(traj.runs) + 1))
        summary = RunSummary(run=run, mode=str(marker.get("mode", "start")))
        traj.unparsed_lines += len(other)
        if parser is not None:
            parser(events, Builder(traj, run), summary)
        else:
            last = [ln for ln in other if ln.strip()]
            summary.final_message = last[-1].strip() if last else None
        traj.runs.append(summary)
        traj.usage.add(summary.usage)
        traj.session_id = summary.session_id or traj.session_id
        traj.final_message = summary.final_message or traj.final_message
    return traj


def write_traces(agent_dir: Path, trace_format: str, *, agent: str, model: str | None) -> Trajectory:
    """Parse agent_dir/native.log; write trajectory.json and usage.json (the log is already redacted)."""
    log = agent_dir / "native.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    traj = parse_native_log(text, trace_format, agent=agent, model=model)
    atomic_write_json(agent_dir / "trajectory.json", traj)
    usage = traj.usage.to_json(trace_format)
    usage["runs"] = len(traj.runs)
    usage["tool_calls"] = len(traj.tool_calls())
    atomic_write_json(agent_dir / "usage.json", usage)
    return traj
