"""`run_checks`: the integrity stage. A trial's checks run in one worker process (integrity/worker.py),
each with its own time limit; a check that hangs, crashes, raises or reports nonsense is `unchecked`
and the checks after it go on in a fresh process. Each report is validated and written to
`checks/<check>.json`, then `checks/verdicts.json`.

Only the harness writes `checks/`. Whatever is in it before the checks run (the agent could
have written there, or a check run was interrupted) is moved to `checks.untrusted/<stamp>/` and
named in `checks/summary.json`; it is never read. A `checks/` folder the agent made in its
workspace is named there too.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ptbench
from ptbench.core.files import atomic_write_json
from ptbench.core.jobenv import TRIAL_ENV_MARKER
from ptbench.core.procgroup import stop_group
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import (
    MAX_EVIDENCE,
    SUMMARY_FILE,
    VERDICTS_FILE,
    CheckReport,
    Finding,
    overall,
    unchecked,
)

_OUTPUT_LIMIT = 4000  # characters of a crashed check's stderr kept in its reason


def run_checks(
    trial_dir: str | os.PathLike[str],
    spec: Any,
    *,
    env: dict[str, str] | None = None,
    cache_dirs: list[Path] | None = None,
    since: float | None = None,
    timeout_s: float | None = None,
    skip: tuple[str, ...] = (),
    resume: tuple[str, ...] = (),
) -> dict[str, str]:
    """Run `spec.integrity.checks` on a trial; returns {check: verdict} as written to verdicts.json.

    `skip`: checks left for later (the pipeline defers `memorization` until evaluation has scored
    final_model); `resume`: run only these checks and merge them into the verdicts already written
    by the harness (checks/ is not moved aside then: the harness wrote it earlier in this run)."""
    trial_dir = Path(trial_dir).resolve()
    checks_dir = trial_dir / "checks"
    ctx = check_context(trial_dir, cache_dirs=cache_dirs, since=since, spec=spec)
    config = spec.integrity
    verdicts: dict[str, str] = {}
    reasons: dict[str, str] = {}
    if resume:
        earlier = _earlier(checks_dir)
        notes = earlier.get("notes", [])
        verdicts.update(earlier.get("verdicts", {}))
        reasons.update(earlier.get("reasons", {}))
    else:
        notes = _quarantine(trial_dir, checks_dir)
    limit = timeout_s if timeout_s is not None else config.check_minutes * 60
    names = [n for n in config.checks if n not in skip and (not resume or n in resume)]
    # The marker lets a restarted runner find and kill a check left running by a kill -9.
    for report in _run_in_processes(names, ctx, limit, {TRIAL_ENV_MARKER: str(trial_dir), **(env or {})}):
        name = report.check
        if report.verdict == "not_applicable" and name in config.require:
            report = report.model_copy(
                update={"verdict": "unchecked", "reason": f"required (integrity.require) but {report.reason}"}
            )
        atomic_write_json(checks_dir / f"{name}.json", report)
        verdicts[name], reasons[name] = report.verdict, report.reason
    verdicts = {n: verdicts[n] for n in config.checks if n in verdicts}  # the configured order
    atomic_write_json(
        checks_dir / SUMMARY_FILE,
        {
            "overall": overall(verdicts),
            "reasons": {n: reasons[n] for n in verdicts if n in reasons},
            "notes": notes,
            "policy": config.policy,
            "harness_version": ptbench.__version__,
        },
    )
    atomic_write_json(checks_dir / VERDICTS_FILE, verdicts)  # last: its presence means the run finished
    return verdicts


def check_context(
    trial_dir: Path, *, spec: Any, cache_dirs: list[Path] | None = None, since: float | None = None
) -> CheckContext:
    """What every check of a trial sees (and evaluation, scoring the memorization check's items)."""
    since = since if since is not None else _agent_started_at(trial_dir)
    cache_dirs = cache_dirs if cache_dirs is not None else default_cache_dirs()
    # What the agent wrote into its copy-on-write HF cache layer is exactly its upper layer; the
    # shared cache (pristine: the agent never had it writable) comes first, so the base model is
    # always the shared one, never a copy the agent put in its layer.
    upper = trial_dir / "hf-layer" / "upper"
    layers = [upper] if upper.is_dir() else []
    return CheckContext(
        trial_dir=trial_dir,
        spec=spec,
        cache_dirs=[Path(p) for p in cache_dirs or []] + layers,
        since=since,
        layer_dirs=layers,
    )


def _earlier(checks_dir: Path) -> dict[str, Any]:
    """The verdicts, reasons and notes the harness wrote earlier in this run (none if unreadable:
    a check missing from verdicts.json reads as unchecked, never clean)."""
    out: dict[str, Any] = {}
    try:
        verdicts = json.loads((checks_dir / VERDICTS_FILE).read_text())
        summary = json.loads((checks_dir / SUMMARY_FILE).read_text())
    except (OSError, ValueError):
        return out
    if isinstance(verdicts, dict) and isinstance(summary, dict):
        out["verdicts"] = {k: v for k, v in verdicts.items() if isinstance(k, str) and isinstance(v, str)}
        out["reasons"] = summary.get("reasons") if isinstance(summary.get("reasons"), dict) else {}
        out["notes"] = summary.get("notes") if isinstance(summary.get("notes"), list) else []
    return out


def default_cache_dirs() -> list[Path]:
    """The Hugging Face caches the agent could write to (its cache layer)."""
    dirs = []
    for var in ("HF_HOME", "HF_HUB_CACHE", "HF_DATASETS_CACHE"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]))
    fallback = Path.home() / ".cache" / "huggingface"
    if not dirs and fallback.is_dir():
        dirs.append(fallback)
    return dirs


