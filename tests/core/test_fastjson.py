"""core/fastjson.py: with orjson and without it (the fallback an install without the bootcamp extra
runs), it reads what the standard library reads and writes what it parses back; nothing else picks
a JSON library."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ptbench.core import fastjson

REPO = Path(__file__).resolve().parents[2]

BODIES = [
    b'{"model": "a", "model": "b"}',
    b'{"mod\\u0065l": "x"}',
    b'{"model": "\\ud800"}',
    b'\xef\xbb\xbf{"model": "a"}',
    b'{"model": "a", "n": 123456789012345678901234567890}',
    b'{"model": NaN}',
    b'{"model": "a\\u0000"}',
]
VALUES = [
    {"model": "\ud800x", "cost_usd": 0.25},
    {"model": "m\u2028x\x85", "latency_s": 0.0012, "error": "é"},
    {"big": 123456789012345678901234567890, "nested": [1, {"b": None, "a": True}]},
]


@pytest.fixture(params=["orjson", "stdlib"])
def flavour(request, monkeypatch) -> str:
    if request.param == "orjson":
        pytest.importorskip("orjson")
        assert fastjson._orjson_dumps is not None
    else:
        monkeypatch.setattr(fastjson, "_fast_loads", json.loads)
        monkeypatch.setattr(fastjson, "_orjson_dumps", None)
    return request.param


def test_reads_what_the_standard_library_reads(flavour: str) -> None:
    for raw in BODIES:
        assert str(fastjson.loads(raw).get("model")) == str(json.loads(raw).get("model")), raw
    with pytest.raises(ValueError):
        fastjson.loads(b'{"model": "a"')


def test_writes_what_reads_back(flavour: str) -> None:
    for value in VALUES[1:]:  # not the lone surrogate: it is not UTF-8, only the ASCII line carries it
        for data in (fastjson.dumps(value), fastjson.dumps_line(value)):
            assert json.loads(data) == value
        assert fastjson.dumps_line(value).endswith(b"\n") and fastjson.dumps_line(value).count(b"\n") == 1
        assert fastjson.canonical(value) == fastjson.canonical(dict(reversed(list(value.items()))))


def test_ascii_line_is_one_line_a_splitter_cannot_tear(flavour: str) -> None:
    for value in VALUES:
        line = fastjson.ascii_line(value)
        assert line.endswith(b"\n") and line.isascii() and len(line.decode().splitlines()) == 1
        assert json.loads(line) == value


def test_no_other_module_picks_a_json_library() -> None:
    """orjson (or another fast JSON library) is chosen in core/fastjson.py only."""
    pattern = re.compile(r"^\s*(?:import|from)\s+(orjson|ujson|simplejson|rapidjson)\b", re.M)
    found = [
        p.relative_to(REPO).as_posix()
        for p in sorted((REPO / "src").rglob("*.py"))
        if p.name != "fastjson.py" and pattern.search(p.read_text(errors="replace"))
    ]
    assert found == []
    planted = "def f():\n    import orjson\n"
    assert pattern.search(planted)
