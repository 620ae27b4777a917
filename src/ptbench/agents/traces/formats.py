"""Trace formats as plugins: an agent CLI's native log format, by the name its agent.yaml gives in
`trace_format:`, and the parser that turns one run's JSON events into trajectory steps. Each parser
registers where it is defined (`@register_trace_format("claude-stream-json")`); a third-party CLI's
parser registers from its plugin package (docs/guides/add-an-agent-cli.md).

`text` is the format of a CLI without structured output: no events, the last line is its message.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from typing import Any

from ptbench.agents.traces._builder import Builder
from ptbench.agents.traces.model import RunSummary
from ptbench.core.registry import Registry

ParseRun = Callable[[list[dict[str, Any]], Builder, RunSummary], None]
TEXT = "text"
_NAME_OK = re.compile(r"^[a-z][a-z0-9-]*$")


def plain_text(events: list[dict[str, Any]], b: Builder, summary: RunSummary) -> None:
    """The `text` format: nothing structured to parse (parse_native_log keeps the last line)."""


def _load_builtin() -> None:
    """Every module of this package: a built-in parser is one new file here, listed nowhere."""
    import ptbench.agents.traces as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")


TRACE_FORMATS: Registry[ParseRun] = Registry(
    "trace format", load=_load_builtin, hint="register its parser: see docs/guides/add-an-agent-cli.md"
)
TRACE_FORMATS.add(TEXT, plain_text)


def register_trace_format(name: str) -> Callable[[ParseRun], ParseRun]:
    """Decorator on a parser `parse_run(events, builder, summary)`: `@register_trace_format("my-json")`."""
    if not _NAME_OK.match(name):
        raise ValueError(f"trace format name {name!r}: use lower-case letters, digits and '-'")

    def deco(parse: ParseRun) -> ParseRun:
        TRACE_FORMATS.add(name, parse)
        return parse

    return deco
