"""Where a backend is chosen by name: one `core.registry.Registry` of backend classes.

A backend registers itself where it is defined (`@BACKENDS.register("slurm")` on its class) and
carries its own facts: `name`, `options_model` (its `backend.options`), `extra` (the pip extra its
client needs), `job_identity(environ)` (its job id, read from a job's environment) and
`preflight()` (what `ptbench doctor` reports about its scheduler and client). Nothing else names a
backend: `validate` checks a campaign's backend name against this registry (did-you-mean),
`doctor` asks `preflight()`, and `core.jobenv` asks the job identity readers registered here. A
site's scheduler lives in its own package (an entry point in `ptbench.plugins`: docs/guides/
add-a-scheduler.md). Built-in implementations import no scheduler bindings until used.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from ptbench.backends.base import Backend
from ptbench.core.errors import UserError
from ptbench.core.jobenv import register_job_reader
from ptbench.core.registry import Registry
from ptbench.core.validation import unknown_name

# What every backend class carries besides the Backend protocol's methods.
FACTS = ("name", "options_model", "extra", "job_identity", "preflight")


def _check_facts(name: str, cls: Any) -> None:
    """A backend class that lacks one of its facts is the plugin author's mistake: said at import, not
    at the first `ptbench submit` on the cluster."""
    missing = [f for f in FACTS if not hasattr(cls, f)]
    if missing:
        raise TypeError(f"backend '{name}' ({cls.__module__}.{cls.__qualname__}) lacks {', '.join(missing)}")
    if cls.name != name:
        raise TypeError(f"backend class {cls.__qualname__} is named '{cls.name}' but registered as '{name}'")
    register_job_reader(name, cls.job_identity)


def _load_builtin() -> None:
    """Each subpackage of ptbench.backends is one backend (local/, slurm/, htcondor/): a new one is a
    new package there, no list to edit. Their scheduler bindings load only when used."""
    import ptbench.backends

    for found in pkgutil.iter_modules(ptbench.backends.__path__):
        if found.ispkg:
            importlib.import_module(f"ptbench.backends.{found.name}")


BACKENDS: Registry[type[Backend]] = Registry(
    "backend",
    load=_load_builtin,
    on_register=_check_facts,
    hint="see docs/guides/add-a-scheduler.md to add one",
)


def load_job_readers() -> None:
    """Register every backend's job identity reader (core/jobenv.py) in this process: what a process
    that records its job (a trial's runner, a tool-server replica) calls first."""
    BACKENDS.names()


def get_backend(name: str, options: dict[str, Any] | None = None) -> Backend:
    """Backend `name` with its `backend.options` (OptionProblem when they are not its options)."""
    return BACKENDS.get(name)(**(options or {}))


def check_backend_name(name: str, where: str) -> None:
    """A backend named on the command line (`--backend`): one line, exit 2, when it is not registered."""
    problem = unknown_name("backend", name, BACKENDS.names())
    if problem is not None:
        raise UserError(f"{where}: {problem}")
