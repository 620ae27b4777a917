"""Arena-Hard v2.0, creative-writing subset (250 prompts, uids shipped in
tasks/data/arena_hard_writing_uids.txt): pairwise judgement against reference answers.

The reference answers are the official instruct model's (default Qwen3-1.7B), generated and cached
by ptbench itself with the same engine (`ptbench eval-references arena_hard_writing --model DIR`).
Before judging, both answers have `<think>` blocks stripped and a runaway repetition cut. Each
answer is judged twice, once as assistant A and once as assistant B (position bias cancels). A
verdict counts once, a strong verdict (`>>`) three times, as in Arena-Hard's own scoring. The
per-question score is the model's weighted win share over its two games (ties count half); the
primary metric is the mean over questions, with its standard error. A question with a failed or
unparsable game is a failed example (not scored); past the threshold the evaluation fails.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from ptbench.core.errors import UserError
from ptbench.tasks._common import DatasetPin, load_rows, local_data_path, read_rows, render_template
from ptbench.tasks._judged import JudgedTask
from ptbench.tasks.answer_cleanup import clean_answer
from ptbench.tasks.base import Example, ScoredBatch, register_task
from ptbench.tasks.subsets import read_ids, select_by_id

# The Arena-Hard-Auto data (questions and baseline answers). No verified commit hash: set one.
PIN = DatasetPin(
    id="lmarena-ai/arena-hard-auto", split="train", revision=None, data_files="data/arena-hard-v2.0/question.jsonl"
)
CATEGORY = "creative_writing"
_VERDICT = re.compile(r"\[\[([AB][<>=]{1,2}[AB])\]\]")
# (verdict from A's point of view) -> (winner, weight)
_OUTCOMES = {
    "A>>B": ("A", 3),
    "A>B": ("A", 1),
    "A=B": ("tie", 1),
    "B>A": ("B", 1),
    "B>>A": ("B", 3),
    "A<B": ("B", 1),
    "A<<B": ("B", 3),
    "B<A": ("A", 1),
    "B<<A": ("A", 3),
    "B=A": ("tie", 1),
}


def parse_verdict(text: str) -> str | None:
    """The judge's final [[...]] label, or None when there is none it could mean."""
    hits = [h for h in _VERDICT.findall(text) if h in _OUTCOMES]
    return hits[-1] if hits else None


def game_points(verdict: str, model_is: str) -> tuple[float, int]:
    """(points won by the model, games weight) for one judged game."""
    winner, weight = _OUTCOMES[verdict]
    if winner == "tie":
        return 0.5 * weight, weight
    return (float(weight) if winner == model_is else 0.0), weight


def question_score(games: list[tuple[str, str]]) -> float | None:
    """Weighted win share over (verdict, model position) games; None when no game was judged."""
    won = total = 0.0
    for verdict, model_is in games:
        points, weight = game_points(verdict, model_is)
        won, total = won + points, total + weight
    return won / total if total else None


def _answer_text(row: dict[str, Any]) -> str:
    """A reference answer: ptbench's references file ({"uid", "answer"}) or arena-hard's model_answer rows."""
    if "answer" in row:
        return str(row["answer"])
    content = row["messages"][-1]["content"]
    return content["answer"] if isinstance(content, dict) else str(content)


def reference_file(root: str | Path, reference_model: str) -> Path:
    """Where `ptbench eval-references` keeps a model's answers: ROOT/arena_hard_writing/<model>.jsonl."""
    return Path(root) / "arena_hard_writing" / (re.sub(r"[^A-Za-z0-9._-]+", "--", reference_model) + ".jsonl")


