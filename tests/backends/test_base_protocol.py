"""Every backend implements the `Backend` protocol with the protocol's own signatures and types."""

from __future__ import annotations

import inspect
import types
import typing

import pytest

from ptbench.backends.base import Backend
from ptbench.backends.htcondor import HTCondorBackend
from ptbench.backends.local import LocalBackend
from ptbench.backends.slurm import SlurmBackend

METHODS = (
    "submit",
    "scheduler_states",
    "cancel",
    "render",
    "log_path",
    "prepare_units",
    "render_units",
    "submit_units",
    "wait_units",
    "stop_units",
    "unit_states",
)


@pytest.mark.parametrize("cls", [LocalBackend, SlurmBackend, HTCondorBackend])
def test_backend_matches_the_protocol(cls) -> None:
    assert isinstance(cls(), Backend)
    for name in METHODS:
        want = inspect.signature(getattr(Backend, name))
        have = inspect.signature(getattr(cls, name))
        # the protocol's parameters, in order, by name (a backend may take extra keyword-only ones)
        positional = [p for p in have.parameters.values() if p.kind is not p.KEYWORD_ONLY or p.name in want.parameters]
        assert [p.name for p in positional][: len(want.parameters)] == list(want.parameters), (cls.__name__, name)
        want_hints, have_hints = (
            typing.get_type_hints(getattr(Backend, name)),
            typing.get_type_hints(getattr(cls, name)),
        )
        for param in want.parameters:
            if param in want_hints:
                assert have_hints.get(param) == want_hints[param], (cls.__name__, name, param)
        returned, promised = have_hints.get("return"), want_hints.get("return")

        # dict[str, int] is a dict[str, Any]: compare the outer types of each alternative
        def outer(t: object) -> set[object]:
            alternatives = typing.get_args(t) if typing.get_origin(t) in (typing.Union, types.UnionType) else (t,)
            return {typing.get_origin(a) or a for a in alternatives}

        assert outer(returned) <= outer(promised), (cls.__name__, name, returned, promised)
