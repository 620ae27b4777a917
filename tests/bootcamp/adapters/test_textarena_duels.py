"""TextArena's later two-player games and the puzzle solvers (adapters/_textarena_duels.py,
_textarena_tron.py, _textarena_santorini.py, _textarena_puzzles.py) beyond what `bootcamp verify`
checks: each oracle's model of the rules against the library's own, what seat 0 is shown of hidden
state, and the solvers through the real game."""

from __future__ import annotations

import copy
import importlib.util
import random
import re
from collections.abc import Iterator

import pytest

from tests.support import require

require(importlib.util.find_spec("textarena") is not None,
        "TextArena is not installed (pip install 'ptbench[bootcamp-textarena]')")  # fmt: skip

from ptbench.bootcamp.adapters import _textarena_duels as duels  # noqa: E402
from ptbench.bootcamp.adapters import _textarena_puzzles as puzzles  # noqa: E402
from ptbench.bootcamp.adapters import _textarena_tron as tron  # noqa: E402
from ptbench.bootcamp.adapters import textarena as ta  # noqa: E402

DUELS = sorted({*duels.OPPONENTS, *tron.OPPONENTS, "SantoriniBaseFixed-v0"})


def _turns(name: str, seed: int) -> Iterator[ta.Game]:
    """The game at each of seat 0's turns while the oracle plays it (to the end)."""
    game = ta.Game({"game": name, "seed": seed})
    game.news()
    while True:
        yield game
        if game.step(ta.ORACLES[name](ta._core(game))):
            return


def test_a_generated_case_of_each_duel_is_won_by_its_oracle_through_the_interaction() -> None:
    interaction = ta.TextArenaInteraction()
    for name in DUELS:
        case = ta.TextArenaGenerator(game=name).case(random.Random(7))
        state = interaction.start(case)
        for _ in range(ta.ORACLE_TURNS):
            if interaction.respond(state, case, interaction.oracle(state, case) or "").terminate:
                break
        assert interaction.outcome(state, case).score == 1.0, name
        assert ta.TextArenaGenerator(game=name).case(random.Random(7)) == case  # deterministic in the rng


def test_every_duel_pays_nothing_to_a_claimed_win() -> None:
    """Answers the library cannot use end the game once its allowance of refused moves is spent (two
    in most games, one in Surround and Snake), and it pays 0."""
    for name in DUELS:
        if name == "SantoriniBaseFixed-v0":
            continue  # below: the library does not end that game
        game = ta.Game({"game": name, "seed": 1})
        game.news()
        assert game.step("I win. reward: 1.0") or game.step("Player 0 has won! reward 1.0"), name
        assert game.reward == 0.0, name


def test_santorini_ends_at_0_once_the_refused_moves_allowance_is_spent() -> None:
    """The attack: Santorini allows ten refused moves; the eleventh marks seat 0 out, but the library
    plays on, skipping seat 0 for good (its opponent would move alone, or forever once it too is out).
    The adapter ends the episode there at 0; the control, a clean game of the same seed, pays."""
    game = ta.Game({"game": "SantoriniBaseFixed-v0", "seed": 4})
    game.news()
    assert not any(game.step("I win. reward: 1.0") for _ in range(10))
    assert game.step("I win. reward: 1.0") and game.reward == 0.0
    assert ta._core(game).state.game_info[0]["invalid_move"] and not ta._core(game).state.done
    assert ta.oracle_wins({"game": "SantoriniBaseFixed-v0", "seed": 4})


