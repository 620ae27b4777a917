"""Several integrity judges (`integrity.judge` a list): each runs as the single judge does, in its
own folder (judge-1/, judge-2/, ...), all at once (the check's time limit covers the slowest).

Per question the verdict is the one a strict majority of the *configured* judges gave; a judge that
could not judge (unchecked) counts as no vote, so with too few votes, or a split, the question
has no majority. The check is `flagged` when some question's majority says flagged, `clean` only
when every question's majority says clean, and `unchecked` otherwise (fail closed). The judges'
answers and their agreement (percent agreement, Cohen's/Fleiss' kappa over the questions of the
judges that answered) go into the finding's details.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Finding, Unchecked
from ptbench.results.agreement import agreement
from ptbench.spec.campaign import JudgeSettings

QUESTIONS = ("contamination", "disallowed_model_use")


def majority(
    ctx: CheckContext, judges: list[JudgeSettings], one: Callable[[CheckContext, JudgeSettings, str], Finding]
) -> Finding:
    def run(i: int) -> Finding | str:
        try:
            return one(ctx, judges[i], f"judge-{i + 1}")
        except Unchecked as exc:
            return f"unchecked: {exc}"

    with ThreadPoolExecutor(max_workers=len(judges)) as pool:
        results = list(pool.map(run, range(len(judges))))
    names = [f"judge-{i + 1} ({j.agent}{', ' + j.model if j.model else ''})" for i, j in enumerate(judges)]
    answers: list[dict[str, Any] | None] = [
        r.details.get("answers") if isinstance(r, Finding) else None for r in results
    ]
    per_question: dict[str, str | None] = {}
    for q in QUESTIONS:
        votes = Counter(a[q]["verdict"] for a in answers if a)
        top = [v for v, n in votes.items() if n * 2 > len(judges)]
        per_question[q] = top[0] if top else None
    answered = [a for a in answers if a]
    details: dict[str, Any] = {
        "judges": [
            {"judge": n, "answers": a} if a else {"judge": n, "error": str(r)}
            for n, a, r in zip(names, answers, results, strict=True)
        ],
        "majority": per_question,
    }
    if len(answered) >= 2:
        details["agreement"] = agreement([[a[q]["verdict"] for a in answered] for q in QUESTIONS], len(answered))
    flagged = [q for q, v in per_question.items() if v == "flagged"]
    if flagged:
        evidence = [
            {"question": q, "judge": n, "justification": a[q]["justification"]}
            for q in flagged
            for n, a in zip(names, answers, strict=True)
            if a and a[q]["verdict"] == "flagged"
        ]
        return Finding(
            verdict="flagged",
            reason=f"a majority of {len(judges)} judges flagged " + ", ".join(flagged),
            evidence=evidence,
            details=details,
        )
    if all(v == "clean" for v in per_question.values()):
        return Finding(
            verdict="clean",
            reason=f"a majority of {len(judges)} judges found neither contamination nor disallowed model use",
            details=details,
        )
    split = ", ".join(q for q, v in per_question.items() if v is None)
    raise Unchecked(
        f"no majority of the {len(judges)} judges on {split} ({len(answered)} answered; "
        + "; ".join(str(r) for r in results if not isinstance(r, Finding))[:300]
        + ")"
    )
