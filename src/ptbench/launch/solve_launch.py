"""Where one agent run happens, whoever starts it: the solve stage (runner/agent_solve.py) and the
integrity judge (integrity/judge.py), which is an agent CLI too and reads agent-written text.

Both resolve the sandbox, start the trial's gateway (the only holder of the real key: the CLI gets
a trial token) and wrap the CLI's command in the sandbox from one `SandboxRequest` (`SolveLaunch`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ptbench.agents.agent_run import AgentRun
from ptbench.agents.launcher import Launch
from ptbench.agents.spec import agent_folder
from ptbench.launch.trial_gateway import TrialGateway
from ptbench.sandbox import SandboxCommand, SandboxRequest, build_command
from ptbench.trial import TrialDir

# Where the agent's /tmp and /dev/shm live in the trial directory under bwrap (the run journal names them too).
SANDBOX_TMP, SANDBOX_SHM = "sandbox/tmp", "sandbox/shm"


def sandbox_dirs(trial: TrialDir) -> list[Path]:
    """The folders bound at /tmp and /dev/shm inside bwrap (made here so they exist before the journal watches them)."""
    out = [trial.path / SANDBOX_TMP, trial.path / SANDBOX_SHM]
    for d in out:
        d.mkdir(parents=True, exist_ok=True)
        d.chmod(0o700)  # the agent's own, like its HOME (not a shared /tmp other users could write)
    return out


class CacheView(Protocol):
    """The HF cache as the runner prepared it (runner/cache_layer.py's CacheLayer)."""

    shared: Path
    binds: list[tuple[Path, Path, str]]

    def to_json(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class SolveLaunch:
    """Where every run of one solve stage (or one judge) happens, resolved once: the sandbox (`auto`
    made concrete), the agent's network, its view of the HF cache, the trial's gateway and the file
    journal (the runner's RunJournal, held here for the stage and never read in this package).

    `agents.launcher.Launch` is one run's command and environment; this is what all runs share."""

    sandbox: str  # bwrap | apptainer | none: never `auto`
    network: str  # gateway | host
    base_url: str  # where the agent's model calls go: the gateway's, the rehearsal provider's, or ""
    scratch: Path  # the folder holding the agent's private /tmp and /dev/shm (made before the journal watches them)
    cache: CacheView | None = None
    gateway: TrialGateway | None = None
    journal: Any = None

    def request(self, run: AgentRun, launch: Launch) -> SandboxRequest:
        """What the agent may read and write, whichever sandbox enforces it."""
        import ptbench
        from ptbench.sandbox.bwrap import python_paths

        trial, spec = run.trial, run.spec
        read_only = [*python_paths(), Path(ptbench.__file__).resolve().parents[1]]
        read_only += [Path(p) for p in launch.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        exe = run.executable
        argv = list(launch.argv)
        if exe and spec.venv:  # a venv's program runs by its path inside the venv (its python finds the venv so)
            root = Path(os.path.realpath(Path(exe).parent.parent))
            read_only.append(root)
            argv = [str(root / "bin" / Path(exe).name) if a == exe else a for a in argv]
        elif exe:
            real = Path(os.path.realpath(exe))
            modules = next((p for p in real.parents if p.name == "node_modules"), real.parent)
            read_only.append(modules)
            # Only resolved paths are mounted: a CLI found through a symlinked prefix runs by its real path.
            argv = [str(real) if a == exe else a for a in argv]
        # The agent's own folder (helper scripts beside agent.yaml, `{{ agent_dir }}`), read-only.
        read_only.append(agent_folder(spec.name))
        base = trial.spec.base_model.path
        if base:
            read_only.append(Path(base))
        # The task's local data, which the agent's own evaluate.sh reads (viewing test questions is
        # allowed; training on them is what the contamination check catches).
        data = trial.spec.task.options.get("data_path")
        if data and Path(data).exists():
            read_only.append(Path(data).resolve())
        req = SandboxRequest(
            argv=argv,
            env=launch.env,
            workspace=trial.workspace,
            home=trial.home,
            read_only=read_only,
            gpus=trial.spec.budget.gpus,
            options=dict(trial.spec.sandbox_options),
            scratch=self.scratch,
        )
        cache, gateway = self.cache, self.gateway
        if cache is not None:  # the HF cache as the runner prepared it: a copy-on-write layer, or read-only
            req.binds = list(cache.binds)
            if not (os.environ.get("HF_HOME") or os.environ.get("HF_HUB_CACHE")):  # the default cache: say where
                launch.env.setdefault("HF_HOME", str(cache.shared))
        if self.network == "gateway" and gateway is not None:
            req.network, req.gateway_socket, req.gateway_port = "gateway", gateway.socket_path, gateway.port
            # No route but the gateway: the HF libraries must use the cache at once instead of timing out on the hub.
            for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
                launch.env[name] = "1"
        return req

    def command(self, run: AgentRun, launch: Launch) -> SandboxCommand:
        """One run's command, wrapped in the stage's sandbox."""
        request = self.request(run, launch)
        return build_command(self.sandbox, request)

    def record(self) -> dict[str, Any]:
        """The facts agent/launch.json keeps of the stage (the result reads them back through `launch_fact`)."""
        return {
            "sandbox": self.sandbox,
            "network": self.network,
            "hf_cache": self.cache.to_json() if self.cache else None,
            "journal": self.journal is not None,
        }
