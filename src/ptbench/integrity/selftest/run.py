"""Running the scenarios through the real checks, and the table of what they found.

Each scenario gets a fresh trial directory under one temporary folder (so memorization's base
scores are cached once per benchmark, as in a campaign), the benchmark's shipped data, the models
it names, and then `run_checks` with only its check configured. A cell (check x benchmark) counts
the attacks flagged (recall) and the honest controls flagged (false positives), and says how many
runs were undecided (`unchecked`, or a builder that failed): those count neither way, and are
shown, because an undecided honest run is a result thrown away and an undecided attack is not a catch.
"""

from __future__ import annotations

import io
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.integrity.checks import CHECKS as REGISTRY
from ptbench.integrity.selftest import fixtures, models
from ptbench.integrity.selftest.scenarios import ANY, CHECKS, Plant, Scenario, library
from ptbench.trial import TrialDir

SCHEMA_VERSION = 1
RECORDED = Path(__file__).with_name("recorded.json")


@dataclass
class Outcome:
    scenario: Scenario
    verdict: str  # a check's verdict, or "error" when the builder failed
    reason: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        s = self.scenario
        return {
            "id": s.id,
            "check": s.check,
            "benchmark": s.task,
            "kind": s.kind,
            "expect": s.expect,
            "verdict": self.verdict,
            "reason": self.reason,
            "seconds": round(self.seconds, 2),
        }


def scenarios(*, quick: bool, checks: Iterable[str] | None = None) -> list[Scenario]:
    keep = set(checks or CHECKS)
    return [s for s in library(fixtures.benchmarks()) if s.check in keep and (s.quick or not quick)]


def run(
    todo: list[Scenario],
    *,
    quick: bool,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    journal: Callable[..., Any] | None = None,
) -> list[Outcome]:
    """Run every scenario; `workdir`: keep the trial directories there (default: a temporary folder);
    `journal`: the runner's `run_journal` (the journal scenarios end `error` without it)."""
    say = progress or (lambda _m: None)
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        return _run(todo, workdir, quick, say, journal)
    with tempfile.TemporaryDirectory(prefix="ptbench-selftest-") as tmp:
        return _run(todo, Path(tmp), quick, say, journal)


def _run(
    todo: list[Scenario], root: Path, quick: bool, say: Callable[[str], None], journal: Callable[..., Any] | None
) -> list[Outcome]:
    from ptbench.tasks import get_task

    options = fixtures.write_task_data(root / "data")
    built = _models(todo, root / "models", options, quick, say)
    out: list[Outcome] = []
    for i, s in enumerate(todo):
        started = time.time()
        task = s.task if s.task != ANY else "arithmetic"
        try:
            trial = _trial(root / "trials" / f"{i:03d}", s, task, options[task], built)
            examples = get_task(task, **options[task]).test_examples()
            from ptbench.integrity.contamination.testsets import _question, _texts

            plant = Plant(
                trial=trial,
                questions=[_question(e.prompt) for e in examples],
                answers=[" ".join(_texts(e.reference)) for e in examples],
                models=built,
                journal=journal,
            )
            s.plant(plant)
            verdict, reason = _check(trial)
        except Exception as exc:  # noqa: BLE001  (a scenario that cannot be built is reported, not hidden)
            verdict, reason = "error", f"{type(exc).__name__}: {exc}"
        out.append(Outcome(s, verdict, reason, time.time() - started))
        say(f"[{i + 1}/{len(todo)}] {s.id}: {verdict}")
    return out


def _check(trial: TrialDir) -> tuple[str, str]:
    import json

    from ptbench.integrity import run_checks

    # No cache dirs: the self-test's trials own no HF cache layer, and the host's cache is not theirs.
    verdicts = run_checks(trial.path, trial.spec, cache_dirs=[])
    [(name, verdict)] = verdicts.items()
    report = json.loads((trial.checks_dir / f"{name}.json").read_text())
    return verdict, str(report.get("reason", ""))


def _trial(path: Path, s: Scenario, task: str, options: dict[str, Any], built: dict[str, Path]) -> TrialDir:
    from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, Integrity, TaskRef
    from ptbench.trial import TrialSpec

    integrity = {"checks": [s.check], **s.integrity}
    if s.forbidden:
        integrity["forbidden_models"] = [str(built[m]) for m in s.forbidden]
    spec = TrialSpec(
        campaign="selftest",
        trial_id=path.name,
        agent=AgentRef(name=s.agent),
        base_model=BaseModelRef(id=f"selftest/{s.base}", path=str(built[s.base])),
        task=TaskRef(name=task, options=options),
        seed=0,
        budget=Budget(hours=1, gpus=0),
        integrity=Integrity(**integrity),
    )
    for d in ("workspace", "home", "agent", "checks", "eval"):
        (path / d).mkdir(parents=True, exist_ok=True)
    (path / "trial.json").write_text(spec.model_dump_json(indent=2))
    if s.final_model:
        shutil.copytree(built[s.final_model], path / "final_model")
    return TrialDir(path)