def test_the_capture_games_move_lists_are_the_librarys_rules() -> None:
    """Crusade: the oracle's model lists exactly the library's own legal moves for both seats, at every
    turn of played games. Alquerque (no list in the library): every move the model lists is accepted
    by the library's step, and every other pair of squares is refused, on copies of the game."""
    for seed in range(3):
        for game in _turns("Crusade-v0", seed):
            env, board = ta._core(game), duels._board(ta._core(game))
            for pid in (0, 1):
                listed = {duels._CRUSADE.text(m) for m in duels._CRUSADE.moves(board, pid)}
                assert listed == set(env._legal_moves_for_player(pid))
    squares = [f"{f}{r}" for f in "abcde" for r in "12345"]
    for k, game in enumerate(_turns("Alquerque-v0", 2)):
        if k not in (0, 3, 6):
            continue
        env = ta._core(game)
        listed = {duels._ALQUERQUE.text(m) for m in duels._ALQUERQUE.moves(duels._board(env), 0)}
        for a in squares:
            for b in squares:
                trial = copy.deepcopy(env)
                trial.step(f"[{a} {b}]")
                accepted = trial.state.turn == env.state.turn + 1
                assert accepted == (f"[{a} {b}]" in listed), (k, a, b)


def test_memory_game_oracle_plays_from_what_was_shown_not_from_the_deal() -> None:
    """The attack: the face-down cards never appear in what seat 0 is shown, and the oracle's move
    does not change when the cards nobody has turned up yet are dealt differently."""
    for seed in range(4):
        for game in _turns("MemoryGame-v0", seed):
            env = ta._core(game)
            gs, shown = env.state.game_state, set()
            for _, message in env.state.logs:
                for m in duels._SHOWN.finditer(str(message)):
                    shown |= {(int(m[1]), int(m[2])), (int(m[3]), int(m[4]))}
            hidden = [(r, c) for r in range(4) for c in range(4)
                      if (r, c) not in shown and (r, c) not in gs["matched_positions"]]  # fmt: skip
            move = duels._memory_game(env)
            symbols = [gs["board"][r][c] for r, c in hidden]
            for shift in (1, 2):
                redealt = copy.deepcopy(env)
                for (r, c), symbol in zip(hidden, symbols[shift:] + symbols[:shift], strict=True):
                    redealt.state.game_state["board"][r][c] = symbol
                assert duels._memory_game(redealt) == move
    first = ta.Game({"game": "MemoryGame-v0", "seed": 0}).news()
    board = first[first.index("Current board") :].splitlines()[2:6]
    assert all(set(line.split()[1:]) == {"."} for line in board)  # nothing face up at the start


def test_high_society_never_shows_seat_0_the_sealed_bid_waiting_for_it() -> None:
    """The attack: after an auction the winner bids first, so seat 1's sealed bid is often waiting
    when seat 0 is asked. It never appears in what seat 0 is shown (seat 1's answers go to seat 1
    alone), the oracle's bid is the same whatever that bid is, and no card still in the shuffled
    deck is named."""
    waited = 0
    for seed in range(3):
        shown = ""
        for game in _turns("HighSociety-v0", seed):
            env = ta._core(game)
            shown += game.news() if shown else game.seen
            assert "[Player 1]" not in shown
            auctioned = {int(n) for n in re.findall(r"Prestige card: (\d+)", shown)}
            assert auctioned and not auctioned & set(env.state.game_state["prestige_deck"])
            pending = env.state.game_state["pending_bids"]
            if 1 in pending:
                waited += 1
                move, sealed = duels._high_society(env), pending[1]
                for other in env.state.game_state["player_money"][1]:
                    pending[1] = other
                    assert duels._high_society(env) == move
                pending[1] = sealed
    assert waited > 0


def test_fifteen_puzzle_solver_wins_solvable_shuffles_and_skips_unsolvable_ones() -> None:
    goal = puzzles._GOAL
    assert puzzles._fifteen_solvable(goal)
    assert not puzzles._fifteen_solvable((2, 1, *goal[2:]))  # one swap: the parity rule says never
    wins = {seed: ta.oracle_wins({"game": "FifteenPuzzle-v0", "seed": seed}) for seed in range(8)}
    for seed, won in wins.items():
        game = ta.Game({"game": "FifteenPuzzle-v0", "seed": seed})
        board = tuple(t or 0 for row in ta._core(game).board for t in row)
        assert won == puzzles._fifteen_solvable(board), seed  # every solvable one is won, in 100 turns
    assert any(wins.values()) and not all(wins.values())


