"""This process's mount table (/proc/<pid>/mountinfo), parsed in one place for every reader: the
trial cgroup finder (node/cgroup.py) and the HF cache layer's mount check (runner/cache_layer.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_OCTAL = re.compile(rb"\\([0-7]{3})")


@dataclass(frozen=True)
class Mount:
    root: str  # the part of the filesystem mounted here ("/" for all of it)
    mount_point: str
    fs_type: str


def _unescape(field: bytes) -> str:
    """mountinfo writes space, tab, newline and backslash as octal (\\040); names stay bytes until then."""
    return _OCTAL.sub(lambda m: bytes([int(m.group(1), 8)]), field).decode(errors="surrogateescape")


def mounts(proc: Path = Path("/proc/self")) -> list[Mount]:
    """Every mount `proc` sees, in table order. Raises OSError where the table cannot be read."""
    out = []
    for line in (proc / "mountinfo").read_bytes().splitlines():
        fields, _, rest = line.partition(b" - ")
        parts, kind = fields.split(), rest.split()
        if len(parts) < 5 or not kind:
            continue
        out.append(Mount(_unescape(parts[3]), _unescape(parts[4]), kind[0].decode(errors="replace")))
    return out
