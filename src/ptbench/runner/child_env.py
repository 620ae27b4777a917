"""What the harness's own children get: the evaluation child's scrubbed environment and redacted log.

The evaluation (`ptbench eval` on the agent's model) runs code the agent influenced (its model's
config, tokenizer files, custom code it may have saved), so it gets only the variables evaluation
needs: the locale and paths, the Hugging Face / CUDA / torch / vLLM settings, PTBENCH_* settings,
and the judge's key for a judged task. Every other key the job inherited stays out. Its output
reaches eval/eval.log through the same redaction as the agent's.
"""

from __future__ import annotations

import re

from ptbench.agents.launcher import PASSTHROUGH_ENV, read_secrets
from ptbench.agents.redact import Redactor
from ptbench.core.jobenv import TRIAL_ENV_MARKER
from ptbench.core.secrets import secret_env_values
from ptbench.inference.judge import JUDGE_GATEWAY_ENV, JUDGE_TOKEN_ENV
from ptbench.trial import TrialDir

_EVAL_PREFIXES = re.compile(
    r"^(HF_|HUGGING_FACE_|TRANSFORMERS_|TOKENIZERS_|VLLM_|CUDA_|NCCL_|TORCH|TRITON_|PYTORCH_|XDG_|PYTHON|PTBENCH_)"
)
_NEVER = {JUDGE_GATEWAY_ENV, JUDGE_TOKEN_ENV}


def evaluation_env(trial: TrialDir, environ: dict[str, str]) -> dict[str, str]:
    """The evaluation child's environment, from the runner's `environ`."""
    env = {k: v for k, v in environ.items() if (k in PASSTHROUGH_ENV or _EVAL_PREFIXES.match(k)) and k not in _NEVER}
    for k in ("HOME", "TMPDIR"):
        if k in environ:
            env[k] = environ[k]
    judge_key = _judge_key_env(trial)
    if judge_key:
        env.update(read_secrets([judge_key]))
    env[TRIAL_ENV_MARKER] = str(trial.path)  # found again after a kill -9
    return env


def _judge_key_env(trial: TrialDir) -> str | None:
    from ptbench.tasks import (
        get_task,  # heavy (datasets): only when an evaluation starts
    )
    from ptbench.tasks._judged import JudgedTask

    try:
        task = get_task(trial.spec.task.name, **trial.spec.task.options)
    except Exception:  # the evaluation child reports a bad task itself, with its own message
        return None
    return task.judge_config.api_key_env if isinstance(task, JudgedTask) else None


def harness_redactor() -> Redactor:
    """Every secret value this process knows of (its environment's, and those it removed from it)."""
    return Redactor(secret_env_values())
