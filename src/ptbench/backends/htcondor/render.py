"""Submit descriptions from the Jinja templates in `backends/htcondor/templates/htcondor_*.sub.j2`.

`render_trials` makes one description per campaign: one cluster whose `queue ... from` table has a
row per trial (proc i = row i). `render_shards` makes the bootcamp rollout description,
`render_tool_servers` its tool-server replicas' (same executable, environment, container,
accounting and requirements). Every value
is checked before the text exists, and the text is scanned for secrets before anyone writes it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from ptbench.backends.htcondor.options import (
    AGENT_PROVIDERS,
    KEY_PROVIDERS,
    HTCondorOptions,
    check_size,
    lookup_gpu_type,
)
from ptbench.core.errors import UserError
from ptbench.core.secrets import SECRET_NAME, secret_env_values
from ptbench.spec.campaign import AgentRef, Campaign
from ptbench.trial import TrialSpec

TEMPLATES = Path(__file__).parent / "templates"
COLUMNS = ("trial_id", "agent", "base_model", "task", "seed", "api_limit")
# What a `queue ... from` item may hold: HTCondor splits items on commas *and* whitespace,
# expands $(...) and reads quotes, so anything else would silently shift or change columns.
_ITEM_OK = re.compile(r"^[A-Za-z0-9._/:@+=~-]*$")
_PATH_BAD = re.compile(r"[\"'\n\r]|\$\(")

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)


@dataclass
class Rendered:
    text: str
    columns: tuple[str, ...]
    rows: list[dict[str, str]]  # item data in proc order

    @property
    def trial_ids(self) -> list[str]:
        return [r["trial_id"] for r in self.rows]


def provider_of(agent: AgentRef, options: HTCondorOptions) -> str | None:
    """The API provider whose rate limit an agent's trials share; None for keyless agents."""
    if agent.name in options.providers:
        return options.providers[agent.name]
    if agent.model and "/" in agent.model:  # opencode-style provider/model
        return agent.model.split("/", 1)[0].lower()
    try:
        from ptbench.agents.spec import load_agent

        spec = load_agent(agent.name)
    except UserError:
        spec = None  # not registered (yet): fall back to the well-known names
    if spec is not None:
        for key in spec.keys:
            if key in KEY_PROVIDERS:
                return KEY_PROVIDERS[key]
        if not spec.keys:
            return None
    return AGENT_PROVIDERS.get(agent.name)


def _item(value: str, column: str, trial_id: str) -> str:
    if not _ITEM_OK.fullmatch(value):
        bad = next(c for c in value if not _ITEM_OK.fullmatch(c))
        what = {
            ",": "a comma",
            " ": "a space",
            "\n": "a newline",
            "\t": "a tab",
            '"': "a quote",
            "'": "a quote",
            "$": "a '$'",
        }.get(bad, f"'{bad}'")
        raise UserError(
            f"trial {trial_id}: {column} {value!r} contains {what}, which would break HTCondor's `queue from` table; "
            "rename it (or give the entry a label / a path without such characters)"
        )
    return value


def _path(value: str, what: str) -> str:
    if _PATH_BAD.search(value):
        raise UserError(
            f"{what} '{value}' contains a quote, newline or '$(' that HTCondor cannot pass through; use another path"
        )
    return value


def _gpu_lines(campaign: Campaign, opts: HTCondorOptions) -> tuple[str | None, str | None]:
    """(require_gpus, GPU requirements clause) for the campaign's GPU type."""
    b = campaign.budget
    if not b.gpus:
        return None, None
    if opts.require_gpus:
        return opts.require_gpus, None
    if opts.gpu_match == "device_name":
        names = opts.gpu_device_names or (lookup_gpu_type(b.gpu_type)[0] if b.gpu_type else None)
        if not names:
            return None, None
        for n in names:
            _path(n, "gpu_device_names entry")
        return None, "(" + " || ".join(f'TARGET.CUDADeviceName == "{n}"' for n in names) + ")"
    if not b.gpu_type:
        return None, None
    _, capability, memory = lookup_gpu_type(b.gpu_type)
    return f"Capability >= {capability} && GlobalMemoryMb >= {memory}", None


def _environment(extra: dict[str, str]) -> str:
    pairs = {"PTBENCH_BACKEND": "htcondor", "PTBENCH_JOB_ID": "$(Cluster).$(Process)", "PYTHONUNBUFFERED": "1", **extra}
    return " ".join(f"{k}='{v}'" if (" " in v or not v) else f"{k}={v}" for k, v in pairs.items())


def _common(opts: HTCondorOptions) -> dict:
    initialdir = _path(opts.initialdir or os.getcwd(), "initialdir")
    return dict(
        universe=opts.universe,
        python=_path(opts.python_on_node(), "python"),
        initialdir=initialdir,
        environment=_environment(opts.environment),
        container_image=opts.container_image,
        transfer_container=opts.transfer_container,
        accounting_group=opts.accounting_group,
        accounting_group_user=opts.accounting_group_user,
        submit_lines=[(k, _submit_value(v)) for k, v in opts.submit_lines.items()],
    )


