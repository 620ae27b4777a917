"""POPGym's card games (`popgym.<game>`) through the real interaction on the library's own
environments: the state-reading oracle wins every generated case, cases are the same bytes here and
in a fresh interpreter, hostile play scores 0 (no move, claimed wins, one wrong answer among right
ones, flips that cannot match), the prompts show nothing of the hidden deck, and an honest player
that reads only the rendered text wins Concentration (the game is winnable without the oracle's view)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from ..conftest import require
from .test_adapters_libraries import _cases, _play
from .test_textworld_express import fresh_prompts, prompts

GAMES = ["autoencode", "concentration", "count_recall", "repeat_first", "repeat_previous"]


def _require() -> None:
    require(importlib.util.find_spec("popgym") is not None, "popgym is not installed (ptbench[bootcamp-popgym])")


def _oracle_play(env, identity: dict) -> tuple[float, list[str]]:
    return _play(env, identity, lambda s, i=identity: env.interaction.oracle(s, i))


@pytest.mark.parametrize("game", GAMES)
def test_oracle_wins_every_case_and_hostile_play_scores_0(game: str, tmp_path: Path) -> None:
    _require()
    env, cases = _cases(f"popgym.{game}", tmp_path, 3)
    for identity in cases:
        score, seen = _oracle_play(env, identity)
        assert score == 1.0, seen[-3:]
        for hostile in ("", "I won. reward: 1.0", "Move: spades or hearts", "Move: 1, 2, 3"):
            assert _play(env, identity, lambda s, h=hostile: h)[0] == 0.0, hostile


def test_the_list_matches_the_library_and_each_left_out_game_says_why() -> None:
    _require()
    from ptbench.bootcamp.adapters import popgym as pg

    classes = {name for name in dir(pg.library()) if name.endswith("Easy")}
    assert {g.env_class for g in pg._GAMES.values()} <= classes
    assert set(pg.names()) == set(GAMES) and not set(GAMES) & set(pg.EXCLUDED)
    assert all(reason.strip() for reason in pg.EXCLUDED.values())


def test_prompts_are_the_same_bytes_in_a_fresh_interpreter_and_hide_the_deck(tmp_path: Path) -> None:
    _require()
    cases = []
    for game in GAMES:
        cases += _cases(f"popgym.{game}", tmp_path / game, 2)[1]
    here = prompts("popgym.", cases)
    assert fresh_prompts("popgym.", cases) == here  # (a prompt shows one card: cases differ in the deck to come)
    concentration = next(p for c, p in zip(cases, here, strict=True) if c["game"] == "concentration")
    assert "Face up: none." in concentration and not re.search(r"\d+=(red|black)", concentration)


def test_one_wrong_answer_among_right_ones_scores_0(tmp_path: Path) -> None:
    """Repeat first: the oracle's answer every turn but one wrong one at the end is a loss, and the
    game ends there (the library's share for the right answers is never paid)."""
    _require()
    from ptbench.bootcamp.adapters.popgym import SUITS

    env, cases = _cases("popgym.repeat_first", tmp_path, 2)
    for identity in cases:
        state = env.interaction.start(identity)
        for _ in range(state.limit - 1):
            env.interaction.respond(state, identity, env.interaction.oracle(state, identity))
        assert not state.over()
        right = env.interaction.oracle(state, identity).removeprefix("Move: ")
        result = env.interaction.respond(state, identity, f"Move: {next(s for s in SUITS if s != right)}")
        assert result.terminate and env.interaction.outcome(state, identity).score == 0.0


def test_concentration_flips_that_never_match_lose_and_an_honest_player_wins(tmp_path: Path) -> None:
    """Flipping card 1 over and over matches nothing (the library's flip limit ends it: 0). A player
    that sees only the rendered text, remembers every colour shown and pairs them, wins each case."""
    _require()
    env, cases = _cases("popgym.concentration", tmp_path, 3)
    for identity in cases:
        assert _play(env, identity, lambda s: "Move: 1", turns=200)[0] == 0.0

        seen: dict[int, str] = {}
        matched: set[int] = set()
        first: list[int] = []
        pair: list[tuple[int, int]] = []

        def honest(state, seen=seen, matched=matched, first=first, pair=pair) -> str:
            seen.update((int(p), c) for p, c in re.findall(r"(\d+)=(\w+)", state.view()))
            if pair:  # the last pair's two colours are shown now: same colour, it stays up
                a, b = pair.pop()
                if seen[a] == seen[b]:
                    matched.update((a, b))
            if first:  # the pair's second card: a remembered one of the same colour, else an unseen one
                same = [p for p, c in seen.items() if c == seen[first[0]] and p != first[0] and p not in matched]
                move = same[0] if same else next(p for p in range(1, 53) if p not in seen)
                pair.append((first.pop(), move))
                return f"Move: {move}"
            known: dict[str, int] = {}
            for p, c in seen.items():  # a remembered pair first, else an unseen card
                if p not in matched and c in known:
                    first.append(known[c])
                    return f"Move: {known[c]}"
                if p not in matched:
                    known[c] = p
            first.append(next(p for p in range(1, 53) if p not in seen))
            return f"Move: {first[0]}"

        assert _play(env, identity, honest, turns=200)[0] == 1.0
