"""The one exception type for mistakes a user can fix.

The CLI prints a `UserError` as a single line on stderr and exits with code 2; anything else is
a bug and keeps its traceback.
"""


class UserError(Exception):
    """A problem the user caused and can fix: the message says what, where, and how to fix it."""

    exit_code = 2
