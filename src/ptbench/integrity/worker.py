"""One check in its own process: `python -m ptbench.integrity.worker CHECK CONTEXT_JSON OUT_JSON`.

The runner gives each check a process so a hung or crashing check is killed at its time limit and
becomes `unchecked` without taking the runner with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import ValidationError

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_text
from ptbench.integrity.checks import CHECKS, settings_for
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Finding, NotApplicable, Unchecked


def run_check(name: str, ctx: CheckContext) -> Finding:
    """The registered check `name` with the campaign's settings for it. `validate` checked both where
    the campaign was submitted; here (a node without the plugin package, a trial.json from another
    version) either failing is `unchecked`, with the reason."""
    try:
        cls = CHECKS.get(name)
        check = cls(settings_for(cls, ctx.config))
    except UserError as exc:
        return Finding(verdict="unchecked", reason=f"cannot be loaded where the check runs: {exc}")
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return Finding(verdict="unchecked", reason=f"integrity.{name} settings invalid: {problems}")
    try:
        return check.check(ctx)
    except Unchecked as exc:
        return Finding(verdict="unchecked", reason=str(exc))
    except NotApplicable as exc:
        return Finding(verdict="not_applicable", reason=str(exc))


def main(argv: list[str]) -> int:
    from ptbench.trial import TrialDir

    name, ctx_file, out = argv
    raw = json.loads(Path(ctx_file).read_text())
    trial = TrialDir(raw["trial_dir"])
    ctx = CheckContext(
        trial_dir=trial.path,
        spec=trial.spec,
        cache_dirs=[Path(p) for p in raw["cache_dirs"]],
        since=raw["since"],
        layer_dirs=[Path(p) for p in raw.get("layer_dirs", [])],
    )
    finding = run_check(name, ctx)
    atomic_write_text(out, finding.model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