@register_task("arena_hard_writing")
class ArenaHardWriting(JudgedTask):
    """Options: question_uids (list or file; default the shipped 250 creative_writing uids),
    reference_model (whose answers are the baseline; default the official Qwen3-1.7B instruct),
    reference_answers (a references file; default the one `ptbench eval-references` wrote into the
    harness-only evaluation cache), plus the judge options of JudgedTask."""

    primary_metric = "win_rate"
    token_phases = (16384, 12288, 8192)
    default_baseline = True
    eval_resources = (PIN.held_out(role="judge_reference"),)  # questions and the judge's baseline answers
    no_sibling_reason = (
        "open-ended writing prompts judged against a reference model: no single reference "
        "answer whose likelihood measures memorization, so no sibling comparison is defined"
    )
    agent_brief = (
        "Arena-Hard v2, creative writing subset: 250 open-ended writing prompts; a judge model compares "
        "each answer with a strong reference answer. Helpful, well-written, instruction-following answers "
        "win. The Arena-Hard prompts are the test data: use other instruction and writing data."
    )
    default_judge_reasoning_effort = "medium"

    def __init__(
        self,
        *,
        reference_model: str = "Qwen/Qwen3-1.7B",
        reference_answers: str | None = None,
        question_uids: list[str] | str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.reference_model = reference_model
        self.reference_answers = reference_answers
        self.question_uids = question_uids

    def questions(self) -> list[dict[str, Any]]:
        """The subset's questions (uid, prompt, ...) from the official question file, by uid."""
        uids, subset = read_ids(self.question_uids, "arena_hard_writing_uids.txt")
        local = local_data_path("arena_hard_writing", self.data_path)
        if local is not None:
            rows, self.dataset = read_rows(Path(local) / "question.jsonl"), {"id": PIN.id, "local_path": str(local)}
        else:
            rows, self.dataset = load_rows("arena_hard_writing", PIN, None)
        rows = [r for r in rows if r.get("category") == CATEGORY]
        self.dataset.update(subset)
        return select_by_id(rows, "uid", uids, "arena_hard_writing", self.dataset.get("local_path") or PIN.id)

    def _reference_path(self) -> Path:
        if self.reference_answers:
            return Path(self.reference_answers).expanduser()
        candidates = []
        if os.environ.get("PTBENCH_EVAL_CACHE"):
            candidates.append(
                reference_file(Path(os.environ["PTBENCH_EVAL_CACHE"]) / "references", self.reference_model)
            )
        local = local_data_path("arena_hard_writing", self.data_path)
        if local is not None:  # arena-hard's own layout: model_answer/<model>.jsonl beside question.jsonl
            candidates.append(Path(local) / "model_answer" / f"{self.reference_model}.jsonl")
        for path in candidates:
            if path.is_file():
                return path
        raise UserError(
            f"arena_hard_writing: no reference answers of {self.reference_model} (looked in "
            f"{', '.join(map(str, candidates)) or 'nowhere: PTBENCH_EVAL_CACHE is not set'}); generate them with "
            "`ptbench eval-references arena_hard_writing --model INSTRUCT_MODEL_DIR --out "
            "$PTBENCH_EVAL_CACHE/references` or pass task option reference_answers"
        )

    def _references(self) -> dict[str, str]:
        path = self._reference_path()
        rows = read_rows(path)
        self.dataset["reference_answers"] = {
            "model": self.reference_model,
            "file": str(path),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }
        return {str(r["uid"]): _answer_text(r) for r in rows}

    def question_examples(self, limit: int | None = None) -> list[Example]:
        """The questions as examples without references (what `ptbench eval-references` answers)."""
        rows = self.questions()
        rows = rows[:limit] if limit else rows
        return [
            Example(
                id=r["uid"],
                reference=None,
                meta={"question": r["prompt"]},
                prompt=self._prompt(r["prompt"], "plain_base.jinja", text=r["prompt"]),
            )
            for r in rows
        ]

    def test_examples(self, limit: int | None = None) -> list[Example]:
        examples = self.question_examples(limit)
        refs = self._references()
        missing = [ex.id for ex in examples if ex.id not in refs]
        if missing:
            raise UserError(
                f"arena_hard_writing: {len(missing)} questions have no reference answer in "
                f"{self.dataset['reference_answers']['file']} (e.g. {missing[0]}); regenerate it with ptbench "
                "eval-references"
            )
        return [dataclasses.replace(ex, reference=refs[ex.id]) for ex in examples]

    def score(self, example: Example, completion: str) -> float:
        """One example through the judge (evaluation scores whole batches with `score_batch`); 0.0 if unjudgeable."""
        score = self.score_batch([example], [completion]).scores[0]
        return 0.0 if score is None else score

    def judge_messages(self, question: str, answer_a: str, answer_b: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": render_template("arena_hard_judge_system.txt")},
            {
                "role": "user",
                "content": render_template(
                    "arena_hard_judge_user.jinja", question=question, answer_a=answer_a, answer_b=answer_b
                ),
            },
        ]

    def score_batch(self, examples: list[Example], completions: list[str]) -> ScoredBatch:
        conversations, cut = [], 0
        for ex, raw in zip(examples, completions, strict=True):
            question = ex.meta["question"]
            answer, was_cut = clean_answer(raw)
            reference, _ = clean_answer(ex.reference)
            cut += was_cut
            conversations.append(self.judge_messages(question, reference, answer))  # game 1: model is B
            conversations.append(self.judge_messages(question, answer, reference))  # game 2: model is A
        judged = self._judge(conversations)
        per_judge: list[list[float | None]] = []
        verdicts_by_judge: list[list[list[str]]] = []
        labels: list[list[str | None]] = [[] for _ in range(2 * len(examples))]  # game -> verdict per judge
        unparsable = 0
        for _, replies in judged:
            scores_j, verdicts_j = [], []
            for i in range(len(examples)):
                games, verdicts = [], []
                for g, model_is in ((2 * i, "B"), (2 * i + 1, "A")):
                    reply = replies[g]
                    verdict = parse_verdict(reply.text) if reply.ok and reply.text is not None else None
                    if reply.ok and verdict is None:
                        unparsable += 1
                    verdicts.append(verdict or f"error: {reply.error or 'no verdict'}")
                    # the category compared across judges: A<B and B>A are the same verdict
                    labels[g].append("/".join(map(str, _OUTCOMES[verdict])) if verdict else None)
                    if verdict:
                        games.append((verdict, model_is))
                # A question counts only when both orders were judged (otherwise position bias returns).
                scores_j.append(question_score(games) if len(games) == 2 else None)
                verdicts_j.append(verdicts)
            per_judge.append(scores_j)
            verdicts_by_judge.append(verdicts_j)
        scores, details, record = self._combine_judges(
            judged, per_judge, verdicts_by_judge, "verdicts", unparsable=unparsable
        )
        self._agreement(record, labels)
        self._check(record, "arena_hard_writing")
        record["verdict_weights"] = {"strong": 3, "weak": 1, "tie": "half of 1"}
        return ScoredBatch(
            scores=scores,
            details=details,
            settings=record,
            extra={**self._judge_extra(record), "answers_cut_for_repetition": cut},
        )
