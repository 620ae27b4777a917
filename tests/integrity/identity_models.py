"""The identity cases live in the package (the integrity self-test builds them too):
`python -m tests.integrity.identity_models ROOT TOKENIZER_DIR` still writes every model under ROOT."""

from __future__ import annotations

import sys
from pathlib import Path

from ptbench.integrity.selftest.identity_models import CHEATS, HONEST, MERGES, build

__all__ = ["CHEATS", "HONEST", "MERGES", "build"]

if __name__ == "__main__":
    build(Path(sys.argv[1]), Path(sys.argv[2]))