def _submit_value(v) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def render_trials(campaign: Campaign, specs: list[TrialSpec], opts: HTCondorOptions, *, skipped: int = 0) -> Rendered:
    """The campaign's description with one `queue from` row per spec (in order)."""
    if not specs:
        raise UserError(f"campaign '{campaign.name}': no trials to put in an HTCondor description (all finished?)")
    cdir = _path(str(campaign.campaign_dir), "results directory")
    rows = []
    for s in specs:
        provider = provider_of(s.agent, opts) if opts.api_limits else None
        limit = (
            (opts.api_limit_names.get(provider) or f"ptbench_{re.sub(r'[^A-Za-z0-9_]', '_', provider)}")
            if provider
            else ""
        )
        values = {
            "trial_id": s.trial_id,
            "agent": s.agent.display,
            "base_model": s.base_model.path or s.base_model.id,
            "task": s.task.display,
            "seed": str(s.seed),
            "api_limit": limit,
        }
        rows.append({c: _item(values[c], c, s.trial_id) for c in COLUMNS})
    require_gpus, gpu_clause = _gpu_lines(campaign, opts)
    clauses = [c for c in (gpu_clause, f"({opts.requirements})" if opts.requirements else None) if c]
    b = campaign.budget
    ctx = dict(
        _common(opts),
        campaign=campaign.name,
        campaign_dir=cdir,
        log=f"{cdir}/condor/jobs.log",
        skipped=skipped,
        request_cpus=opts.request_cpus,
        request_memory=opts.request_memory,
        request_disk=opts.request_disk,
        request_gpus=b.gpus,
        require_gpus=require_gpus,
        requirements=" && ".join(clauses),
        budget_hours=f"{b.hours:g}",
        scheduler_minutes=b.scheduler_minutes,
        allowed_job_duration=b.scheduler_minutes * 60,
        remove_on_duration_hold=opts.remove_on_duration_hold,
        kill_sig=opts.kill_sig,
        job_max_vacate_time=opts.job_max_vacate_time or int(b.grace_seconds) + 120,
        max_retries=opts.max_retries if opts.max_retries is not None else campaign.max_requeues + 1,
        columns=COLUMNS,
        rows=[[r[c] for c in COLUMNS] for r in rows],
    )
    text = _ENV.get_template("htcondor_trials.sub.j2").render(ctx)
    check_no_secrets(text, ctx["initialdir"])
    return Rendered(text=text, columns=COLUMNS, rows=rows)


def render_shards(
    out: Path,
    shards: int,
    opts: HTCondorOptions | None = None,
    *,
    name: str = "rollout",
    request_cpus: int = 2,
    request_memory: str = "4GB",
    request_disk: str = "10GB",
    max_retries: int = 3,
) -> str:
    """The bootcamp rollout description: `queue N`, job $(Process) plays shard $(Process)/N."""
    return _render_rollout_jobs(
        "htcondor_shards.sub.j2", out, opts, name, request_cpus, request_memory, request_disk, max_retries,
        shards=int(shards),
    )  # fmt: skip


def render_tool_servers(
    out: Path,
    replicas: int,
    shards: int,
    opts: HTCondorOptions | None = None,
    *,
    name: str = "rollout",
    idle_exit_s: float = 3600.0,
    request_cpus: int = 2,
    request_memory: str = "4GB",
    request_disk: str = "10GB",
    max_retries: int = 3,
) -> str:
    """The replicas' description: `queue N`, job $(ProcId) serves as replica $(ProcId) until the `shards` finish."""
    return _render_rollout_jobs(
        "htcondor_tool_servers.sub.j2", out, opts, name, request_cpus, request_memory, request_disk, max_retries,
        replicas=int(replicas), shards=int(shards), idle_exit=f"{idle_exit_s:g}",
    )  # fmt: skip


def _render_rollout_jobs(
    template: str,
    out: Path,
    opts: HTCondorOptions | None,
    name: str,
    request_cpus: int,
    request_memory: str,
    request_disk: str,
    max_retries: int,
    **extra: object,
) -> str:
    """A rollout's HTCondor description (shards or tool-server replicas): the same resources, name and
    checks for both; `extra` holds what only one template reads."""
    opts = opts or HTCondorOptions()
    ctx = dict(
        _common(opts),
        out=_path(str(out), "rollout folder"),
        name=re.sub(r"[^A-Za-z0-9._-]", "-", name),
        request_cpus=request_cpus,
        request_memory=check_size(request_memory, "request_memory"),
        request_disk=check_size(request_disk, "request_disk"),
        requirements=opts.requirements,
        max_retries=max_retries,
        **extra,
    )
    text = _ENV.get_template(template).render(ctx)
    check_no_secrets(text, ctx["initialdir"])
    return text


def _secret_values(initialdir: str) -> dict[str, str]:
    found = secret_env_values()
    dotenv = Path(initialdir) / ".env"
    try:
        lines = dotenv.read_text().splitlines() if dotenv.is_file() else []
    except OSError:
        lines = []
    for line in lines:
        key, sep, val = line.strip().partition("=")
        val = val.strip().strip("'\"")
        key = key.removeprefix("export ").strip()
        if sep and SECRET_NAME.search(key) and len(val) >= 8:
            found.setdefault(key, val)
    return found


def check_no_secrets(text: str, initialdir: str) -> None:
    """Refuse a description that contains the value of any key in the environment or .env."""
    for name, value in _secret_values(initialdir).items():
        if value in text:
            raise UserError(
                f"the HTCondor description would contain the value of {name}; remove it from the campaign's backend "
                "options (keys are read on the execute node from its environment or .env, never from the submit file)"
            )
