"""TextArena's Stratego (adapters/_textarena_stratego.py): seat 0 never sees a rank of seat 1's army
that no battle revealed (the library showed it seat 1's whole board after every move: the mend keeps
that board for seat 1), the seeded opponent's move list is the library's own, an illegal move is
refused and the second ends the game at 0, the game ends as a draw (0) at its move bound, the test of
a beaten army reads the board (the library's raised once a Miner had taken a Bomb and moved on), and
the oracle wins generated cases through the interaction."""

from __future__ import annotations

import importlib.util
import random
import re
from typing import Any

import pytest

from tests.support import require

require(importlib.util.find_spec("textarena") is not None,
        "TextArena is not installed (pip install 'ptbench[bootcamp-textarena]')")  # fmt: skip

from ptbench.bootcamp.adapters import _textarena_stratego as stratego  # noqa: E402
from ptbench.bootcamp.adapters import textarena as ta  # noqa: E402

NAME = "Stratego-v0"
_ABBREVIATIONS = ("FL", "BM", "SP", "SC", "MN", "SG", "LT", "CP", "MJ", "CL", "GN", "MS")


def _game(seed: int = 3) -> ta.Game:
    return ta.Game({"game": NAME, "seed": seed})


def _boards(text: str) -> list[list[str]]:
    """Each board in `text`: its ten rows, each as its ten cells."""
    found = []
    for block in text.split("Current Board:")[1:]:
        rows = [line.split()[1:] for line in block.splitlines() if re.match(r"^[A-J] ", line)]
        found.append(rows[:10])
    return found


def _seat1_squares(env: Any) -> list[tuple[int, int]]:
    return [(r, c) for r in range(10) for c in range(10) if isinstance(env.board[r][c], dict)
            and env.board[r][c]["player"] == 1]  # fmt: skip


def test_seat_0_is_shown_only_its_own_board_with_every_piece_of_seat_1_hidden() -> None:
    game = _game()
    seen = [game.news()]
    for _ in range(12):
        if game.step(ta.ORACLES[NAME](ta._core(game))):
            break
        seen.append(game.news())
        boards = _boards(seen[-1])
        assert len(boards) == 1  # its own, once; never seat 1's
        env = ta._core(game)
        for r, c in _seat1_squares(env):
            assert boards[0][r][c] == "?"
        mine = [boards[0][r][c] for r in range(10) for c in range(10) if boards[0][r][c] not in ("?", ".", "~")]
        assert mine and all(cell in _ABBREVIATIONS for cell in mine)


def test_without_the_mend_seat_0_was_shown_seat_1s_ranks() -> None:
    """The control: the library's own observation, unmended, shows seat 0 seat 1's army after a move."""
    game = _game()
    game.news()
    env = ta._core(game)
    del env._observe_current_state  # the library's method again
    game.step(ta.ORACLES[NAME](env))
    boards = _boards(game.news())
    assert len(boards) == 2
    leaked = boards[0]  # seat 1's board, broadcast before seat 1 moved
    assert any(leaked[r][c] in _ABBREVIATIONS for r, c in _seat1_squares(env))


def test_the_prompt_is_the_same_whatever_ranks_seat_1s_army_was_dealt(monkeypatch: pytest.MonkeyPatch) -> None:
    from textarena.envs.Stratego.env import StrategoEnv

    prompt = _game().news()
    populate = StrategoEnv._populate_board

    def redealt(self: Any) -> Any:
        board = populate(self)
        squares = [(r, c) for r in range(10) for c in range(10) if isinstance(board[r][c], dict)
                   and board[r][c]["player"] == 1]  # fmt: skip
        ranks = [board[r][c]["rank"] for r, c in squares]
        random.Random(5).shuffle(ranks)  # its own RNG: the game's draws are untouched
        for (r, c), rank in zip(squares, ranks, strict=True):
            board[r][c] = {"rank": rank, "player": 1}
        return board

    monkeypatch.setattr(StrategoEnv, "_populate_board", redealt)
    other = _game()
    assert other.news() == prompt
    monkeypatch.undo()
    assert ta._core(other).board != ta._core(_game()).board  # the probe did deal another army


