"""Turn a pydantic ValidationError into one line naming file, line, field and a fix."""

from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from ptbench.core.errors import OptionProblem
from ptbench.core.yamlio import LocatedYaml


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that owns the mapping at `loc` (list indices and dict keys are skipped)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return None
        current = _unwrap(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    for arg in typing.get_args(annotation) or ():
        inner = _unwrap(arg)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return annotation


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def describe_validation_error(exc: ValidationError, model: type[BaseModel], src: LocatedYaml) -> str:
    """Every problem, one line each, as `file:line: field: problem (fix)` (the CLI prefixes each
    with `error: `): a user fixes a file in one pass, not one error per run."""
    return "\n".join(_describe(err, model, src) for err in exc.errors())


def _describe(err: Any, model: type[BaseModel], src: LocatedYaml) -> str:
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    where = src.where(loc)
    if err["type"] == "extra_forbidden":
        owner = _model_at(model, loc[:-1])
        valid = sorted(owner.model_fields) if owner else []
        near = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
        hint = f"did you mean '{near[0]}'?" if near else f"valid keys: {', '.join(valid)}"
        return f"{where}: unknown key '{_field_path(loc)}' ({hint})"
    if err["type"] == "missing":
        return f"{where}: missing required field '{_field_path(loc)}' (add it)"
    text = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return f"{where}: {_field_path(loc)}: {text}"


def option_problem(exc: ValidationError, model: type[BaseModel], what: str, hint: str = "") -> OptionProblem:
    """The first problem of a dict of options checked by `model` (a backend's), as an `OptionProblem`
    naming the key, with the nearest valid key for a misspelt one; the caller adds file:line."""
    err = exc.errors()[0]
    key = str(err["loc"][0]) if err["loc"] else None
    if err["type"] == "extra_forbidden" and key is not None:
        near = difflib.get_close_matches(key, list(model.model_fields), n=1, cutoff=0.5)
        known = f"did you mean '{near[0]}'?" if near else f"known: {', '.join(model.model_fields)}"
        return OptionProblem(key, f"'{key}' is not {what} ({known}{'; ' + hint if hint else ''})")
    text = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    own = err["type"] in ("value_error", "assertion_error")  # the option's own check: its message names the value
    return OptionProblem(key, f"{text} (got {err.get('input')!r})" if key and not own else text)


def unknown_name(kind: str, name: str, known: list[str]) -> str | None:
    """None when `name` is one of `known` (a registry's names), else "unknown KIND 'NAME' (did you mean
    'X'?)" or the known names; the caller adds file:line (validate) or the flag (the CLI)."""
    if name in known:
        return None
    near = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{near[0]}'?" if near else f"known: {', '.join(known)}"
    return f"unknown {kind} '{name}' ({hint})"
