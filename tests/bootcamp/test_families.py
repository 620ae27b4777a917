"""Distinct task families (bootcamp/families.py): a declared duplicate counts once, in the row of the
environment it resolves to; a declaration naming no environment, or going round, is an error naming it;
the totals by source add up; and docs/bootcamp.md's list of same-family pairs is the code's."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from ptbench.bootcamp import catalogue
from ptbench.bootcamp.adapters import register_adapter
from ptbench.bootcamp.families import declared, resolve, totals
from ptbench.cli.bootcamp import app
from ptbench.core.errors import UserError

from .conftest import CAMPAIGNS, REPO

DOC = REPO / "docs" / "bootcamp.md"
PAIR = re.compile(r"`([^`\s]+)`\s+→\s+`([^`\s]+)`")


def _row(name: str, source: str, family: str = "", verified: str = "verified", installed: str = "yes") -> dict:
    return {"name": name, "source": source, "family": family or name, "verified": verified, "installed": installed}


def _by_source(rows: list[dict]) -> dict[str, dict]:
    return {t["source"]: t for t in totals(rows)}


@pytest.fixture(scope="module")
def catalogue_rows() -> list[dict[str, str]]:
    return catalogue.rows(CAMPAIGNS)


# --- resolving declarations -----------------------------------------------------------------------


def test_a_declared_duplicate_is_counted_once_in_the_row_it_maps_to() -> None:
    names = ["a.x", "a.y", "b.x", "b.z"]
    family = resolve(names, {"b.x": ("a.x", "adapter b")})
    assert family == {"a.x": "a.x", "a.y": "a.y", "b.x": "a.x", "b.z": "b.z"}
    by = _by_source([_row(n, n[0], family[n]) for n in names])
    assert (by["a"]["families"], by["b"]["families"], by["all"]["families"]) == (2, 1, 3)
    assert (by["a"]["installed"], by["b"]["installed"], by["all"]["verified"]) == (2, 2, 4)
    # control: without the declaration the same rows are four families
    assert _by_source([_row(n, n[0]) for n in names])["all"]["families"] == 4


def test_the_duplicate_alone_verified_still_counts_its_family_in_the_target_s_row() -> None:
    rows = [_row("a.x", "a", verified="failed"), _row("b.x", "b", "a.x")]
    by = _by_source(rows)
    assert (by["a"]["families"], by["b"]["families"], by["a"]["not_verified"]) == (1, 0, 1)
    assert by["all"]["families_installed"] == 1


def test_a_target_that_is_no_environment_is_an_error_naming_it() -> None:
    with pytest.raises(UserError, match=r"adapter b: SAME_FAMILY counts b\.x as 'a\.nowhere'"):
        resolve(["a.x", "b.x"], {"b.x": ("a.nowhere", "adapter b")})
    with pytest.raises(UserError, match=r"SAME_FAMILY names 'b\.typo'"):
        resolve(["a.x", "b.x"], {"b.typo": ("a.x", "adapter b")})
    # an adapter not installed here (`c.*`) cannot list its names: one under its prefix is taken as known
    assert resolve(["a.x", "c.*"], {"a.x": ("c.y", "adapter a")}) == {"a.x": "c.y"}


def test_a_planted_bad_mapping_in_the_real_catalogue_fails_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(catalogue.SAME_FAMILY, "arithmetic", "no_such_environment")
    with pytest.raises(UserError, match="no_such_environment"):
        catalogue.rows(CAMPAIGNS)
    res = CliRunner().invoke(app, ["list", "--totals", "--campaigns", str(CAMPAIGNS)])
    assert res.exit_code != 0 and "no_such_environment" in str(res.exception), res.output


def test_an_adapter_declaring_another_s_environment_is_refused_at_registration() -> None:
    fake = SimpleNamespace(PREFIX="famtest.", SOURCE="t", EXTRA="t", DOMAIN="t", names=list, describe=dict,
                           bootcamp_dict=dict, library=object, SAME_FAMILY={"rg.sudoku": "famtest.a"})  # fmt: skip
    with pytest.raises(TypeError, match=r"SAME_FAMILY names 'rg\.sudoku', not one of its own"):
        register_adapter(fake)


def test_chains_resolve_to_their_end_and_cycles_are_refused() -> None:
    names = ["a.x", "b.x", "c.x"]
    assert set(resolve(names, {"c.x": ("b.x", "c"), "b.x": ("a.x", "b")}).values()) == {"a.x"}
    with pytest.raises(UserError, match=r"cycle: a\.x -> b\.x -> a\.x"):
        resolve(names, {"a.x": ("b.x", "a"), "b.x": ("a.x", "b")})
    with pytest.raises(UserError, match=r"cycle: c\.x -> c\.x"):
        resolve(names, {"c.x": ("c.x", "c")})


# --- the real catalogue and `bootcamp list --totals` ----------------------------------------------


def test_totals_add_up_over_the_real_catalogue(catalogue_rows: list[dict[str, str]]) -> None:
    rows = [{**r, "verified": "verified" if i % 3 else "failed"} for i, r in enumerate(catalogue_rows)]
    table = totals(rows)
    sources, everything = table[:-1], table[-1]
    assert everything["source"] == "all" and {t["source"] for t in sources} == {r["source"] for r in rows}
    for column in ("installed", "verified", "not_verified", "families", "families_installed"):
        assert everything[column] == sum(t[column] for t in sources), column
    for t in table:
        assert t["installed"] == t["verified"] + t["not_verified"]
    installed = [r for r in rows if r["installed"] == "yes"]
    assert everything["installed"] == len(installed)
    assert everything["families_installed"] == len({r["family"] for r in installed})
    assert everything["families"] == len({r["family"] for r in installed if r["verified"] == "verified"})
    family = {r["name"]: r["family"] for r in catalogue_rows}
    assert family["mastermind"] == "mastermind" and family["arithmetic"] == "arithmetic"
    if "ta.Mastermind-v0" in family:  # TextArena installed: its game counts as ptbench's family, and GEM's chains there
        assert family["ta.Mastermind-v0"] == "mastermind" == family.get("gem.Mastermind", "mastermind")


def test_list_totals_with_an_empty_store(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PTBENCH_BOOTCAMP_VERIFY_STORE", str(tmp_path / "none.json"))
    res = CliRunner().invoke(app, ["list", "--totals", "--json", "--campaigns", str(CAMPAIGNS)])
    assert res.exit_code == 0, res.output
    table = json.loads(res.output)
    everything = table[-1]
    assert everything["verified"] == everything["families"] == 0
    assert everything["not_verified"] == everything["installed"] > 0 and everything["families_installed"] > 0
    monkeypatch.setenv("COLUMNS", "80")
    text = CliRunner().invoke(app, ["list", "--totals", "--campaigns", str(CAMPAIGNS)]).output
    assert re.search(rf"(?m)^\s*all\s+{everything['installed']}\s+0\s+{everything['installed']}\s+0\s+"
                     rf"{everything['families_installed']}\s*$", text), text  # fmt: skip
    assert all(len(line) <= 80 for line in text.splitlines()), text


# --- docs/bootcamp.md's list is the code's ------------------------------------------------------


def doc_pairs(text: str) -> dict[str, str]:
    """The `duplicate` → `counted` pairs of docs/bootcamp.md's Verification section."""
    section = text[text.index("## Verification") :]
    section = section[: section.index("\n## ", 1)]
    pairs = PAIR.findall(section)
    assert len(pairs) == len(dict(pairs)), "a duplicate listed twice"
    return dict(pairs)


