"""The pencil families' strict grid parser: one grid of the exact shape and alphabet, nothing else."""

from __future__ import annotations

from ptbench.bootcamp.envs.pencil._grid import diagonal_neighbours, neighbours, parse_grid, render


def test_a_grid_is_read_spaced_or_packed_and_rendered_spaced() -> None:
    assert parse_grid("L . #\n. L 1", 2, 3, ".L#1") == ["L.#", ".L1"]
    assert parse_grid("\n  L.#\n.L1  \n\n", 2, 3, ".L#1") == ["L.#", ".L1"]
    assert parse_grid("```\nL . #\n. L 1\n```", 2, 3, ".L#1") == ["L.#", ".L1"]
    assert render(["L.#", ".L1"]) == "L . #\n. L 1"


def test_anything_but_one_grid_of_the_shape_is_none() -> None:
    for text in ("", "L . #", "L . #\n. L 1\n. . .", "L . # .\n. L 1 .", "L .  #\n. L 1", "L . x\n. L 1",
                 "L . # or . L 1\n. L 1", "L.#\n\n.L1", "LL . #\n. L 1", "Answer:\nL . #\n. L 1"):  # fmt: skip
        assert parse_grid(text, 2, 3, ".L#1") is None, text
    assert parse_grid(None, 2, 3, ".L#1") is None  # type: ignore[arg-type]


def test_neighbours_stay_inside_the_grid() -> None:
    assert sorted(neighbours(0, 0, 3, 3)) == [(0, 1), (1, 0)]
    assert len(list(neighbours(1, 1, 3, 3))) == 4
    assert sorted(diagonal_neighbours(0, 0, 3, 3)) == [(0, 1), (1, 0), (1, 1)]
    assert len(list(diagonal_neighbours(1, 1, 3, 3))) == 8
