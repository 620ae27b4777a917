"""Arena-Hard v2.0, creative-writing subset (250 prompts): pairwise judgement against stored
reference answers.

Each answer is judged twice, once as assistant A and once as assistant B (position bias cancels).
A verdict counts once, a strong verdict (`>>`) three times, as in Arena-Hard's own scoring. The
per-question score is the model's weighted win share over its two games (ties count half); the
primary metric is the mean over questions, with its standard error. A game whose judge call failed
or whose verdict could not be parsed counts as a judge failure and is left out; above the threshold
the evaluation fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ptbench.tasks._common import DatasetPin, load_rows, local_data_path, read_rows, render_template
from ptbench.tasks._judged import JudgedTask
from ptbench.tasks.base import Example, ScoredBatch, register_task

# The Arena-Hard-Auto data (questions and baseline answers). No verified commit hash: set one.
PIN = DatasetPin(id="lmarena-ai/arena-hard-auto", split="train", revision=None,
                 data_files="data/arena-hard-v2.0/question.jsonl")
REFERENCE_FILE = "data/arena-hard-v2.0/model_answer/{model}.jsonl"
CATEGORY = "creative_writing"
_VERDICT = re.compile(r"\[\[([AB][<>=]{1,2}[AB])\]\]")
# (verdict from A's point of view) -> (winner, weight)
_OUTCOMES = {"A>>B": ("A", 3), "A>B": ("A", 1), "A=B": ("tie", 1), "B>A": ("B", 1), "B>>A": ("B", 3),
             "A<B": ("B", 1), "A<<B": ("B", 3), "B<A": ("A", 1), "B<<A": ("A", 3), "B=A": ("tie", 1)}


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
    content = row["messages"][-1]["content"]
    return content["answer"] if isinstance(content, dict) else str(content)


@register_task("arena_hard_writing")
class ArenaHardWriting(JudgedTask):
    primary_metric = "win_rate"
    default_max_new_tokens = 3000
    default_retry = (2000,)

    def __init__(self, *, reference_model: str = "gemini-2.0-flash-001", **options: Any) -> None:
        super().__init__(**options)
        self.reference_model = reference_model

    def _references(self) -> dict[str, str]:
        local = local_data_path("arena_hard_writing", self.data_path)
        if local is not None:
            path = local / "model_answer" / f"{self.reference_model}.jsonl"
            if not path.is_file():
                from ptbench.core.errors import UserError

                raise UserError(f"arena_hard_writing: reference answers {path} missing (expected model_answer/<reference_model>.jsonl beside question.jsonl)")
            rows = read_rows(path)
        else:
            import dataclasses

            pin = dataclasses.replace(PIN, data_files=REFERENCE_FILE.format(model=self.reference_model))
            rows, _ = load_rows("arena_hard_writing", pin, None)
        return {r["uid"]: _answer_text(r) for r in rows}

    def test_examples(self, limit: int | None = None) -> list[Example]:
        local = local_data_path("arena_hard_writing", self.data_path)
        if local is not None:
            rows, self.dataset = read_rows(Path(local) / "question.jsonl"), {"id": PIN.id, "local_path": str(local)}
        else:
            rows, self.dataset = load_rows("arena_hard_writing", PIN, None)
        rows = [r for r in rows if r.get("category") == CATEGORY]
        self.dataset["reference_model"] = self.reference_model
        refs = self._references()
        rows = rows[:limit] if limit else rows
        return [Example(id=r["uid"], reference=refs[r["uid"]], meta={"question": r["prompt"]},
                        prompt=self._prompt(r["prompt"], "plain_base.jinja", text=r["prompt"])) for r in rows]

    def score(self, example: Example, completion: str) -> float:
        """One example through the judge (evaluation scores whole batches with `score_batch`); 0.0 if unjudgeable."""
        score = self.score_batch([example], [completion]).scores[0]
        return 0.0 if score is None else score

    def judge_messages(self, question: str, answer_a: str, answer_b: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": render_template("arena_hard_judge_system.txt")},
                {"role": "user", "content": render_template("arena_hard_judge_user.jinja", question=question,
                                                            answer_a=answer_a, answer_b=answer_b)}]

    def score_batch(self, examples: list[Example], completions: list[str]) -> ScoredBatch:
        conversations = []
        for ex, answer in zip(examples, completions):
            question = ex.meta["question"]
            conversations.append(self.judge_messages(question, ex.reference, answer))  # game 1: model is B
            conversations.append(self.judge_messages(question, answer, ex.reference))  # game 2: model is A
        client, replies = self._judge(conversations)
        scores, details, unparsable = [], [], 0
        for i in range(len(examples)):
            games, verdicts = [], []
            for reply, model_is in ((replies[2 * i], "B"), (replies[2 * i + 1], "A")):
                verdict = parse_verdict(reply.text) if reply.ok else None
                if reply.ok and verdict is None:
                    unparsable += 1
                verdicts.append(verdict or f"error: {reply.error or 'no verdict'}")
                if verdict:
                    games.append((verdict, model_is))
            # A question counts only when both orders were judged (otherwise position bias returns).
            scores.append(question_score(games) if len(games) == 2 else None)
            details.append({"verdicts": verdicts})
        record = self._judge_record(client, unparsable)
        self._check(record, "arena_hard_writing")
        return ScoredBatch(scores=scores, details=details, settings=record,
                           extra={"judge_failures": record["judge_failures"], "judge_calls": record["judge_calls"]})