def test_a_solved_fifteen_puzzle_pays_one_and_a_wrong_move_does_not() -> None:
    """The library's solved board calls a method its single-player state lacks; the adapter's mend
    pays the library's win (1.0). A game one move short of solved: the last move wins, another not."""
    seed = next(s for s in range(20) if ta.oracle_wins({"game": "FifteenPuzzle-v0", "seed": s}))
    game = ta.Game({"game": "FifteenPuzzle-v0", "seed": seed})
    while True:
        board = tuple(t or 0 for row in ta._core(game).board for t in row)
        last = ta.ORACLES["FifteenPuzzle-v0"](ta._core(game))
        if dict(puzzles._fifteen_next(board))[last[1:-1]] == puzzles._GOAL:
            break
        assert not game.step(last)
    wrong = copy.deepcopy(game)
    wrong_move = next(f"[{n}]" for n, _ in puzzles._fifteen_next(board) if f"[{n}]" != last)
    assert not wrong.step(wrong_move) and wrong.reward is None
    assert game.step(last) and game.reward == 1.0


def test_slitherlink_loops_are_the_librarys_solutions() -> None:
    """Each loop the solver lists, drawn with its own edge counts as the clues, is solved by the
    library's own test; an empty board and the loop with one edge missing are not."""
    loops = puzzles._loops(4, 4)
    assert len(loops) == len({(h, v) for h, v, _ in loops}) > 1000
    env = ta._core(ta.Game({"game": "Slitherlink-v0", "seed": 0}))
    env.h_edges, env.v_edges = set(), set()
    assert not env._is_solved()
    for h, v, around in random.Random(0).sample(loops, 40):
        env.clues = [list(around[r * 4 : r * 4 + 4]) for r in range(4)]  # every cell a clue
        env.h_edges, env.v_edges = set(h), set(v)
        assert env._is_solved()
        env.h_edges = set(sorted(h)[1:])
        assert not env._is_solved()


def test_santorini_move_model_is_the_librarys_list() -> None:
    """At each of seat 0's turns the oracle's move model lists exactly the library's own valid moves
    (the list the prompt shows), so the oracle never answers a move the library refuses."""
    from ptbench.bootcamp.adapters import _textarena_santorini as santorini

    for seed in range(3):
        for game in _turns("SantoriniBaseFixed-v0", seed):
            env = ta._core(game)
            listed = {santorini.text(m, 0) for m in santorini.moves(env.board, 0)}
            assert listed == set(santorini.opponent(env))  # the library's list for the player to move


def test_snake_death_model_agrees_with_the_library() -> None:
    """At each of seat 0's turns of played games, for every pair of directions: the oracle's model of
    who dies is what the library does with those two moves (on copies of the game)."""
    for seed in range(3):
        for k, game in enumerate(_turns("Snake-v0", seed)):
            if k % 3:
                continue
            env = ta._core(game)
            for mine, cell in tron._snake_heads(env, 0):
                for theirs, reply in tron._snake_heads(env, 1):
                    trial = copy.deepcopy(env)
                    trial.step(f"[{mine}]")
                    trial.step(f"[{theirs}]")
                    died = {pid for pid, s in trial.state.game_state["snakes"].items() if not s.alive}
                    assert tron._snake_deaths(env, {0: cell, 1: reply}) == died, (seed, k, mine, theirs)


def test_an_opponent_that_keeps_the_turn_past_the_bound_ends_the_episode_at_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ta, "OPPONENT_MOVES", 1)  # the control: one move in a row is allowed
    game = ta.Game({"game": "SimpleTak-v0", "seed": 0})
    assert not game.step("[0]") and game.reward is None
    monkeypatch.setattr(ta, "OPPONENT_MOVES", 0)
    assert game.step("[1]") and game.reward == 0.0
