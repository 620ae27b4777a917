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


def secret_env_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """name -> value of every secret-looking variable long enough to be a real secret."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_LEN}


def redact_text(text: str, secrets: Mapping[str, str]) -> str:
    """`text` with every secret value replaced by [REDACTED:NAME], longest values first."""
    for name, value in sorted(secrets.items(), key=lambda kv: len(kv[1]), reverse=True):
        if value and len(value) >= MIN_SECRET_LEN and value in text:
            text = text.replace(value, f"[REDACTED:{name}]")
    return text
