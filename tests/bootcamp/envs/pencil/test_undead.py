"""Undead: the planted monsters score; a wrong total, a monster on a mirror, a vampire seen in a mirror
or a ghost seen directly does not."""

from __future__ import annotations

import random

from ptbench.bootcamp.envs.pencil import undead

# 2x2, one mirror at top right:  G \ / Z V
MIRRORS = [".\\", ".."]


def _case(grid: list[str]) -> dict:
    totals = {kind: sum(row.count(kind) for row in grid) for kind in "GVZ"}
    return {"size": 2, "mirrors": MIRRORS, "totals": totals, **undead.edge_clues(grid, MIRRORS), "solution": grid}


def test_the_sight_lines() -> None:
    grid = ["G.", "ZV"]
    # from the left along row 1: G directly (unseen), then the mirror turns the line down onto V (a vampire
    # in a mirror: unseen) -> 0; up column 2 from the bottom: V directly (seen), then the mirror turns the
    # line left onto G (a ghost in a mirror: seen) -> 2; down column 2 the mirror turns it right, out -> 0
    assert undead.sight(grid, MIRRORS, 0, 0, 0, 1) == 0
    assert undead.sight(grid, MIRRORS, 1, 1, -1, 0) == 2
    assert undead.sight(grid, MIRRORS, 0, 1, 1, 0) == 0
    assert undead.sight(grid, MIRRORS, 1, 0, 0, 1) == 2  # Z then V, both direct
    assert undead.sight(["V.", "ZV"], MIRRORS, 0, 0, 0, 1) == 1  # V direct (seen), V in the mirror (not)
    assert undead.sight(["Z.", "ZZ"], MIRRORS, 0, 0, 0, 1) == 2  # zombies always seen


def test_the_rules_each_broken_alone() -> None:
    case = _case(["G.", "ZV"])
    assert undead.check(case, "G .\nZ V")
    assert not undead.check(case, "V .\nZ G")  # the totals hold, the sight lines do not
    assert not undead.check(case, "G Z\n. V")  # a monster on the mirror
    assert not undead.check(case, "G .\nZ Z")  # a wrong total
    assert not undead.check(case, "G \\\nZ V")  # the mirror must be written as '.'


def test_a_generated_case_and_one_changed_monster() -> None:
    case = undead.generate(random.Random(5))
    assert undead.check(case, undead.answer(case))
    grid = [list(row) for row in case["solution"]]
    r, c = next((r, c) for r in range(case["size"]) for c in range(case["size"]) if grid[r][c] != ".")
    grid[r][c] = {"G": "V", "V": "Z", "Z": "G"}[grid[r][c]]
    assert not undead.check(case, "\n".join(" ".join(row) for row in grid))
