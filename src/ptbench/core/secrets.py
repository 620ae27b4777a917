"""Which values are secrets: environment variables whose names say so (API keys, tokens, passwords).

Used to keep them out of what the harness writes (result records, submit files) even where the
harness did not hand them out itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.I)
MIN_SECRET_LEN = 8  # shorter values would redact ordinary text; keys are far longer


# Secrets this process took out of its own environment (the runner holds an agent's real key only
# in its gateway): still redacted from everything the process writes.
_REMOVED: dict[str, str] = {}


def remove_from_environ(names: list[str]) -> None:
    """Drop these variables from os.environ (children no longer inherit them) but keep redacting them."""
    for name in names:
        value = os.environ.pop(name, None)
        if value:
            _REMOVED[name] = value


def secret_env_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """name -> value of every secret-looking variable long enough to be a real secret."""
    env = os.environ if environ is None else environ
    found = {k: v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_LEN}
    return {**_REMOVED, **found} if environ is None else found


def redact_text(text: str, secrets: Mapping[str, str]) -> str:
    """`text` with every secret value replaced by [REDACTED:NAME], longest values first."""
    for name, value in sorted(secrets.items(), key=lambda kv: len(kv[1]), reverse=True):
        if value and len(value) >= MIN_SECRET_LEN and value in text:
            text = text.replace(value, f"[REDACTED:{name}]")
    return text
