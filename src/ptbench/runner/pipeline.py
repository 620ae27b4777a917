"""`ptbench trial run DIR`: the same pipeline on every backend.

prepare -> solve -> collect -> integrity -> evaluate -> record. Each stage leaves a marker in
state.json; a restarted job (requeue, eviction, kill -9) continues at the first unfinished stage,
and the solve stage gets only the budget that is left.

Exit codes: 0 a result is recorded; 75 interrupted, failed retryably or the trial locked
(runner/lease.py), run again to resume; 2 a user error (bad trial directory, corrupt state).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from ptbench.agents.redact import RedactingPump
from ptbench.core.errors import UserError
from ptbench.core.jobenv import job_identity, scheduler_time_limit_reached
from ptbench.core.procgroup import stop_group
from ptbench.core.procsec import make_not_dumpable
from ptbench.integrity import overall, run_checks
from ptbench.integrity.applicability import not_applicable_reason
from ptbench.integrity.checks import CHECKS
from ptbench.integrity.memorization.final_scores import FILE as FINAL_SCORES_FILE
from ptbench.integrity.memorization.final_scores import SECRET_ENV, new_secret
from ptbench.integrity.runner import check_context
from ptbench.node.monitor import Monitor
from ptbench.results.schema import ResultRecord
from ptbench.runner import record
from ptbench.runner.child_env import evaluation_env, harness_redactor
from ptbench.runner.eval_stage import evaluation_argv
from ptbench.runner.gpu import check_gpus
from ptbench.runner.installation import written_since  # here, not in the guard: imported before any agent runs
from ptbench.runner.lease import Lease, busy_message
from ptbench.runner.watchdog import Watchdog, become_subreaper, kill_leftovers, terminate_descendants
from ptbench.runner.workspace import prepare_workspace
from ptbench.sandbox.auto import AUTO
from ptbench.sandbox.request import sandbox_facts
from ptbench.trial import Attempt, StageMark, TrialDir, TrialState

EXIT_RESUMABLE = 75  # EX_TEMPFAIL: schedulers requeue / retry on it
# SIGUSR2: Slurm's `--signal` before the time limit (submitit's default signal).
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)


class _Interrupted(Exception):
    def __init__(self, signame: str) -> None:
        self.signame = signame


class _RetryableFailure(Exception):
    def __init__(self, stage: str, kind: str, message: str, *, retryable: bool = True) -> None:
        self.stage, self.kind, self.message, self.retryable = stage, kind, message, retryable


class Runner:
    def __init__(self, trial: TrialDir) -> None:
        self.trial = trial
        self.spec = trial.spec
        self.watchdog: Watchdog | None = None
        self.child: subprocess.Popen | None = None
        # The first stop signal taken (schedulers send several: USR2, TERM, ...). Signal handlers
        # only set it; the stages check it at safe points (`_check_stop`), so a stop never lands in
        # the middle of a write, a cleanup or the secret scrub.
        self.stop_signal: str | None = None
        self._python_guarded = False  # _guard_python ran in this process
        self.monitor = Monitor(trial.path, interval=self.spec.budget.monitor_seconds, gpus=self.spec.budget.gpus)

    # ---- entry --------------------------------------------------------------------------
    def run(self) -> int:
        trial = self.trial
        with trial.try_lock() as held:
            if not held:  # a live runner, or a dead node's lock not yet released: both are "try again later"
                print(busy_message(trial), file=sys.stderr)
                return EXIT_RESUMABLE
            state = trial.load_state()
            if "record" in state.stages or trial.result_json.exists():
                print(f"{trial.id}: already finished ({(trial.read_result() or {}).get('status', '?')}); nothing to do")
                return 0
            lease: Lease | None = None
            try:
                subreaper = become_subreaper()  # checked: without it an orphaned process could escape the sweep
                make_not_dumpable()  # the keys this job inherited: not in /proc/<runner>/environ for the agent
                scheduler, job_id = job_identity()
                state.attempts.append(
                    Attempt(
                        number=len(state.attempts) + 1,
                        started_at=time.time(),
                        host=socket.gethostname(),
                        pid=os.getpid(),
                        job_id=job_id,
                    )
                )
                trial.save_state(state)
                trial.write_runner_pid()
                lease = Lease(trial)
                trial.event(
                    "started",
                    attempt=len(state.attempts),
                    scheduler=scheduler,
                    job_id=job_id,
                    next_stage=state.next_stage(),
                    cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
                    subreaper=subreaper,
                )
                # The job's log (logs/<trial>.log locally, the scheduler's output file elsewhere) says
                # what happened in it: this line, one a stage, the result; tracebacks of harness errors.
                _say(f"{trial.id}: attempt {len(state.attempts)} on {socket.gethostname()}, next {state.next_stage()}")
                for sig in _STOP_SIGNALS:
                    signal.signal(sig, self._on_signal)
                # A job wrapper starts this process with them blocked (backends/slurm/job.py): one that
                # came during start-up was held pending, and is taken now.
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
                by_cgroup, by_marker = kill_leftovers(str(trial.path))  # of an attempt whose runner was killed -9
                if by_cgroup or by_marker:
                    trial.event(
                        "killed_leftovers", processes=by_cgroup + by_marker, by_cgroup=by_cgroup, by_marker=by_marker
                    )
                return self._stages(state)
            finally:
                for sig in _STOP_SIGNALS:
                    signal.signal(sig, signal.SIG_DFL)
                trial.runner_pid.unlink(missing_ok=True)
                if lease is not None:
                    lease.release()

    def _stages(self, state: TrialState) -> int:
        try:
            if self.trial.cancel_marker.exists():
                raise _Interrupted("cancel")
            if len(state.attempts) > self.spec.max_requeues + 1 and state.next_stage() != "record":
                return self._finish(state, record.exhausted(self.trial, state))
            state.failure = None  # this attempt starts clean; the last one's failure is in events.jsonl
            # The state machine: the first unfinished stage runs; between stages, a stop is honoured.
            while (stage := state.next_stage()) is not None:
                self._check_stop()
                with self.monitor.stage(stage):  # samples during solve and evaluate only
                    getattr(self, f"_{stage}")(state)
            return 0
        except _Interrupted as exc:
            return self._interrupted(state, exc.signame)
        except (_RetryableFailure, UserError) as exc:
            if isinstance(exc, UserError):
                exc = _RetryableFailure(state.next_stage() or "record", "setup_error", str(exc), retryable=False)
            retryable = exc.retryable
            self._fail(state, exc.stage, exc.kind, exc.message, retryable)
            print(
                f"{self.trial.id}: {exc.stage} failed ({exc.kind}): {exc.message}"
                + (" — retryable" if retryable else ""),
                file=sys.stderr,
            )
            return EXIT_RESUMABLE if retryable else UserError.exit_code  # fix the cause, then run again
        except Exception as exc:
            # A harness bug: keep the traceback in the log, and say so in the trial's state.
            self._fail(state, state.next_stage() or "record", "harness_error", f"{type(exc).__name__}: {exc}", False)
            raise

    def _check_stop(self) -> None:
        """A safe point: every file of the finished stages is written, no child runs."""
        if self.stop_signal:
            raise _Interrupted(self.stop_signal)
        if self.trial.cancel_marker.exists():
            raise _Interrupted("cancel")

    def _fail(self, state: TrialState, stage: str, kind: str, message: str, retryable: bool) -> None:
        state.failure = {"stage": stage, "kind": kind, "message": message, "retryable": retryable}
        self._end_attempt(state, f"failed: {kind}")
        self.trial.event("failed", **state.failure)

    def _interrupted(self, state: TrialState, signame: str) -> int:
        self._stop_child()
        if self.trial.cancel_marker.exists():
            self.trial.event("cancelled", signal=signame)
            return self._finish(state, record.cancelled(self.trial, state))
        if scheduler_time_limit_reached(signame):
            # Not a preemption: the job's own wall-clock limit is ending it, so a requeue would not help.
            self.trial.event("scheduler_time_limit", signal=signame, next_stage=state.next_stage())
            return self._finish(state, record.scheduler_time_limit(self.trial, state))
        self._end_attempt(state, f"interrupted by {signame}")
        self.trial.event(
            "checkpointed",
            signal=signame,
            solve_seconds_used=round(state.solve_seconds_used, 1),
            next_stage=state.next_stage(),
        )
        return EXIT_RESUMABLE

    def _finish(self, state: TrialState, result: ResultRecord) -> int:
        record.finish(self.trial, state, result)
        _say(f"{self.trial.id}: recorded {result.status}")
        return 0

    # ---- stages -------------------------------------------------------------------------
    def _prepare(self, state: TrialState) -> None:
        b = self.spec.budget
        gpus = check_gpus(b.gpus, b.gpu_type)
        if not gpus.ok:
            raise _RetryableFailure("prepare", "no_gpu", gpus.message)
        self._require_sandbox()
        prepare_workspace(self.trial, python=sys.executable)
        self._mark(state, "prepare", "ok", gpus=gpus.message)

    def _require_sandbox(self) -> None:
        """A node that cannot build the asked-for sandbox is a setup failure, never an unsandboxed run."""
        # `auto` is resolved (and refused where bwrap cannot start) by the solve stage itself.
        unavailable = sandbox_facts(self.spec.sandbox).unavailable if self.spec.sandbox != AUTO else None
        if unavailable is not None and (why := unavailable()):
            raise _RetryableFailure("prepare", "sandbox_unavailable", why)

    def _solve(self, state: TrialState) -> None:
        from ptbench.runner.agent_solve import solve

        self._require_sandbox()  # also on a node a requeued job lands on after prepare
        trial, budget = self.trial, self.spec.budget
        left = budget.seconds - state.solve_seconds_used
        if left <= 0:
            self._mark(state, "solve", "timed_out", exit_code=None, timed_out=True, seconds=0.0)
            return

        def set_watchdog(w: Watchdog | None) -> None:
            self.watchdog = w
            if w is not None and self.stop_signal:  # a stop taken before this run's watchdog existed
                w.interrupt(self.stop_signal)

        res = solve(trial, state, set_watchdog)
        outcome = res.outcome
        if outcome is None:  # the budget ran out between runs
            self._mark(
                state,
                "solve",
                "timed_out",
                exit_code=None,
                timed_out=True,
                seconds=0.0,
                continuations=res.continuations,
            )
            return
        if outcome.interrupted:
            raise _Interrupted(outcome.interrupted)
        result = (
            "timed_out"
            if outcome.timed_out
            else ("ok" if outcome.exit_code == 0 and res.failure is None else "agent_failed")
        )
        detail: dict[str, Any] = dict(
            exit_code=outcome.exit_code,
            timed_out=outcome.timed_out,
            warned=outcome.warned,
            seconds=round(outcome.seconds, 2),
            continuations=res.continuations,
        )
        if res.failure is not None:
            detail.update(
                failure_kind=res.failure.kind,
                retryable=res.failure.retryable,
                failure_message=res.failure.message[:500],
            )
        self._mark(state, "solve", result, **detail)

    def _collect(self, state: TrialState) -> None:
        src = self.trial.workspace / "final_model"
        dst = self.trial.final_model
        escape = _escaping_link(src) if src.exists() or src.is_symlink() else None
        if escape:
            # A link out of the workspace would have the harness evaluate a model the agent did not make.
            self._mark(
                state, "collect", "no_model", found=False, rejected=f"final_model links outside the workspace: {escape}"
            )
            return
        if src.is_dir() and not dst.exists():
            src.rename(dst)
        found = dst.is_dir() and any(dst.iterdir())
        self._mark(state, "collect", "ok" if found else "no_model", found=found)

    def _guard_python(self, state: TrialState) -> None:
        """Before the first harness process that starts after the agent (integrity, evaluation), in a
        sandbox that left the harness's Python writable to it (`none`): a startup hook (`.pth`,
        sitecustomize) written since the agent started fails the trial, since it would run inside
        every check and the evaluation; bytecode written since then is not trusted, so those processes
        (and this one's later imports) read a fresh cache folder and compile from source
        (runner/installation.py, `written_since`). Once per runner process."""
        if self._python_guarded or not state.attempts:
            return
        self._python_guarded = True
        # The campaign's sandbox as this process read it (`auto` becomes bwrap or the trial does not start),
        # never agent/launch.json: an agent that could write the installation could write that too.
        if sandbox_facts(self.spec.sandbox).isolates:  # the Python installation was read-only to the agent
            return
        bytecode, hooks = written_since(state.attempts[0].started_at)
        if hooks:
            raise _RetryableFailure(
                state.next_stage() or "integrity",
                "harness_python_changed",
                f"{len(hooks)} interpreter startup hooks were written into the harness's Python while the agent ran "
                f"({', '.join(hooks[:3])}): every check and the evaluation would run them. Remove them, or run the "
                "campaign with a sandbox that keeps the agent out of the installation (sandbox: bwrap)",
                retryable=False,
            )
        if bytecode:
            prefix = tempfile.mkdtemp(prefix="ptbench-pyc-")
            atexit.register(shutil.rmtree, prefix, True)
            os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = prefix
            self.trial.event("bytecode_not_trusted", files=len(bytecode), first=bytecode[:5], pycache_prefix=prefix)

    def _integrity(self, state: TrialState) -> None:
        self._guard_python(state)
        # A check that runs after evaluation (memorization: evaluation scores final_model's side of it in
        # the engine it already holds, integrity/memorization/final_scores.py) is left out here.
        skip = self._after_eval(state)
        verdicts = run_checks(self.trial.path, self.spec, skip=skip)
        self._mark(state, "integrity", overall(verdicts), **verdicts)

    def _after_eval(self, state: TrialState) -> tuple[str, ...]:
        """The configured checks that run after evaluation (none when there is no model to evaluate).
        A check the campaign alone shows has no method for the task (memorization on a test split
        configured too small) is not deferred: it runs with the others, its verdict the same
        `not_applicable`, and evaluation starts no second check process for it."""
        if not state.stages["collect"].detail.get("found"):
            return ()
        return tuple(
            n
            for n in self.spec.integrity.checks
            if n in CHECKS and CHECKS.get(n).runs_after_evaluation and not self._not_applicable(n)
        )

    def _not_applicable(self, check: str) -> bool:
        task = self.spec.task
        try:
            return not_applicable_reason(check, task.name, dict(task.options)) is not None
        except Exception:  # noqa: BLE001  (a task not to be looked up here: the check runs after evaluation)
            return False

    def _evaluate(self, state: TrialState) -> None:
        if not state.stages["collect"].detail.get("found"):
            self._mark(state, "evaluate", "skipped")
            return
        self._guard_python(state)
        ev = self.spec.evaluation
        deferred = bool(self._after_eval(state))
        secret = new_secret()  # the siblings' secret of this run where the campaign has no cache (sandbox: none)
        context = (
            {**check_context(self.trial.path, spec=self.spec).to_json(), "memorization_secret": secret}
            if deferred
            else None
        )
        (self.trial.eval_dir / FINAL_SCORES_FILE).unlink(missing_ok=True)  # only this run's evaluation writes it
        argv = evaluation_argv(self.trial, sys.executable, memorization_context=context)
        self.trial.event("evaluating", engine=ev.engine)
        allowance = self.spec.budget.eval_minutes * 60 or None
        rc, tail = self._run_child(argv, self.trial.eval_dir / "eval.log", timeout=allowance)
        if deferred:  # its verdict joins the integrity stage's, whatever evaluation's outcome
            env = {SECRET_ENV: str(secret)}
            verdicts = run_checks(self.trial.path, self.spec, env=env, resume=("memorization",))
            self._mark(state, "integrity", overall(verdicts), **verdicts)
        self._mark(state, "evaluate", "ok" if rc == 0 else "failed", exit_code=rc, log_tail=tail if rc else "")

    def _record(self, state: TrialState) -> None:
        self._finish(state, record.build(self.trial, state))

    # ---- helpers ------------------------------------------------------------------------
    def _mark(self, state: TrialState, stage: str, outcome: str, **detail: Any) -> None:
        state.stages[stage] = StageMark(done_at=time.time(), outcome=outcome, detail=detail)
        self.trial.save_state(state)
        self.trial.event("stage_done", stage=stage, outcome=outcome)
        _say(f"{self.trial.id}: {stage} {outcome}")

    def _end_attempt(self, state: TrialState, outcome: str) -> None:
        if state.attempts and state.attempts[-1].ended_at is None:
            state.attempts[-1].ended_at = time.time()
            state.attempts[-1].outcome = outcome
        self.trial.save_state(state)

    def _run_child(self, argv: list[str], log_path, *, timeout: float | None = None) -> tuple[int, str]:
        env = evaluation_env(self.trial, dict(os.environ))  # only what evaluation needs, no other key
        deadline = time.monotonic() + timeout if timeout else None
        pump = RedactingPump(log_path, harness_redactor())  # eval.log is redacted like the agent's log
        with pump.joined(), open(log_path, "ab") as log:
            self.child = child = subprocess.Popen(
                argv, stdout=pump.write_fd, stderr=pump.write_fd, start_new_session=True, env=env
            )
            pump.close_writer()
            rc = None
            while rc is None:
                try:
                    rc = child.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    if self.stop_signal:  # stop the child, then honour the stop at the stage boundary
                        self._stop_child()
                        self.child = None
                        self._check_stop()
                    if deadline is not None and time.monotonic() > deadline:
                        self._stop_child()
                        log.write(
                            f"\nptbench: stopped after the {timeout:.0f} s allowance (budget.eval_minutes)\n".encode()
                        )
                        rc = 124
        self.child = None
        tail = log_path.read_bytes()[-2000:].decode(errors="replace")
        return rc, tail

    def _stop_child(self) -> None:
        if self.child is not None:
            stop_group(self.child, grace_s=30)
        terminate_descendants(self.spec.budget.grace_seconds)

    def _on_signal(self, signum: int, _frame) -> None:
        """Only flags: the watch loop stops the agent and persists its time; stages check the flag."""
        self.stop_signal = self.stop_signal or signal.Signals(signum).name
        if self.watchdog is not None:
            self.watchdog.interrupt(self.stop_signal)


def _say(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)


def _escaping_link(model_dir) -> str | None:
    """The first path in final_model/ that resolves outside the workspace, if any."""
    root = model_dir.parent.resolve()
    for path in (
        [model_dir, *model_dir.rglob("*")] if model_dir.is_dir() and not model_dir.is_symlink() else [model_dir]
    ):
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            return f"{path.name} -> {path.resolve()}"
    return None


def run_trial(path: str) -> int:
    trial = TrialDir(path)
    if not trial.path.is_dir():
        raise UserError(f"{path}: no such trial directory")
    _ = trial.spec  # validates trial.json
    return Runner(trial).run()
