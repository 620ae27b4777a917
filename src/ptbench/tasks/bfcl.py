"""BFCL exec_simple (Berkeley Function Calling Leaderboard): one function call, executed.

The model gets the user turn and the function schemas (as tools through its chat template; a
system message lists them where the template has no tool support) and answers with a call:
Hermes `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, a bare JSON object, or Python
syntax `name(arg=value)`. The call is rebuilt from its *parsed literal arguments* (never from the
model's text) and executed next to the ground-truth call in the code sandbox; the results must
match (`execution_result_type`: exact, or within 20% for real-time values, or same structure).

Functions run as their real implementations where the task option `functions_module` names a
Python file that defines them (e.g. BFCL's executable functions), otherwise as schema-checked
stubs that return their bound, type-checked arguments — then "same result" means "same function,
same argument values", BFCL's AST criterion, decided by execution.

Results count only when they arrive on the run's private report pipe with its per-run secret,
after both calls ran (codeexec.run_python(secret=...)); the program's stdout and exit status are
ignored, so a function that prints a fake result line cannot change the score. Without working
bubblewrap nothing is executed unless the option `allow_unisolated: true` is given.
"""

from __future__ import annotations

import ast
import hmac
import json
import re
import secrets
from pathlib import Path
from typing import Any

from ptbench.tasks._common import BenchmarkTask, DatasetPin, load_rows
from ptbench.tasks.base import Example, ScoredBatch, register_task

PIN = DatasetPin(
    id="gorilla-llm/Berkeley-Function-Calling-Leaderboard",
    split="train",
    revision=None,
    data_files="BFCL_v3_exec_simple.json",
)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}
_STUBS = Path(__file__).parent / "templates" / "bfcl_stubs.py.txt"


def to_openai_schema(schema: Any) -> Any:
    """BFCL's parameter types (dict, float, tuple, any) in JSON-Schema terms for chat templates."""
    if isinstance(schema, dict):
        out = {k: to_openai_schema(v) for k, v in schema.items()}
        if isinstance(out.get("type"), str):
            out["type"] = _TYPES.get(out["type"], out["type"])
        return out
    if isinstance(schema, list):
        return [to_openai_schema(v) for v in schema]
    return schema


def parse_call(text: str, names: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The first function call in a model's answer, as (name, literal arguments)."""
    for blob in _TOOL_CALL.findall(text):
        call = _call_from_json(blob)
        if call:
            return call
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text[match.start() :])
        except ValueError:
            continue
        call = _call_from_obj(obj)
        if call:
            return call
    for match in re.finditer(r"\b(" + "|".join(re.escape(n) for n in names) + r")\s*\(", text) if names else []:
        call = _call_from_python(text[match.start() :])
        if call:
            return call
    return None


def _call_from_json(blob: str) -> tuple[str, dict[str, Any]] | None:
    try:
        return _call_from_obj(json.loads(blob))
    except ValueError:
        return None


def _call_from_obj(obj: Any) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    return (obj["name"], args) if isinstance(args, dict) else None


