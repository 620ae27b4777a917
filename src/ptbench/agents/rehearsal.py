"""Rehearsals: every real model provider swapped for the scripted one.

`ptbench run|submit CAMPAIGN --rehearse` plans `<campaign>-rehearsal`, whose agents carry the
option `rehearsal: true` (or `{script: FILE}`). For such a trial the runner starts the scripted
provider in its own process for the solve stage, points the CLI's base URL at it and gives it a
dummy key: the real CLI, sandbox, scheduler, training and evaluation run; no API is called and no
real key is read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jinja2

from ptbench.core.errors import UserError
from ptbench.spec.campaign import REHEARSAL_SUFFIX, Campaign
from ptbench.trial import TrialDir


def rehearsal_options(trial: TrialDir) -> dict[str, Any] | None:
    """The trial's rehearsal settings, or None for a real run."""
    value = trial.spec.agent.options.get("rehearsal")
    if not value:
        return None
    return value if isinstance(value, dict) else {}


def rehearsal_campaign(campaign: Campaign, script: str | None = None) -> Campaign:
    """The same campaign under `<name>-rehearsal`, every LLM agent marked for the scripted provider."""
    from ptbench.agents.spec import load_agent

    setting: Any = {"script": str(Path(script).resolve())} if script else True
    agents = []
    for a in campaign.agents:
        if load_agent(a.name).uses_prompt:
            a = a.model_copy(update={"options": {**a.options, "rehearsal": setting}})
        agents.append(a)
    return campaign.model_copy(update={"name": campaign.name + REHEARSAL_SUFFIX, "agents": agents})


def render_script(trial: TrialDir, options: dict[str, Any]):
    """The script to play: the user's file or the built-in one, rendered with the trial's values."""
    from ptbench.testing.script import Script, load_script

    spec = trial.spec
    ctx = {
        "python": sys.executable,
        "base_model": spec.base_model.path or spec.base_model.id,
        "workspace": str(trial.workspace),
        "steps": int(options.get("steps", 3)),
        "task": spec.task.name,
    }
    if options.get("script"):
        path = Path(options["script"])
        if not path.is_file():
            raise UserError(f"rehearsal script {path} does not exist (pass an existing YAML file to --rehearse-script)")
        text = path.read_text()
    else:
        env = jinja2.Environment(loader=jinja2.PackageLoader("ptbench.agents", "templates"))
        text = env.get_template("rehearsal_script.yaml.j2").render(ctx)
        return Script.model_validate(_yaml(text))
    rendered = trial.agent_dir / "rehearsal_script.yaml"
    rendered.write_text(jinja2.Template(text).render(ctx))
    return load_script(rendered)


def _yaml(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


@contextmanager
def rehearsal_provider(trial: TrialDir, options: dict[str, Any]) -> Iterator[str]:
    """The scripted provider on a free local port for the solve stage; yields its base URL."""
    from ptbench.testing.server import provider_in_thread

    script = render_script(trial, options)
    with provider_in_thread(script, record_path=trial.agent_dir / "provider-requests.jsonl") as provider:
        trial.event("rehearsal_provider", base_url=provider.base_url, turns=len(script.turns))
        yield provider.base_url
