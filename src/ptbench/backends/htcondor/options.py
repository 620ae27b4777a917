"""The `backend.options` of an HTCondor campaign, checked before anything is written or submitted.

Every value that ends up in a submit description passes through here, so a typo, a memory value
HTCondor would refuse, an unknown GPU type or a secret is one clear error naming the option.
"""

from __future__ import annotations

import re
import sys
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from ptbench.core.errors import UserError
from ptbench.core.secrets import SECRET_NAME
from ptbench.core.validation import option_problem
from ptbench.spec.campaign import Strict

# GPU types a campaign may name in `budget.gpu_type` (case and punctuation do not matter) ->
# the CUDADeviceName values condor_gpu_discovery reports for them, compute capability, memory in MB.
GPU_TYPES: dict[str, tuple[tuple[str, ...], float, int]] = {
    "H100": (("NVIDIA H100 80GB HBM3",), 9.0, 80000),
    "H100-PCIE": (("NVIDIA H100 PCIe",), 9.0, 80000),
    "H100-NVL": (("NVIDIA H100 NVL",), 9.0, 94000),
    "H200": (("NVIDIA H200",), 9.0, 140000),
    "H200-NVL": (("NVIDIA H200 NVL",), 9.0, 140000),
    "GH200": (("NVIDIA GH200 480GB", "NVIDIA GH200 120GB"), 9.0, 95000),
    "B200": (("NVIDIA B200",), 10.0, 180000),
    "A100": (
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"),
        8.0,
        40000,
    ),
    "A100-80GB": (("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"), 8.0, 80000),
    "A100-40GB": (("NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"), 8.0, 40000),
    "L40S": (("NVIDIA L40S",), 8.9, 45000),
    "L40": (("NVIDIA L40",), 8.9, 45000),
    "A40": (("NVIDIA A40",), 8.6, 45000),
    "RTX6000-ADA": (("NVIDIA RTX 6000 Ada Generation",), 8.9, 48000),
    "V100": (
        ("Tesla V100-SXM2-32GB", "Tesla V100-PCIE-32GB", "Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB"),
        7.0,
        16000,
    ),
}