def _call_from_python(text: str) -> tuple[str, dict[str, Any]] | None:
    depth, end = 0, None
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ")" and depth == 0:
            end = i + 1
            break
    if end is None:
        return None
    try:
        node = ast.parse(text[:end], mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return None
        return node.func.id, {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    except (SyntaxError, ValueError):
        return None


def call_source(name: str, args: dict[str, Any]) -> str | None:
    """Python source of a call rebuilt from literals (None if the name is not an identifier)."""
    if not name.isidentifier() or not all(isinstance(k, str) and k.isidentifier() for k in args):
        return None
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


def program_of(functions: list[dict], ground_truth: str, predicted: str | None, real_source: str = "") -> str:
    schemas = {f["name"]: f.get("parameters", {}) for f in functions}
    return (
        "\n".join(
            [
                _STUBS.read_text(),
                real_source,
                f"_install_stubs({schemas!r})",
                f"_report('gt', lambda: {ground_truth})",
                f"_report('pred', lambda: {predicted})" if predicted else "_report('pred', None)",
                "_finish()",
            ]
        )
        + "\n"
    )


def results_match(gt: Any, pred: Any, kind: str) -> bool:
    if kind == "real_time_match" and isinstance(gt, (int, float)) and isinstance(pred, (int, float)):
        return abs(gt - pred) <= 0.2 * abs(gt) if gt else pred == 0
    if kind == "structural_match":
        return type(gt) is type(pred) and (not isinstance(gt, (list, dict)) or len(gt) == len(pred))
    return gt == pred


@register_task("bfcl")
class BFCL(BenchmarkTask):
    primary_metric = "accuracy"
    token_phases = (16000, 12000, 8000)
    default_baseline = True
    eval_resources = (PIN.held_out(),)
    sibling_source = "ptbench.integrity.memorization.bfcl_siblings:siblings"
    agent_brief = (
        "BFCL (exec_simple): the model must answer with a correct function call (name and arguments) for "
        "a given function schema, in the Hermes tool-call format. The BFCL questions are the test data: "
        "use other function-calling datasets."
    )
    base_stop = ("\n",)

    def __init__(
        self,
        *,
        functions_module: str | None = None,
        timeout_s: float = 15.0,
        allow_unisolated: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.functions_module = functions_module
        self.timeout_s = timeout_s
        self.allow_unisolated = bool(allow_unisolated)

    def test_examples(self, limit: int | None = None) -> list[Example]:
        from ptbench.sandbox.codeexec import require_isolation

        require_isolation(self.allow_unisolated)  # refuse before generating, not after
        rows, self.dataset = load_rows("bfcl", PIN, self.data_path)
        rows = rows[:limit] if limit else rows
        out = []
        for r in rows:
            messages = list(r["question"][0])
            tools = [{"type": "function", "function": to_openai_schema(f)} for f in r["function"]]
            if self.prompt_format == "chat":
                prompt: Any = messages
            else:
                from ptbench.tasks._common import render_template

                prompt = render_template("bfcl_base.jinja", functions=json.dumps(r["function"]), messages=messages)
            kind = (r.get("execution_result_type") or ["exact_match"])[0]
            out.append(
                Example(
                    id=r["id"],
                    prompt=prompt,
                    reference=r["ground_truth"][0],
                    meta={"tools": tools, "functions": r["function"], "result_type": kind},
                )
            )
        return out

    def score(self, example: Example, completion: str) -> float:
        (score,) = self.score_batch([example], [completion]).scores
        assert score is not None  # an executed task scores every example (None is for failed judge calls)
        return score

    def score_batch(self, examples: list[Example], completions: list[str]) -> ScoredBatch:
        from ptbench.sandbox.codeexec import Limits, require_isolation, run_many

        real = Path(self.functions_module).read_text() if self.functions_module else ""
        calls, programs = [], []
        for ex, text in zip(examples, completions, strict=True):
            names = [f["name"] for f in ex.meta["functions"]]
            call = parse_call(text, names)
            src = call_source(*call) if call and call[0] in names else None
            calls.append(src)
            programs.append(program_of(ex.meta["functions"], ex.reference, src, real))
        isolation = require_isolation(self.allow_unisolated)
        keys = [secrets.token_hex(32) for _ in programs]
        results = run_many(
            programs,
            Limits(wall_seconds=self.timeout_s, cpu_seconds=max(1, int(self.timeout_s))),
            isolation=isolation,
            secrets=keys,
        )
        scores: list[float | None] = []
        details: list[dict[str, Any]] = []
        for ex, src, res, key in zip(examples, calls, results, keys, strict=True):
            outcome = _outcome(res.report, key)
            gt, pred = outcome.get("gt"), outcome.get("pred")
            ok = (
                src is not None
                and gt is not None
                and pred is not None
                and "value" in gt
                and "value" in pred
                and results_match(gt["value"], pred["value"], ex.meta["result_type"])
            )
            scores.append(float(ok))
            details.append({"call": src, "ground_truth": ex.reference, "executed": outcome, "status": res.status})
        broken = sum(1 for d in details if not d["executed"].get("gt") or "error" in d["executed"]["gt"])
        return ScoredBatch(
            scores=scores,
            details=details,
            settings={
                "sandbox": {"isolation": isolation, "timeout_s": self.timeout_s},
                "functions": "real" if real else "schema stubs",
            },
            extra={
                "unparsed_calls": sum(c is None for c in calls),
                "ground_truth_errors": broken,
                "isolation": isolation,
            },
        )


def _outcome(report: bytes, secret: str) -> dict[str, Any]:
    """The results the program reported with this run's secret ({} for anything else)."""
    try:
        message = json.loads(report.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}
    if not isinstance(message, dict) or not isinstance(message.get("secret"), str):
        return {}
    if not hmac.compare_digest(message["secret"], secret) or not isinstance(message.get("results"), dict):
        return {}
    return {k: v for k, v in message["results"].items() if k in ("gt", "pred") and (v is None or isinstance(v, dict))}