def drift(doc: dict[str, str], code: dict[str, str]) -> list[str]:
    return sorted(
        [f"declared, not in the doc: {k} -> {v}" for k, v in code.items() if k not in doc]
        + [f"in the doc, not declared: {k} -> {v}" for k, v in doc.items() if k not in code]
        + [f"{k}: doc {doc[k]}, code {code[k]}" for k in doc.keys() & code.keys() if doc[k] != code[k]]
    )


def test_the_docs_list_of_same_family_pairs_is_the_code_s() -> None:
    code = {name: target for name, (target, _) in declared().items()}
    assert len(code) >= 30
    assert drift(doc_pairs(DOC.read_text()), code) == []


def test_a_doc_that_drifted_from_the_code_is_caught() -> None:
    text = DOC.read_text()
    code = {name: target for name, (target, _) in declared().items()}
    missing = text.replace("`popgym.concentration` → `ta.MemoryGame-v0`", "`popgym.concentration`")
    assert drift(doc_pairs(missing), code) == ["declared, not in the doc: popgym.concentration -> ta.MemoryGame-v0"]
    assert drift(doc_pairs(text), {**code, "rg.sudoku": "puz.sudoku"}) == [
        "declared, not in the doc: rg.sudoku -> puz.sudoku"
    ]
    changed = text.replace("`spiel.chess` → `chess.endgame`", "`spiel.chess` → `chess.mate_in_one`")
    assert drift(doc_pairs(changed), code) == ["spiel.chess: doc chess.mate_in_one, code chess.endgame"]