# API providers an agent's key names point to; one concurrency limit per provider.
KEY_PROVIDERS = {
    "ANTHROPIC_API_KEY": "anthropic",
    "CLAUDE_CODE_OAUTH_TOKEN": "anthropic",
    "OPENAI_API_KEY": "openai",
    "CODEX_API_KEY": "openai",
    "GEMINI_API_KEY": "google",
    "GOOGLE_API_KEY": "google",
    "OPENROUTER_API_KEY": "openrouter",
}
AGENT_PROVIDERS = {"claude-code": "anthropic", "codex": "openai", "gemini-cli": "google"}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT])B?\s*$", re.I)
_LIMIT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(:\d+(\.\d+)?)?$")
_SUBMIT_KEY = re.compile(r"^(\+|My\.)?[A-Za-z_][A-Za-z0-9_.]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLAIN_TEXT = re.compile(r"^[^\n\r\"']*$")

# Submit commands the template writes itself; site lines may not redefine them (set the option instead).
GENERATED_COMMANDS = {
    "universe",
    "executable",
    "transfer_executable",
    "arguments",
    "initialdir",
    "environment",
    "getenv",
    "should_transfer_files",
    "batch_name",
    "log",
    "output",
    "error",
    "request_gpus",
    "request_cpus",
    "request_memory",
    "request_disk",
    "requirements",
    "require_gpus",
    "container_image",
    "should_transfer_container",
    "transfer_container",
    "allowed_job_duration",
    "kill_sig",
    "job_max_vacate_time",
    "max_retries",
    "retry_until",
    "concurrency_limits",
    "accounting_group",
    "accounting_group_user",
    "submit_event_notes",
    "periodic_remove",
    "queue",
}


def gpu_type_key(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().upper())


def lookup_gpu_type(name: str) -> tuple[tuple[str, ...], float, int]:
    key = gpu_type_key(name)
    if key not in GPU_TYPES:
        raise UserError(
            f"budget.gpu_type '{name}': unknown GPU type for HTCondor (known: {', '.join(GPU_TYPES)}); "
            "or set backend.options.gpu_device_names / require_gpus yourself"
        )
    return GPU_TYPES[key]


def check_size(value: str, what: str) -> str:
    m = _SIZE.fullmatch(str(value))
    if not m or float(m.group(1)) <= 0:
        raise ValueError(
            f"'{value}' is not a size HTCondor accepts for {what}: write a positive number with a unit, "
            "e.g. 128GB, 400G, 512MB (HTCondor reads GB as GiB; no 'GiB', and a bare number means MB/KB)"
        )
    return f"{m.group(1)}{m.group(2).upper()}B"


class HTCondorOptions(Strict):
    """`backend: {name: htcondor, options: {...}}` in a campaign file."""

    python: str | None = Field(
        default=None,
        description="python on the execute node (default: the submitting python; /usr/bin/python3 in a container)",
    )
    venv: str | None = Field(
        default=None, description="virtual environment on a shared filesystem: its bin/python runs the trial"
    )
    initialdir: str | None = Field(
        default=None, description="job working directory; the runner reads a .env there (default: the submit directory)"
    )
    universe: Literal["vanilla", "container"] = "vanilla"
    container_image: str | None = Field(default=None, description="Apptainer .sif (or docker://...) the runner runs in")
    transfer_container: bool = Field(
        default=False,
        description="false: the image is on a shared filesystem (transfer_container = false; HTCondor 24 names it so)",
    )
    request_cpus: int = Field(default=16, ge=1)
    request_memory: str = "128GB"
    request_disk: str = "400GB"
    gpu_match: Literal["device_name", "capability"] = Field(
        default="device_name", description="GPU by CUDADeviceName, or by require_gpus capability+memory"
    )
    gpu_device_names: list[str] | None = Field(
        default=None, description="CUDADeviceName values to accept (overrides the GPU type table)"
    )
    require_gpus: str | None = Field(default=None, description="raw require_gpus expression (overrides gpu_match)")
    requirements: str | None = Field(
        default=None, description="extra requirements expression, ANDed with the GPU clause"
    )
    accounting_group: str | None = None
    accounting_group_user: str | None = None
    api_limits: bool = Field(
        default=True, description="one concurrency limit per API provider (the pool sets <NAME>_LIMIT)"
    )
    api_limit_names: dict[str, str] = Field(
        default_factory=dict, description="provider -> limit (NAME or NAME:units); default ptbench_<provider>"
    )
    providers: dict[str, str] = Field(
        default_factory=dict, description="agent name -> API provider, where it cannot be derived"
    )
    max_retries: int | None = Field(
        default=None,
        ge=0,
        description="default: the campaign's max_requeues + 1, so the runner records a give-up itself",
    )
    kill_sig: str = "SIGTERM"
    job_max_vacate_time: int | None = Field(
        default=None, ge=1, description="seconds between kill_sig and SIGKILL (default: grace + 120)"
    )
    remove_on_duration_hold: bool = Field(
        default=True, description="remove a job held for its duration limit (its trial is recorded timed_out)"
    )
    environment: dict[str, str] = Field(default_factory=dict, description="extra non-secret environment for the runner")
    submit_lines: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="site-specific submit commands passed through (e.g. +ProjectName)"
    )
    submit_with: Literal["auto", "bindings", "condor_submit"] = Field(
        default="auto", description="htcondor2 Schedd when reachable, else condor_submit"
    )

    @field_validator("request_memory")
    @classmethod
    def _memory(cls, v: str) -> str:
        return check_size(v, "request_memory")

    @field_validator("request_disk")
    @classmethod
    def _disk(cls, v: str) -> str:
        return check_size(v, "request_disk")

    @field_validator("kill_sig")
    @classmethod
    def _signal(cls, v: str) -> str:
        import signal

        name = v.upper() if v.upper().startswith("SIG") else f"SIG{v.upper()}"
        if name not in signal.Signals.__members__:
            raise ValueError(f"'{v}' is not a signal name (use SIGTERM, SIGUSR1, ...)")
        return name

    @field_validator("api_limit_names")
    @classmethod
    def _limits(cls, v: dict[str, str]) -> dict[str, str]:
        for provider, limit in v.items():
            if not _LIMIT.fullmatch(limit):
                raise ValueError(
                    f"{provider}: '{limit}' is not a concurrency limit (NAME or NAME:units, letters, digits, '_', '.')"
                )
        return v

    @field_validator("environment")
    @classmethod
    def _env(cls, v: dict[str, str]) -> dict[str, str]:
        for name, value in v.items():
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"'{name}' is not an environment variable name")
            if SECRET_NAME.search(name):
                raise ValueError(
                    f"{name}: secrets never go into a submit file; the runner reads keys on the node from its "
                    "environment or .env"
                )
            if not _PLAIN_TEXT.fullmatch(str(value)):
                raise ValueError(f"{name}: quotes and newlines cannot be passed through HTCondor's environment")
        return v

    @field_validator("submit_lines")
    @classmethod
    def _lines(cls, v: dict) -> dict:
        for key, value in v.items():
            if not _SUBMIT_KEY.fullmatch(key):
                raise ValueError(f"'{key}' is not a submit command name")
            if key.lower() in GENERATED_COMMANDS:
                raise ValueError(f"'{key}' is written by ptbench; set it through its own option instead")
            if "\n" in str(value) or "\r" in str(value):
                raise ValueError(f"{key}: a value must be one line")
            if SECRET_NAME.search(key):
                raise ValueError(f"{key}: secrets never go into a submit file")
        return v

    @field_validator(
        "python",
        "venv",
        "initialdir",
        "container_image",
        "accounting_group",
        "accounting_group_user",
        "requirements",
        "require_gpus",
    )
    @classmethod
    def _one_line(cls, v: str | None) -> str | None:
        if v is not None and ("\n" in v or "\r" in v):
            raise ValueError("must be one line")
        return v

    @field_validator("python", "venv", "initialdir")
    @classmethod
    def _no_quotes(cls, v: str | None) -> str | None:
        if v is not None and not _PLAIN_TEXT.fullmatch(v):
            raise ValueError("quotes cannot appear in a path HTCondor passes to the runner")
        return v

    @model_validator(mode="after")
    def _python_xor_venv(self) -> HTCondorOptions:
        if self.python and self.venv:
            raise ValueError("set python or venv, not both")
        if self.transfer_container and self.container_image and "://" not in self.container_image:
            raise ValueError(
                "transfer_container: true needs HTCondor file transfer, but ptbench jobs work on a shared "
                "filesystem (should_transfer_files = NO); put the image there and set transfer_container: false"
            )
        return self

    def python_on_node(self) -> str:
        if self.python:
            return self.python
        if self.venv:
            return f"{self.venv.rstrip('/')}/bin/python"
        return "/usr/bin/python3" if self.container_image else sys.executable


def parse_options(options: dict | None) -> HTCondorOptions:
    """Validate `backend.options`; a problem names the option (validate adds file:line)."""
    try:
        return HTCondorOptions(**(options or {}))
    except ValidationError as exc:
        raise option_problem(exc, HTCondorOptions, "an HTCondor option") from None
