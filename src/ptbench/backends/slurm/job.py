"""What one Slurm array task runs: `ptbench trial run DIR`, as a child of submitit's job process.

submitit pickles a `TrialJob` per array task and calls it on the node. The runner does the
checkpointing, so submitit's own signal handling is switched off here: submitit would requeue on
USR2 by guessing whether the job timed out, while the runner already knows — it stops the agent,
persists the time used, and either exits 75 (preempted / `scontrol requeue`: Slurm starts the job
again and the runner resumes with the budget that is left) or, at the job's time limit, records a
`scheduler_time_limit` result.

Slurm signals every process of the job step itself (SIGTERM on cancel, requeue and preemption,
`--signal` before the limit), so a signal is forwarded only when it came before the runner existed.
The runner starts with the stop signals blocked: one that comes while it is still importing waits,
pending, until its handlers are in place (Slurm sends `--signal` up to a minute early, so on a short
job it can come in the first second), instead of killing it by the default action with nothing recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

# A stop signal this close to the job's time limit (or later) means the limit, not a preemption.
# Covers the signal lead plus the seconds between the job's start and this wrapper's start.
_LIMIT_SLACK_S = 30
_STOP_SIGNALS = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class TrialJob:
    """Picklable callable: `TrialJob(time_limit_s, signal_lead_s, python)(trial_dir)`."""

    def __init__(self, time_limit_s: int, signal_lead_s: int, python: str | None = None) -> None:
        self.time_limit_s = time_limit_s
        self.signal_lead_s = signal_lead_s
        self.python = python

    def __call__(self, trial_dir: str) -> int:
        started = time.time()
        received: list[int] = []

        def on_signal(signum: int, _frame) -> None:
            received.append(signum)
            print(f"ptbench: job got {signal.Signals(signum).name}; waiting for the runner to checkpoint", flush=True)

        for sig in _STOP_SIGNALS:
            signal.signal(sig, on_signal)
        env = dict(os.environ, PTBENCH_BACKEND="slurm")
        slack = min(_LIMIT_SLACK_S, self.time_limit_s // 10)
        env["PTBENCH_TIME_LIMIT_AT"] = f"{started + self.time_limit_s - self.signal_lead_s - slack:.0f}"
        # `--signal` sends it only before the limit, and up to a minute early (Slurm's event resolution)
        env["PTBENCH_TIME_LIMIT_SIGNAL"] = "SIG" + os.environ.get("SUBMITIT_PREEMPT_SIGNAL", "USR2")
        if "OMP_NUM_THREADS" not in env and env.get("SLURM_CPUS_PER_TASK"):
            env["OMP_NUM_THREADS"] = env["SLURM_CPUS_PER_TASK"]
        restarts = env.get("SLURM_RESTART_COUNT", "0")
        job = "_".join(env[k] for k in ("SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID") if k in env) or env.get(
            "SLURM_JOB_ID", "?"
        )
        print(f"ptbench: {trial_dir} (job {job}, restart {restarts})", flush=True)
        argv = [self.python or sys.executable, "-m", "ptbench", "trial", "run", trial_dir]
        # Blocked across the fork, so the runner inherits them blocked (it unblocks them once its
        # handlers are in place); what came to this process before is handed on after.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            proc = subprocess.Popen(argv, env=env)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # pending ones run on_signal here
        for signum in dict.fromkeys(received):
            proc.send_signal(signum)
        rc = proc.wait()
        print(f"ptbench: runner exited {rc}", flush=True)
        if rc != 0:
            # The job ends FAILED in Slurm; the trial's own files say why (75: resumable).
            raise RuntimeError(
                f"`ptbench trial run {trial_dir}` exited {rc}"
                + (" (interrupted or retryable; resubmit to resume)" if rc == 75 else "")
            )
        return rc
