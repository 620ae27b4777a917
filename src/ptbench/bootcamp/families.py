"""Distinct task families: which environments count as one (`ptbench bootcamp list --totals`).

The project counts an environment once per distinct task family (its own generator and verifier): a
parameter variant of a family, or a family another source already installs, is not a new one. The
environment that is such a duplicate is declared where it is made: in its adapter's module-level
`SAME_FAMILY` (its full name -> the environment its family is counted as; adapters that declare none
need no change), ptbench's own environments in `catalogue.SAME_FAMILY`. A declared target may itself be
declared: the chain resolves to its end, the environment that is the family (`family` in `bootcamp
list --json`). A target that is no environment here, a name its declarer does not own and a cycle are
errors naming them, so a typo never counts a family twice in silence.

The totals by source count, per source, the installed environments, those whose last `bootcamp verify`
passed (the store `bootcamp list` reads), the rest, and the distinct families among the verified ones:
a family counts once overall, in the row of the environment it resolves to (so a family counted in one
source's row may come from another source's verified copy). `families_installed` counts the same over
every installed environment, verified or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ptbench.core.errors import UserError

UNLISTED = "*"
"""A catalogue row named `<prefix>*` stands for an adapter whose library is not installed here."""


def declared() -> dict[str, tuple[str, str]]:
    """Every declaration: environment -> (the environment its family is counted as, who declared it)."""
    from ptbench.bootcamp.adapters import ADAPTERS, same_family
    from ptbench.bootcamp.catalogue import CATALOGUE, SAME_FAMILY

    own = {e.name for e in CATALOGUE}
    out = {}
    for name, target in SAME_FAMILY.items():
        if name not in own:
            raise UserError(f"catalogue.SAME_FAMILY names {name!r}, none of ptbench's own environments")
        out[name] = (target, "ptbench's catalogue")
    for prefix in ADAPTERS.names():
        adapter = ADAPTERS.get(prefix)
        label = getattr(adapter, "__name__", type(adapter).__name__)
        out.update({name: (target, label) for name, target in same_family(adapter).items()})
    return out


def resolve(names: Iterable[str], declarations: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Each catalogue row name -> the environment its family is counted as (itself unless declared).

    `names` are the catalogue's row names; `<prefix>*` (an adapter not installed here) stands for all of
    its environments, which cannot be listed, so a name under that prefix is taken as known."""
    listed = [n for n in names if not n.endswith(UNLISTED)]
    unlisted = tuple(n[: -len(UNLISTED)] for n in names if n.endswith(UNLISTED))
    known = set(listed)

    def is_known(name: str) -> bool:
        return name in known or bool(unlisted) and name.startswith(unlisted)

    for name, (target, who) in sorted(declarations.items()):
        if not is_known(name):
            raise UserError(f"{who}: SAME_FAMILY names {name!r}, which is no environment here "
                            "(`ptbench bootcamp list` names them)")  # fmt: skip
        if not is_known(target):
            raise UserError(f"{who}: SAME_FAMILY counts {name} as {target!r}, which is no environment here "
                            "(`ptbench bootcamp list` names them)")  # fmt: skip
    out = {}
    for name in listed:
        chain = [name]
        while chain[-1] in declarations:
            step = declarations[chain[-1]][0]
            if step in chain:
                raise UserError(f"SAME_FAMILY goes round in a cycle: {' -> '.join([*chain, step])}")
            chain.append(step)
        out[name] = chain[-1]
    return out


def with_families(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The catalogue rows, each with its `family` (`-` for an adapter not installed here)."""
    family = resolve([r["name"] for r in rows], declared())
    return [{**r, "family": family.get(r["name"], "-")} for r in rows]


COLUMNS = ("installed", "verified", "not_verified", "families", "families_installed")


def totals(rows: Iterable[dict[str, str]]) -> list[dict[str, Any]]:
    """Per source (most installed first), then `all`: installed, verified (the row's `verified` is
    "verified"), not_verified (installed, not verified), families (distinct families among the verified
    environments, each in the row of the environment it resolves to) and families_installed (the same
    among installed ones). Rows are `bootcamp list`'s, with `family` and `verified`."""
    rows = list(rows)
    source_of = {r["name"]: r["source"] for r in rows}
    prefixes = {r["name"][: -len(UNLISTED)]: r["source"] for r in rows if r["name"].endswith(UNLISTED)}

    def home(family: str) -> str:  # the source whose row counts this family
        return source_of.get(family) or next(s for p, s in prefixes.items() if family.startswith(p))

    by: dict[str, dict[str, Any]] = {}
    counted: dict[str, set[str]] = {}
    counted_installed: dict[str, set[str]] = {}
    for r in rows:
        by.setdefault(r["source"], {"source": r["source"], **dict.fromkeys(COLUMNS, 0)})
        if r["installed"] != "yes":
            continue
        t = by[r["source"]]
        t["installed"] += 1
        ok = r.get("verified") == "verified"
        t["verified" if ok else "not_verified"] += 1
        counted_installed.setdefault(home(r["family"]), set()).add(r["family"])
        if ok:
            counted.setdefault(home(r["family"]), set()).add(r["family"])
    for source, t in by.items():
        t["families"] = len(counted.get(source, ()))
        t["families_installed"] = len(counted_installed.get(source, ()))
    out = sorted(by.values(), key=lambda t: (-t["installed"], t["source"]))
    return [*out, {"source": "all", **{c: sum(t[c] for t in out) for c in COLUMNS}}]


def totals_table(rows: list[dict[str, Any]]) -> Any:
    """`totals` as a table readable at 80 columns (the verify table's layout)."""
    from ptbench.bootcamp.verify import narrow_table

    headers = ("installed", "verified", "not\nverified", "families", "families\ninstalled")
    table = narrow_table("bootcamp environments by source", [("source", 19), *((h, 0) for h in headers)])
    for t in rows:
        cells = [t["source"], *(str(t[c]) for c in COLUMNS)]
        table.add_row(*(f"[bold]{c}[/]" for c in cells) if t["source"] == "all" else cells)
    return table


def print_totals(rows: list[dict[str, str]], *, as_json: bool) -> None:
    """`bootcamp list --totals [--json]`: `totals` of the rows (with `verified`) as JSON, else the table."""
    import json

    from rich.console import Console

    counts = totals(rows)
    if as_json:
        print(json.dumps(counts, indent=2))
        return
    Console().print(totals_table(counts))
    print(NOTE)


NOTE = """\
families: distinct task families among the verified environments, each counted
once, in the row of the environment its SAME_FAMILY declarations resolve to;
families installed: the same over every installed environment."""