def _agent_started_at(trial_dir: Path) -> float | None:
    try:
        attempts = json.loads((trial_dir / "state.json").read_text()).get("attempts") or []
        return float(attempts[0]["started_at"]) if attempts else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _run_in_processes(names: list[str], ctx: CheckContext, limit: float, env: dict[str, str]) -> Iterator[CheckReport]:
    """Each check's report, in order: all checks in one worker process (integrity/worker.py), each
    within `limit` seconds of the one before; one that times out, crashes, raises or reports nonsense
    is `unchecked` and the checks after it go on in a fresh process."""
    pending = list(names)
    with tempfile.TemporaryDirectory(prefix=".integrity-", dir=ctx.trial_dir) as tmp:
        ctx_file = Path(tmp) / "context.json"
        ctx_file.write_text(json.dumps(ctx.to_json()))
        while pending:
            for report in _one_process(list(pending), ctx_file, Path(tmp) / f"stderr-{len(pending)}", limit, env):
                pending.remove(report.check)
                yield report


def _one_process(
    names: list[str], ctx_file: Path, stderr_file: Path, limit: float, env: dict[str, str]
) -> Iterator[CheckReport]:
    """Reports of `names` from one worker, up to and including the first that fails."""
    version = ptbench.__version__
    # A socket pair, not a pipe: a pipe's end can be opened again through /proc/PID/fd/N, for
    # writing, by any process of this user (a program a check starts: the judge's agent CLI, which
    # reads what the agent wrote), which could then send the later checks' findings; a socket's
    # cannot (ENXIO).
    reader, writer = socket.socketpair()
    read_fd, write_fd = reader.fileno(), writer.fileno()
    started = time.time()
    try:
        with open(stderr_file, "wb") as err:
            # -P: the working folder stays off the import path (as the evaluation's: runner/eval_stage.py)
            argv = [sys.executable, "-P", "-m", "ptbench.integrity.worker", str(ctx_file), str(write_fd), *names]
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                pass_fds=(write_fd,),
                start_new_session=True,
                env={**os.environ, **env},
            )
    finally:
        writer.close()  # the worker holds the only writing end: its exit is the stream's end
    lines = _Lines(read_fd, proc)
    try:
        for name in names:
            deadline = time.monotonic() + limit
            line, timed_out = lines.next(deadline)
            if line is None and not timed_out:  # the stream ended: the process exited or closed it
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
            seconds = time.time() - started
            if timed_out:
                _kill(proc)
                yield unchecked(
                    name,
                    f"timed out after {limit:.0f} s (integrity.check_minutes)",
                    version=version,
                    started_at=started,
                    seconds=seconds,
                )
                return
            if line is None:
                tail = stderr_file.read_bytes()[-_OUTPUT_LIMIT:].decode(errors="replace").strip()
                last = tail.splitlines()[-1] if tail else "no output"
                how = f"crashed (exit {proc.returncode})" if proc.returncode else "ended without a report (exit 0)"
                yield unchecked(name, f"{how}: {last}", version=version, started_at=started, seconds=seconds)
                return
            try:
                message = json.loads(line)
                if message["check"] != name:
                    raise ValueError(f"a report for {message['check']!r}")
                finding = Finding.model_validate(message["finding"])
                started, seconds = float(message["started_at"]), float(message["seconds"])
            except (ValueError, KeyError, TypeError) as exc:
                _kill(proc)  # the stream is out of step: the checks after this one start afresh
                yield unchecked(
                    name,
                    f"wrote no valid report ({type(exc).__name__})",
                    version=version,
                    started_at=started,
                    seconds=seconds,
                )
                return
            yield _report(name, finding, version=version, started_at=started, seconds=seconds)
            started += seconds  # when the next check began in the worker (for a failure's timing)
    finally:
        _kill(proc)  # a stop signal raised in the runner while we waited must not leave a check running
        reader.close()