def _models(
    todo: list[Scenario], root: Path, options: dict[str, dict[str, Any]], quick: bool, say: Callable[[str], None]
) -> dict[str, Path]:
    """Build the models the scenarios name, each once."""
    want = set().union(*(s.models() for s in todo)) if todo else set()
    built: dict[str, Path] = {"tiny": root / "no-model"}
    built["tiny"].mkdir(parents=True, exist_ok=True)
    if not want:
        return built
    say("building the tiny base model")
    built["tiny"] = models.tiny_base(root)
    mem = sorted(m.split(":")[1] for m in want if m.startswith("mem:"))
    if mem:
        say(f"fine-tuning {', '.join(mem)} (TRL, CPU)")
        recipes = models.QUICK if quick else models.FULL
        data = {name: _memorization_rows(name, options, built["tiny"]) for name in mem}
        runs = {name: (rows, recipes[name.split("@")[0]]) for name, rows in data.items() if rows}
        # A cheater with nothing to train on (its benchmark's source has too few items) submits the
        # base: the real check then says not_applicable, as it would for any model.
        built.update({f"mem:{name}": built["tiny"] for name, rows in data.items() if not rows})
        if runs:
            trained = models.fine_tune(built["tiny"], root / "memorization", runs)
            built.update({f"mem:{k}": v for k, v in trained.items()})
    ident = sorted(m.split(":")[1] for m in want if m.startswith("id:"))
    if ident:
        say(f"building the identity cases ({', '.join(n for n in ident if n not in ('base', 'instruct'))})")
        got = models.identity_models(root / "identity", built["tiny"], tuple(ident))
        built.update({f"id:{k}": v for k, v in got.items()})
    return built


def _memorization_rows(name: str, options: dict[str, dict[str, Any]], base: Path) -> list[dict[str, str]]:
    """Honest: arithmetic's training split (no benchmark's test item). A cheater (`cheater@task`,
    `cheater_half@task`): that benchmark's test items (all, or the first half by id), as the check's
    own sibling source reads them, prompts cut to fit the recipe (models.rows). A benchmark whose
    source has too few items gets no rows: its cheater learns nothing, and the real check says why."""
    from transformers import AutoTokenizer

    from ptbench.integrity.memorization.siblings import sibling_sets
    from ptbench.tasks import get_task

    if name.startswith("honest"):
        rows: list[dict[str, str]] = get_task("arithmetic", **fixtures.GENERATED["arithmetic"]).train_examples(0) or []
        return rows
    kind, task = name.split("@")
    try:
        items = sorted(sibling_sets(task, get_task(task, **options[task]), 0).test, key=lambda i: i.id)
    except Exception:  # noqa: BLE001  (the real check reports the same cause in the row)
        return []
    return models.rows(
        items if kind == "cheater" else items[: len(items) // 2], AutoTokenizer.from_pretrained(str(base))
    )


# --- the table -----------------------------------------------------------------------------------


@dataclass
class Cell:
    check: str
    benchmark: str
    attacks: int = 0
    caught: int = 0
    honest: int = 0
    false_positives: int = 0
    undecided: int = 0  # unchecked or error, attack or honest
    not_applicable: int = 0
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.check}/{self.benchmark}"

    @property
    def applicable(self) -> bool:
        return self.attacks + self.honest > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "benchmark": self.benchmark,
            "attacks": self.attacks,
            "caught": self.caught,
            "recall": round(self.caught / self.attacks, 4) if self.attacks else None,
            "honest": self.honest,
            "false_positives": self.false_positives,
            "false_positive_rate": round(self.false_positives / self.honest, 4) if self.honest else None,
            "undecided": self.undecided,
            "not_applicable": self.not_applicable,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Cell:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def cells(outcomes: list[Outcome]) -> list[Cell]:
    """One cell per (check, benchmark), in the library's order. A run whose check answered
    not_applicable counts in neither recall nor false positives; a cell with only those says why."""
    table: dict[tuple[str, str], Cell] = {}
    for o in outcomes:
        s = o.scenario
        c = table.setdefault((s.check, s.task), Cell(s.check, s.task))
        if o.verdict == "not_applicable":
            c.not_applicable += 1
            c.note = c.note or "not applicable: " + o.reason
            continue
        if o.verdict not in ("clean", "flagged"):
            c.undecided += 1
        if s.kind == "attack":
            c.attacks += 1
            c.caught += o.verdict == "flagged"
        else:
            c.honest += 1
            c.false_positives += o.verdict == "flagged"
    for c in table.values():
        if c.applicable and c.not_applicable:
            c.note = f"{c.not_applicable} run(s) not applicable"
        elif c.applicable:
            c.note = f"{c.undecided} undecided" if c.undecided else ""
    return list(table.values())


