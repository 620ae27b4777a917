"""GPQA's sibling source: each question with its options in the order the evaluation shows them
(the task's `shuffled_choices`) against the same question with its options in another order, drawn
with a secret choice (the `rng` of siblings.sibling_sets: per campaign where the base-score cache is
used, else per run), and the correct letter under it.

Test item: the prompt in the task's completion format (`gpqa_base.jinja`: the question, A) to D) in
the evaluated order) and the line the evaluation reads the answer from, `Answer: B`: its fixed start
`Answer:` ends the prompt and the continuation is ` B`, so the score is the letter's alone (the
fixed words would add the same format gain to both sets and only dilute the per-token gain).
Sibling: the same prompt with the options permuted and the letter that is correct there.
The sibling's correct letter differs from the test's on every item, and over the set each letter is
correct equally often (counts differ by at most one), as the task balances the evaluated order.

Why it is sound. An honest agent never saw these questions, so it cannot know which order the
evaluation uses: the test order and the sibling order are, to it, two random orders of the same
options. A model that learned the *content* (which option is right) raises the correct option
wherever it stands, so its test and sibling gains come from one distribution. A model that
memorised "question -> letter" raises the evaluated letter only, and in the sibling that letter
names a wrong option. A general letter preference an honest fine-tune may pick up ("A" more often)
moves both sets alike, because both have each letter correct equally often.

What it cannot see: a model that memorised the answer *text* (trained on the questions with their
correct options in any order, e.g. every permutation, or on GPQA's extended or diamond sets, which
contain the main set's questions) raises the correct option in every order, like an honest model
that learned the content; the `contamination` check (test questions and answers in the workspace,
home, the run journal's copies of deleted files, the gateway transcript) and the `judge` are the
evidence there. Questions whose options are not four distinct texts are skipped and counted (the
correct letter would be ambiguous).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from ptbench.integrity.memorization.siblings import MAX_ITEMS, Item, SiblingSets

ANSWER_START = "Answer:"  # the fixed start of the letter line, scored as prompt: only the letter differs


def prompt_of(question: str, choices: list[str]) -> str:
    """The evaluation's prompt in the task's completion format, then the letter line's start."""
    from ptbench.tasks._common import render_template
    from ptbench.tasks.gpqa import LETTERS

    values = dict(zip(LETTERS, choices, strict=True))
    return render_template("gpqa_base.jinja", fewshot=0, question=question, **values) + ANSWER_START


def answer_line(position: int) -> str:
    """The rest of the letter line: ' B' (a letter with its space, as a tokenizer joins them)."""
    from ptbench.tasks.gpqa import LETTERS

    return f" {LETTERS[position]}"


def sibling_positions(test_positions: list[int], rng: random.Random) -> list[int]:
    """A correct position per item, never the test's, each letter as often as any other (within
    one): a balanced list in a secret order, then swaps that remove every clash."""
    n = len(test_positions)
    out = [i % 4 for i in range(n)]
    rng.shuffle(out)
    for i in range(n):
        if out[i] != test_positions[i]:
            continue
        order = list(range(n))
        rng.shuffle(order)
        for j in order:
            if out[j] != test_positions[i] and out[i] != test_positions[j]:
                out[i], out[j] = out[j], out[i]
                break
        else:  # too few items to swap with (n < 3): keep balance loose, never the test's letter
            out[i] = rng.choice([p for p in range(4) if p != test_positions[i]])
    return out


def siblings(task: Any, seed: int, rng: random.Random) -> SiblingSets:
    from ptbench.tasks._common import load_rows
    from ptbench.tasks.gpqa import PIN, shuffled_choices

    rows, _ = load_rows("gpqa", PIN, task.data_path)
    shown = shuffled_choices(rows, task.seed)  # the evaluated order, exactly as the task builds it
    usable, skipped = [], Counter[str]()
    for i, (row, (choices, pos)) in enumerate(zip(rows, shown, strict=True)):
        if len({" ".join(c.split()).casefold() for c in choices}) != 4 or not all(c.strip() for c in choices):
            skipped["options are not four distinct texts"] += 1
            continue
        usable.append((str(row.get("Record ID", i)), str(row["Question"]).strip(), choices, pos))
    if len(usable) > MAX_ITEMS:  # pairs stay together
        usable = [usable[i] for i in sorted(rng.sample(range(len(usable)), MAX_ITEMS))]
    positions = sibling_positions([pos for *_, pos in usable], rng)
    test, sibs = [], []
    for (rid, question, choices, pos), new in zip(usable, positions, strict=True):
        wrong = choices[:pos] + choices[pos + 1 :]
        rng.shuffle(wrong)
        permuted = wrong[:new] + [choices[pos]] + wrong[new:]
        test.append(Item(rid, prompt_of(question, choices), answer_line(pos)))
        sibs.append(Item(rid + " (reordered)", prompt_of(question, permuted), answer_line(new)))
    return SiblingSets(
        test=test,
        siblings=sibs,
        test_name=f"GPQA questions in the evaluated option order (shuffle seed {task.seed})",
        siblings_name="the same questions with their options in another order",
        source="each question with its options permuted by a secret choice (per campaign where the base-score cache "
        "is used, else per run), the correct letter never the evaluated one and balanced over the set; continuation "
        "' <letter>' after 'Answer:'; prompts in the task's completion format",
        details={
            "items": len(rows),
            "items_used": len(test),
            "items_skipped": dict(skipped),
            "correct_letters": {
                "test": dict(sorted(Counter(i.continuation.strip() for i in test).items())),
                "siblings": dict(sorted(Counter(i.continuation.strip() for i in sibs).items())),
            },
        },
    )
