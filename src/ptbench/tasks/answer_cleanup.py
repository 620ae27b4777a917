"""What a judge sees of an answer: reasoning blocks removed and a runaway loop cut.

A model that "thinks" aloud would otherwise be judged on its scratchpad, and one stuck repeating a
phrase until max tokens would hand the judge pages of the same sentence (and an agent could pad
answers that way on purpose). Both the model's and the reference answers are cleaned alike.
"""

from __future__ import annotations

import re

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
MAX_PERIOD = 2000  # characters; longer loops are not worth the search
MIN_REPEATS = 4
MIN_LOOP_CHARS = 200  # a refrain ("la la la") is style; a loop this long is a runaway


def strip_think(text: str) -> str:
    """Drop `<think>…</think>` blocks (an unclosed one to the end), and anything before a lone
    `</think>` (templates that open the block in the prompt)."""
    text = _THINK.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    return text.strip()


def cut_runaway_repetition(
    text: str, *, min_repeats: int = MIN_REPEATS, max_period: int = MAX_PERIOD, min_chars: int = MIN_LOOP_CHARS
) -> tuple[str, bool]:
    """If the text ends in a unit repeated at least `min_repeats` times over at least `min_chars`
    characters, keep one copy of the unit and drop the loop. Returns (text, was_cut)."""
    n = len(text)
    for period in range(1, min(max_period, n // min_repeats) + 1):
        unit = text[n - period :]
        if text[n - period * min_repeats :] != unit * min_repeats:
            continue
        start = n - period * min_repeats
        while start - period >= 0 and text[start - period : start] == unit:
            start -= period
        if n - start < min_chars:
            continue
        return text[: start + period].rstrip(), True
    return text, False


def clean_answer(text: str) -> tuple[str, bool]:
    """(what the judge sees, whether a runaway repetition was cut)."""
    return cut_runaway_repetition(strip_think(text))