def test_the_opponents_moves_are_the_librarys_list() -> None:
    for seed in (1, 2):
        game = _game(seed)
        game.news()
        env = ta._core(game)
        for _ in range(15):
            env.state.current_player_id = 1  # the library lists the mover's moves
            env.state.observations[1].clear()
            type(env)._observe_current_state(env)
            env.state.current_player_id = 0
            listed = str(env.state.observations[1][-1][1]).split("Available Moves: ")[1]
            env.state.observations[0].pop()  # seat 0 is never shown it
            assert sorted(stratego.opponent(env)) == sorted(m for m in listed.split(", ") if m), seed
            if game.step(ta.ORACLES[NAME](env)):
                break


def test_an_illegal_move_is_refused_and_the_second_ends_the_game_at_0() -> None:
    game = _game()
    game.news()
    assert not game.step("[A0 A1]")  # onto its own piece
    assert "invalid move" in game.news()
    assert game.step("[A0 A1]") and game.reward == 0.0
    claimed = _game()
    claimed.news()
    assert not claimed.step("I captured the flag. reward: 1.0")
    assert claimed.step("reward: 1.0") and claimed.reward == 0.0


def test_the_game_is_a_draw_paying_0_at_its_move_bound() -> None:
    game = _game()
    game.news()
    ta._core(game).state.turn = stratego.MOVE_LIMIT - 1
    assert game.step(ta.ORACLES[NAME](ta._core(game)))
    assert game.reward == 0.0 and "moves: a draw" in str(ta._core(game).state.game_info[0]["reason"])
    assert ta.TURNS_FOR[NAME] * 2 == stratego.MOVE_LIMIT


def test_a_miner_that_took_a_bomb_and_moved_on_does_not_break_the_game() -> None:
    game = _game()
    game.news()
    env = ta._core(game)
    bomb = next((r, c) for r, c in _seat1_squares(env) if env.board[r][c]["rank"] == "Bomb" and r > 0
                and (r - 1, c) not in env.lakes)  # fmt: skip
    above = (bomb[0] - 1, bomb[1])
    if isinstance(env.board[above[0]][above[1]], dict):
        env.player_pieces[env.board[above[0]][above[1]]["player"]].remove(above)
    env.board[above[0]][above[1]] = {"rank": "Miner", "player": 0}
    env.player_pieces[0].append(above)
    square = lambda cell: f"{chr(cell[0] + 65)}{cell[1]}"  # noqa: E731
    assert not game.step(f"[{square(above)} {square(bomb)}]")
    assert env.board[bomb[0]][bomb[1]] == {"rank": "Miner", "player": 0}
    assert bomb in env.player_pieces[1]  # the library's stale entry
    near = [(bomb[0] + dr, bomb[1] + dc) for dr, dc in ((-1, 0), (0, -1), (0, 1), (1, 0))]
    away = next((n for n in near if 0 <= n[0] < 10 and 0 <= n[1] < 10 and env.board[n[0]][n[1]] is None), None)
    if away is not None:
        game.step(f"[{square(bomb)} {square(away)}]")  # raised a TypeError in the library's own test


def test_the_oracle_wins_generated_cases_through_the_interaction() -> None:
    interaction = ta.TextArenaInteraction()
    for k in range(2):
        case = ta.TextArenaGenerator(game=NAME).case(random.Random(k))
        state = interaction.start(case)
        for _ in range(ta.TURNS_FOR[NAME]):
            if interaction.respond(state, case, interaction.oracle(state, case) or "").terminate:
                break
        assert interaction.outcome(state, case).score == 1.0
        assert ta.TextArenaGenerator(game=NAME).case(random.Random(k)) == case
    assert ta.bootcamp_dict(NAME)["limits"]["max_assistant_turns"] == ta.TURNS_FOR[NAME]
