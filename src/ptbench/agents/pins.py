"""The agent CLIs' pinned packages, read from their agent.yaml files (one place: `package:`), for
scripts/install.sh and anything else that installs them.

    python -m ptbench.agents.pins npm   one line per npm CLI: `package@version executable`
    python -m ptbench.agents.pins pip   one line per PyPI scaffold: `venv package==version executable`

Variants (`extends:`) share their parent's pin and are listed once.
"""

from __future__ import annotations

import sys

from ptbench.agents.spec import available_agents, load_agent
from ptbench.core.errors import UserError


def pins(installer: str) -> list[tuple[str, ...]]:
    rows: dict[tuple[str, ...], None] = {}
    for name in available_agents():
        spec = load_agent(name)
        if spec.pin is None or spec.pin[0] != installer:
            continue
        exe = spec.executable or ""
        rows[(spec.venv or "", spec.pin[1], exe) if installer == "pip" else (spec.pin[1], exe)] = None
    return list(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("npm", "pip"):
        print("usage: python -m ptbench.agents.pins npm|pip", file=sys.stderr)
        return 2
    try:
        rows = pins(argv[0])
    except UserError as exc:  # a broken agent.yaml: one line naming it, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in rows:
        print(" ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
