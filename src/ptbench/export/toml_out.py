"""A minimal TOML writer for the task files we emit (tables of strings, numbers, booleans and lists)."""

from __future__ import annotations

import json
from typing import Any


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps(doc: dict[str, Any]) -> str:
    lines: list[str] = []
    top = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    for k, v in top.items():
        lines.append(f"{k} = {_value(v)}")

    def table(prefix: str, body: dict[str, Any]) -> None:
        scalars = {k: v for k, v in body.items() if not isinstance(v, dict)}
        lines.append("")
        lines.append(f"[{prefix}]")
        for k, v in scalars.items():
            lines.append(f"{k} = {_value(v)}")
        for k, v in body.items():
            if isinstance(v, dict):
                table(f"{prefix}.{k}", v)

    for k, v in doc.items():
        if k not in top:
            table(k, v)
    return "\n".join(lines).lstrip("\n") + "\n"
