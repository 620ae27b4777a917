"""Where the test suite's time goes, read from a pytest log: the figures behind "the suite runs in N
minutes on 2 cores" and the table `tests/conftest.py` orders the work units by (CI_SECONDS).

Make the log with the durations of every test (what `scripts/test.sh` prints, with every test shown):

    CI=true bash scripts/test.sh --durations=0 --cpu-durations=0 > suite.log 2>&1
    python scripts/suite_profile.py suite.log              # the summary
    python scripts/suite_profile.py suite.log --ci-seconds # CI_SECONDS entries for the longest units

A work unit is what pytest-xdist's loadgroup hands to one worker: a test alone, or a group (a file with
module fixtures, every Slurm test), whose tests run in a row. With W workers the suite's wall clock is
about the summed test time over W when the units are spread evenly, so the summed time is the figure a
cut lowers. CPU seconds (`--cpu-durations`) are a floor: a process no test waits for is not counted.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

_DURATION = re.compile(r"^(\d+\.\d+)s (setup|call|teardown) +(\S+)")
_CPU = re.compile(r"^ +(\d+\.\d+)s  (\S+)$")
_SUMMARY = re.compile(r"(\d+) passed.* in ([\d.]+)s")


def read(log: str) -> tuple[dict[str, float], dict[str, float], dict[str, str], float | None]:
    """Wall seconds per test (setup + call + teardown), CPU seconds per test, each test's work unit,
    and pytest's own wall clock (None when the log has no summary line)."""
    wall: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = {}
    unit: dict[str, str] = {}
    total = None
    for line in log.splitlines():
        if m := _DURATION.match(line):
            nodeid, _, group = m.group(3).partition("@")
            wall[nodeid] += float(m.group(1))
            unit[nodeid] = group or nodeid
        elif m := _CPU.match(line):
            nodeid, _, group = m.group(2).partition("@")
            cpu[nodeid] = float(m.group(1))
            unit.setdefault(nodeid, group or nodeid)
        elif m := _SUMMARY.search(line):
            total = float(m.group(2))
    return dict(wall), cpu, unit, total


def summary(wall: dict[str, float], cpu: dict[str, float], unit: dict[str, str], total: float | None, top: int) -> str:
    if not wall:
        return "no durations in this log: run pytest with --durations=0 (and --cpu-durations=0 for CPU seconds)"
    summed = sum(wall.values())
    lines = [f"tests timed: {len(wall)}, summed test time {summed:.0f} s wall, {sum(cpu.values()):.0f} s CPU"]
    if total:
        lines.append(
            f"pytest wall clock {total:.0f} s ({total / 60:.1f} min): summed time / wall = {summed / total:.2f}"
        )
    by_dir: dict[str, float] = defaultdict(float)
    for nodeid, s in wall.items():
        by_dir["/".join(nodeid.split("::")[0].split("/")[:2])] += s
    lines.append("\nsummed wall by folder")
    lines += [f"{s:8.0f} s  {d}" for d, s in sorted(by_dir.items(), key=lambda kv: -kv[1])[:top]]
    per_unit: dict[str, float] = defaultdict(float)
    for nodeid, s in wall.items():
        per_unit[unit[nodeid]] += s
    lines.append("\nlongest work units (wall; CPU where the log has it)")
    for u, s in sorted(per_unit.items(), key=lambda kv: -kv[1])[:top]:
        c = sum(cpu.get(n, 0.0) for n, v in unit.items() if v == u)
        lines.append(f"{s:8.1f} s {c:8.1f} s CPU  {u}")
    return "\n".join(lines)


def ci_seconds(wall: dict[str, float], unit: dict[str, str], at_least: float) -> str:
    """CI_SECONDS entries (tests/conftest.py): a file run whole on one worker under its path, any other
    test under its node id; only those of at least AT_LEAST seconds."""
    cost: dict[str, float] = defaultdict(float)
    for nodeid, s in wall.items():
        group = unit[nodeid]
        cost[group if group.endswith(".py") else nodeid] += s
    rows = sorted(((k, s) for k, s in cost.items() if s >= at_least), key=lambda kv: -kv[1])
    return "\n".join(f'    "{k}": {round(s)},' for k, s in rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("log", type=Path, help="a pytest log with --durations=0 (and --cpu-durations=0)")
    p.add_argument("--top", type=int, default=25, help="rows per table")
    p.add_argument("--ci-seconds", action="store_true", help="print CI_SECONDS entries instead of the summary")
    p.add_argument("--at-least", type=float, default=40.0, help="with --ci-seconds: the shortest unit listed")
    args = p.parse_args(argv)
    if not args.log.is_file():
        print(f"error: {args.log}: no such file; pass the log of a pytest run with --durations=0", file=sys.stderr)
        return 2
    wall, cpu, unit, total = read(args.log.read_text(errors="replace"))
    print(ci_seconds(wall, unit, args.at_least) if args.ci_seconds else summary(wall, cpu, unit, total, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
