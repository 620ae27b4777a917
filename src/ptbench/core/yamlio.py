"""YAML loading that remembers where every key is, so errors can name file, line and field."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ptbench.core.errors import UserError

Loc = tuple[str | int, ...]


@dataclass
class LocatedYaml:
    """Parsed YAML data plus the 1-based line of every mapping key and sequence item."""

    path: Path
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Loc) -> int | None:
        """The line of `loc`, or of its nearest ancestor that has one."""
        loc = tuple(loc)
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return None

    def where(self, loc: Loc) -> str:
        """`file:line` of `loc` (the file alone when no line is known): how every problem starts."""
        line = self.line_of(loc)
        return f"{self.path}:{line}" if line else str(self.path)


# The flag of a one-line `ptbench run` (no campaign file) that sets each top-level campaign field.
FLAGS = {
    "agents": "--agent",
    "base_models": "--model",
    "tasks": "--task",
    "seeds": "--seed",
    "backend": "--backend",
    "sandbox": "--sandbox",
}


@dataclass
class CommandLineSource(LocatedYaml):
    """A campaign built from `ptbench run`'s flags: a problem names the flag that set the field,
    where a file's problem names its line (same checks, same messages otherwise)."""

    def where(self, loc: Loc) -> str:
        loc = tuple(loc)
        if loc[:1] == ("budget",):
            flag = {"gpus": "--gpus"}.get(str(loc[1]) if len(loc) > 1 else "", "--hours")
        elif loc[:1] == ("tasks",) and "options" in loc:
            flag = "--task-options"
        else:
            flag = FLAGS.get(str(loc[0]) if loc else "", "")
        return f"{self.path} {flag}".rstrip()


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> Any:
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = (
                yaml.safe_load(yaml.serialize(key_node))
                if not isinstance(key_node, yaml.ScalarNode)
                else _scalar(key_node)
            )
            child = (*loc, key)
            lines[child] = key_node.start_mark.line + 1
            if key in out:
                raise _DuplicateKey(key, key_node.start_mark.line + 1)
            out[key] = _walk(value_node, child, lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            lines[(*loc, i)] = item.start_mark.line + 1
            items.append(_walk(item, (*loc, i), lines))
        return items
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    return (
        yaml.SafeLoader(yaml.serialize(node)).get_single_data() if node.tag != "tag:yaml.org,2002:str" else node.value
    )


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int) -> None:
        self.key, self.line = key, line


def load_located_yaml(path: str | Path) -> LocatedYaml:
    """Parse a YAML file; a missing file or syntax error becomes one clear `UserError`."""
    path = Path(path)
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.yaml"))[:5]
        hint = f" ({', '.join(found)}{', ...' if len(found) == 5 else ''})" if found else ""
        raise UserError(f"{path}: is a folder, not a campaign file; name one of its .yaml files{hint}")
    if not path.is_file():
        raise UserError(f"{path}: file not found (check the path; campaign files live in campaigns/)")
    text = path.read_text(encoding="utf-8")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise UserError(
            f"{where}: YAML syntax error: {exc.problem or exc.context} (fix the indentation or quoting there)"
        ) from None
    lines: dict[Loc, int] = {}
    try:
        data = _walk(root, (), lines) if root is not None else {}
    except _DuplicateKey as dup:
        raise UserError(f"{path}:{dup.line}: key '{dup.key}' appears twice (keep one)") from None
    return LocatedYaml(path=path, data=data, lines=lines)