class _Lines:
    """The worker's lines, each awaited until a deadline (select: a blocking read would outwait a hung
    check). The stream's end is the worker's exit, or, should a child it forked still hold the socket
    open, the worker found gone at one of the one-second polls."""

    def __init__(self, fd: int, proc: subprocess.Popen) -> None:
        self.fd, self.proc, self.buffer, self.ended = fd, proc, bytearray(), False

    def next(self, deadline: float) -> tuple[bytes | None, bool]:
        """(line, False); (None, False) at the stream's end; (None, True) past the deadline."""
        while b"\n" not in self.buffer:
            if self.ended:
                return None, False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, True
            gone = self.proc.poll() is not None  # before select: all a gone worker wrote is in the socket
            if not select.select([self.fd], [], [], 0 if gone else min(remaining, 1.0))[0]:
                self.ended = gone
                continue
            chunk = os.read(self.fd, 1 << 16)
            self.ended = not chunk
            self.buffer += chunk
        at = self.buffer.index(b"\n")
        line = bytes(self.buffer[:at])
        del self.buffer[: at + 1]
        return line, False


def _report(name: str, finding: Finding, *, version: str, started_at: float, seconds: float) -> CheckReport:
    if finding.verdict == "flagged" and not finding.evidence:
        finding = Finding(
            verdict="unchecked", reason=f"flagged without evidence: {finding.reason}", details=finding.details
        )
    total = len(finding.evidence)
    details = dict(finding.details, evidence_total=total) if total > MAX_EVIDENCE else finding.details
    return CheckReport(
        check=name,
        verdict=finding.verdict,
        reason=finding.reason,
        evidence=finding.evidence[:MAX_EVIDENCE],
        details=details,
        harness_version=version,
        started_at=started_at,
        seconds=round(seconds, 3),
    )


def _kill(proc: subprocess.Popen) -> None:
    stop_group(proc)


def _quarantine(trial_dir: Path, checks_dir: Path) -> list[str]:
    """Move anything already in checks/ aside (never read, never deleted); note agent-made checks/ folders."""
    notes: list[str] = []
    if checks_dir.is_symlink() or checks_dir.exists() and (not checks_dir.is_dir() or any(checks_dir.iterdir())):
        dest = trial_dir / "checks.untrusted" / time.strftime("%Y%m%dT%H%M%S")
        dest.parent.mkdir(exist_ok=True)
        n = 0
        while dest.exists():
            n += 1
            dest = dest.with_name(f"{dest.name.split('.')[0]}.{n}")
        entries = (
            sorted(p.name for p in checks_dir.iterdir())
            if checks_dir.is_dir() and not checks_dir.is_symlink()
            else [checks_dir.name]
        )
        shutil.move(str(checks_dir), str(dest))
        notes.append(
            f"checks/ held {len(entries)} entries before the checks ran ({', '.join(entries[:10])}); "
            f"moved to {dest.relative_to(trial_dir)} and ignored"
        )
    checks_dir.mkdir(exist_ok=True)
    for root, dirs, _files in os.walk(trial_dir / "workspace"):  # does not follow links
        for d in dirs:
            if d == "checks":
                rel = (Path(root) / d).relative_to(trial_dir)
                notes.append(
                    f"the agent made {rel}; ignored (verdicts live in the trial's checks/ only; still scanned as data)"
                )
        dirs[:] = [d for d in dirs if d not in ("node_modules", ".git")]
    return notes