def report(outcomes: list[Outcome], *, quick: bool) -> dict[str, Any]:
    import ptbench

    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "quick" if quick else "full",
        "harness_version": ptbench.__version__,
        "cells": [c.to_json() for c in cells(outcomes)],
        "runs": [o.to_json() for o in outcomes],
        "not_measured": {name: why for name in REGISTRY.names() if (why := REGISTRY.get(name).selftest_unmeasured)},
    }


def render(table: list[Cell], *, title: str, width: int = 80) -> str:
    """The table as text, `width` columns wide (rich)."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_lines=False, pad_edge=False, box=None)
    t.add_column("check", no_wrap=True)
    t.add_column("benchmark", no_wrap=True)
    t.add_column("recall", justify="right", no_wrap=True)
    t.add_column("FP", justify="right", no_wrap=True)
    t.add_column("note", overflow="ellipsis", no_wrap=True, max_width=width - 52)  # the whole reason is in the JSON
    previous = None
    for c in table:
        check = c.check if c.check != previous else ""
        previous = c.check
        recall = f"{c.caught}/{c.attacks}" if c.attacks else "-"
        fp = f"{c.false_positives}/{c.honest}" if c.honest else "-"
        if not c.applicable:
            recall = fp = "n/a"
        t.add_row(check, c.benchmark, recall, fp, _short(c.note, width - 52))
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None, force_terminal=False)
    console.print(t)
    console.print("recall: attacks flagged / run; FP: honest controls flagged / run")
    console.print("judge: not measured (needs a model provider; see the JSON)")
    return console.export_text()


# The gist of the memorization check's not-applicable reasons, for the table (the JSON has them whole).
_GIST = {
    "no single reference answer": "no reference answer",
    "too small for the check to have power": "too few items",
    "no sibling source": "no sibling source",
}


def _short(note: str, room: int = 28) -> str:
    """A note in `room` characters, cut at a word."""
    if note.startswith("not applicable: "):
        reason = note.removeprefix("not applicable: ")
        note = "n/a: " + next((v for k, v in _GIST.items() if k in reason), reason)
    if len(note) <= room:
        return note
    return note[: room - 1].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"


# --- the recorded table --------------------------------------------------------------------------


def recorded(mode: str, path: Path = RECORDED) -> list[Cell]:
    import json

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [Cell.from_json(c) for c in data.get(mode, {}).get("cells", [])]


def record(rep: dict[str, Any], path: Path = RECORDED) -> None:
    """Rewrite this mode's table in the recorded file (the other mode's is kept). Counts only: no
    timings, so a rerun that finds the same records the same bytes."""
    import json

    from ptbench.core.files import atomic_write_text

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    keep = ("check", "benchmark", "attacks", "caught", "honest", "false_positives", "undecided", "not_applicable")
    data["schema_version"] = SCHEMA_VERSION
    data[rep["mode"]] = {"cells": [{k: c[k] for k in keep} for c in rep["cells"]]}
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def regressions(now: list[Cell], before: list[Cell]) -> list[str]:
    """One line per recorded cell that fell below: lower recall, a higher false-positive rate,
    more undecided runs, fewer runs, no longer applicable, or gone."""
    current = {c.key: c for c in now}
    out: list[str] = []
    for b in before:
        c = current.get(b.key)
        if c is None:
            out.append(f"{b.key}: not run (recorded: {_said(b)})")
            continue
        why = []
        if b.attacks + b.honest > b.undecided and not c.applicable:  # it decided runs, and now has none to decide
            why.append("no longer applicable")
        if b.attacks and c.caught * b.attacks < b.caught * c.attacks:
            why.append(f"recall {c.caught}/{c.attacks} < recorded {b.caught}/{b.attacks}")
        if b.honest and c.honest and c.false_positives * b.honest > b.false_positives * c.honest:
            why.append(f"FP {c.false_positives}/{c.honest} > recorded {b.false_positives}/{b.honest}")
        if c.attacks < b.attacks or c.honest < b.honest:
            why.append(f"fewer runs ({c.attacks} attacks, {c.honest} honest; recorded {b.attacks}, {b.honest})")
        if c.undecided > b.undecided:
            why.append(f"{c.undecided} undecided > recorded {b.undecided}")
        if why:
            out.append(f"{b.key}: " + "; ".join(why))
    return out


def _said(c: Cell) -> str:
    return f"recall {c.caught}/{c.attacks}, FP {c.false_positives}/{c.honest}" if c.applicable else "n/a"
