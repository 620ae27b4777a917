"""Exceptions every layer shares: a user's mistake, a failed generation, an untrustworthy evaluation.

The CLI prints a `UserError` as a single line on stderr and exits with code 2; anything else is
a bug and keeps its traceback.
"""


class UserError(Exception):
    """A problem the user caused and can fix: the message says what, where, and how to fix it."""

    exit_code = 2


class GenerationFailed(RuntimeError):
    """Generation failed for a reason a lower max_new_tokens may fix (length, out of memory)."""


class EvaluationFailed(UserError):
    """The evaluation ran but cannot produce a trustworthy score (e.g. too many judge failures).
    `ptbench eval` exits non-zero, so the runner records `eval_failed` — never a silent score."""

    exit_code = 3

    def __init__(self, message: str, detail: dict | None = None) -> None:
        super().__init__(message)
        self.detail = detail or {}


class OptionProblem(UserError):
    """A bad task or agent option; `key` names the option (None: the options as a whole), so the
    caller can point at its line in the campaign file."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(message)
        self.key = key
