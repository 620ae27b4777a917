"""Jumanji's packing puzzles for the Jumanji adapter (`jumanji_games.py`): FlatPack and BinPack."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ptbench.bootcamp.adapters._jumanji import LETTERS, JumanjiGame, environment, key
from ptbench.bootcamp.api import Identity


class FlatPack(JumanjiGame):
    env_name = "FlatPack"

    def __init__(self, identity: Identity) -> None:
        self.rules = ("FlatPack: fill the whole grid with the pieces below, one piece a turn. A piece is drawn in "
                      "its 3x3 box (# a cell of the piece); rotate it 0-3 quarter turns clockwise and give the "
                      "row and column of its box's top-left corner on the grid. A placement that leaves the grid or "
                      "covers a filled cell is refused but still uses a turn; the game ends after as many turns as "
                      "there are pieces. You win only if every piece is placed.\nReply with one line "
                      "`Action: <piece> <rotation> <row> <column>`, e.g. `Action: C 1 0 4`.")  # fmt: skip
        super().__init__(identity)
        self.blocks = self.np.asarray(self.state.blocks)
        self.numbers = [int(b.max()) for b in self.blocks]  # the generator's piece numbers (never shown)
        self._plan: dict[int, tuple[int, int, int]] | None = None
        self._planned = False
        self.first = self.opening()

    def parse(self, action: str) -> Any | None:
        words = action.split()
        if len(words) != 4 or len(words[0]) != 1 or not all(w.isdigit() for w in words[1:]):
            return None
        piece = LETTERS.find(words[0].upper())
        rotation, row, col = (int(w) for w in words[1:])
        rows, cols = self.np.asarray(self.state.grid).shape
        if not (0 <= piece < len(self.blocks) and rotation < 4 and row < rows - 2 and col < cols - 2):
            return None
        return [piece, rotation, row, col]

    def board(self) -> str:
        grid = self.np.asarray(self.state.grid)
        letter = {n: LETTERS[i] for i, n in enumerate(self.numbers)}
        header = "   " + " ".join(f"{c:<2}" for c in range(grid.shape[1]))
        rows = [f"{r:>2} " + " ".join(f"{letter.get(int(v), '.'):<2}" for v in row) for r, row in enumerate(grid)]
        placed = self.np.asarray(self.state.placed_blocks)
        pieces = []
        for i, block in enumerate(self.blocks):
            if not placed[i]:
                shape = " / ".join("".join("#" if v else "." for v in row) for row in block)
                pieces.append(f"{LETTERS[i]}: {shape}")
        left = int(self.state.num_blocks) - int(self.state.step_count)
        return ("Grid (letters: placed pieces, . empty):\n" + header + "\n" + "\n".join(rows) +
                "\nPieces left (rows of the 3x3 box, top to bottom):\n" + "\n".join(pieces) +
                f"\nTurns left: {left}.")  # fmt: skip

    def won(self) -> bool:
        return bool(self.state.placed_blocks.all())

    def plan(self) -> dict[int, tuple[int, int, int]] | None:
        """Each piece's (rotation, row, column) that puts it back where the generator cut it from, or
        None when one cannot be put back there (the library's placements keep the 3x3 box inside the
        grid, which the generator's cut does not always allow: such a seed is not made into a case)."""
        if self._planned:
            return self._plan
        self._planned = True
        self.solved = self.np.asarray(_flatpack_solution()(key(self.seed)))
        rows, cols = self.solved.shape
        plan = {}
        for i, block in enumerate(self.blocks):
            target = self.solved == self.numbers[i]
            found = None
            for rotation in range(4):
                shape = rotate(self.np, block, rotation) != 0
                for row in range(rows - 2):
                    for col in range(cols - 2):
                        if found is None and target[row : row + 3, col : col + 3].sum() == target.sum():
                            if (target[row : row + 3, col : col + 3] == shape).all():
                                found = (rotation, row, col)
            if found is None:
                return None
            plan[i] = found
        self._plan = plan
        return plan

    def oracle(self) -> str | None:
        plan = self.plan()
        placed = self.np.asarray(self.state.placed_blocks)
        i = next((i for i in range(len(self.blocks)) if not placed[i]), None)
        if plan is None or i is None:
            return None
        return f"Action: {LETTERS[i]} {' '.join(map(str, plan[i]))}"


def rotate(np: Any, block: Any, rotation: int) -> Any:
    """The library's `rotate_block` in numpy: `rotation` quarter turns clockwise."""
    return np.rot90(block, -rotation)


@functools.cache
def _flatpack_solution() -> Callable[..., Any]:
    """The solved grid the generator cuts its pieces from (its piece numbers in place), from the same
    key: the first steps of `RandomFlatPackGenerator.__call__`, the library's own methods in its order."""
    import jax
    import jax.numpy as jnp
    from jumanji.environments.packing.flat_pack.utils import compute_grid_dim, get_significant_idxs

    gen = environment("FlatPack")[0].generator

    def solved(key: Any) -> Any:
        rows, cols = compute_grid_dim(gen.num_row_blocks), compute_grid_dim(gen.num_col_blocks)
        row_idxs, col_idxs = get_significant_idxs(rows), get_significant_idxs(cols)
        grid = jnp.ones((rows, cols), dtype=jnp.int32)
        (grid, _), _ = jax.lax.scan(f=gen._fill_grid_columns, init=(grid, 1), xs=col_idxs)
        init = (grid, gen.num_col_blocks, gen.num_col_blocks)
        (grid, _, _), _ = jax.lax.scan(f=gen._fill_grid_rows, init=init, xs=row_idxs)
        (grid, key), _ = jax.lax.scan(f=gen._select_col_interlocks, init=(grid, key), xs=col_idxs)
        (grid, _), _ = jax.lax.scan(f=gen._select_row_interlocks, init=(grid, key), xs=row_idxs)
        return grid

    return jax.jit(solved)


class BinPack(JumanjiGame):
    env_name = "BinPack"

    def __init__(self, identity: Identity) -> None:
        self.rules = ("BinPack: pack every item into the container, one item a turn. An item goes in as it is "
                      "(no rotation), its corner nearest the origin at the origin corner of one of the empty spaces "
                      "listed (each space is the largest empty box from its first corner to its second); it must fit "
                      "in that space. An action that does not fit ends the game. You win only if every item is "
                      "packed.\nReply with one line `Action: <space> <item>`, e.g. `Action: 0 3`.")  # fmt: skip
        super().__init__(identity)
        self.order: list[int] | None = None
        self.first = self.opening()

    def parse(self, action: str) -> Any | None:
        words = action.split()
        if len(words) != 2 or not all(w.isdigit() for w in words):
            return None
        space, item = int(words[0]), int(words[1])
        if space >= int(self.env.obs_num_ems) or item >= len(self.np.asarray(self.state.items_mask)):
            return None
        return [space, item]

    def _spaces(self) -> list[tuple[int, tuple[int, ...]]]:
        """The spaces the library lets the agent choose (its largest `obs_num_ems`, in its order)."""
        ems = self.state.ems
        corners = self.np.stack([self.np.asarray(getattr(ems, a)) for a in ("x1", "y1", "z1", "x2", "y2", "z2")], 1)
        valid = self.np.asarray(self.state.ems_mask)
        shown = self.np.asarray(self.state.sorted_ems_indexes)[: int(self.env.obs_num_ems)]
        return [(e, tuple(int(v) for v in corners[j])) for e, j in enumerate(shown) if valid[j]]

    def board(self) -> str:
        np, state = self.np, self.state
        dims = np.stack([np.asarray(getattr(state.items, a)) for a in ("x_len", "y_len", "z_len")], 1)
        where = np.stack([np.asarray(getattr(state.items_location, a)) for a in ("x", "y", "z")], 1)
        real, placed = np.asarray(state.items_mask), np.asarray(state.items_placed)
        c = state.container
        box = f"{int(c.x2) - int(c.x1)} x {int(c.y2) - int(c.y1)} x {int(c.z2) - int(c.z1)}"
        todo = [f"{i}: {d[0]} x {d[1]} x {d[2]}" for i, d in enumerate(dims) if real[i] and not placed[i]]
        done = [
            f"{i} at ({w[0]}, {w[1]}, {w[2]})" for i, (d, w) in enumerate(zip(dims, where, strict=True)) if placed[i]
        ]
        spaces = [f"{e}: ({s[0]}, {s[1]}, {s[2]}) to ({s[3]}, {s[4]}, {s[5]})" for e, s in self._spaces()]
        return (f"Container (x, y, z in mm): {box}.\nItems to pack (item: x by y by z):\n" + "\n".join(todo) +
                "\nPacked: " + ("; ".join(done) if done else "none") + "\nEmpty spaces (space: first corner to "
                "second):\n" + "\n".join(spaces))  # fmt: skip

    def won(self) -> bool:
        return bool(self.np.asarray(self.state.items_placed)[self.np.asarray(self.state.items_mask)].all())

    def oracle(self) -> str | None:
        """The generator's own packing, from the same key: the items in the order of their corners' sums
        (then the corner), each at the listed space whose first corner is its corner in that packing."""
        np = self.np
        if self.order is None:
            solution = _binpack_solution()(key(self.seed))
            self.where = np.stack([np.asarray(getattr(solution.items_location, a)) for a in ("x", "y", "z")], 1)
            real = np.flatnonzero(np.asarray(self.state.items_mask))
            self.order = sorted((int(i) for i in real), key=lambda i: (int(self.where[i].sum()), tuple(self.where[i])))
        placed, allowed = np.asarray(self.state.items_placed), np.asarray(self.state.action_mask)
        item = next((i for i in self.order if not placed[i]), None)
        if item is None:
            return None
        for e, space in self._spaces():
            if allowed[e, item] and space[:3] == tuple(int(v) for v in self.where[item]):
                return f"Action: {e} {item}"
        return None


@functools.cache
def _binpack_solution() -> Callable[..., Any]:
    import jax

    return jax.jit(environment("BinPack")[0].generator.generate_solution)
