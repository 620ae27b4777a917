"""A task's options, derived from its constructor's signature so the list cannot drift from the code.

`check_task_options(name, options)` is what `ptbench validate` runs: unknown names get the nearest
valid one, values are checked against the annotated types, and the task is constructed once so
its own range checks (which raise TypeError/ValueError) run before anything is submitted.
"""

from __future__ import annotations

import difflib
import inspect
import typing
from typing import Any

from pydantic import ConfigDict, ValidationError, create_model

from ptbench.core.errors import OptionProblem
from ptbench.tasks.base import task_class


def option_fields(cls: type) -> dict[str, tuple[Any, Any]]:
    """name -> (annotation, default or ...) over the constructor chain that forwards **options."""
    fields: dict[str, tuple[Any, Any]] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        hints = typing.get_type_hints(init)
        forwards = False
        for name, param in inspect.signature(init).parameters.items():
            if name == "self" or param.kind is param.VAR_POSITIONAL:
                continue
            if param.kind is param.VAR_KEYWORD:
                forwards = True
                continue
            default = ... if param.default is param.empty else param.default
            fields.setdefault(name, (hints.get(name, Any), default))
        if not forwards:
            break
    for name, annotation in getattr(cls, "extra_options", {}).items():  # options a constructor pops by prefix
        fields.setdefault(name, (annotation, None))
    return fields


def check_task_options(name: str, options: dict[str, Any]) -> None:
    cls = task_class(name)
    fields = option_fields(cls)
    for key in options:
        if key not in fields:
            near = difflib.get_close_matches(key, fields, n=1)
            hint = f"did you mean '{near[0]}'?" if near else f"known: {', '.join(sorted(fields))}"
            raise OptionProblem(key, f"not an option of task '{name}' ({hint})")
    given: dict[str, Any] = {k: v for k, v in fields.items() if k in options}
    model = create_model(
        f"{cls.__name__}Options", __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True), **given
    )
    try:
        model.model_validate(options)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = str(err["loc"][0]) if err["loc"] else None
        got = options.get(where) if where is not None else None
        raise OptionProblem(where, f"{err['msg']} (got {got!r})") from None
    try:
        cls(**options)
    except (TypeError, ValueError) as exc:
        raise OptionProblem(None, str(exc)) from None
