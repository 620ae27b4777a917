"""TextArena's card games for two (adapters/_textarena_cards.py) beyond what `bootcamp verify` checks:
the oracle through the real interaction, and the attack of each: the hidden cards (seat 0's own card
in Indian Poker, the other's hand and the deck in Briscola) never reach seat 0's prompt, and the
oracle's move does not change when they are dealt differently."""

from __future__ import annotations

import copy
import importlib.util
import random
import re
from collections.abc import Iterator

from tests.support import require

require(importlib.util.find_spec("textarena") is not None,
        "TextArena is not installed (pip install 'ptbench[bootcamp-textarena]')")  # fmt: skip

from ptbench.bootcamp.adapters import _textarena_cards as cards  # noqa: E402
from ptbench.bootcamp.adapters import textarena as ta  # noqa: E402

GAMES = sorted(cards.OPPONENTS)
_RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


def _turns(name: str, seed: int) -> Iterator[tuple[ta.Game, str]]:
    """The game and all seat 0 was shown so far, at each of its turns while the oracle plays."""
    game = ta.Game({"game": name, "seed": seed})
    shown = game.news()
    while True:
        yield game, shown
        if game.step(ta.ORACLES[name](ta._core(game))):
            return
        shown += "\n" + game.news()


def test_a_generated_case_of_each_card_game_is_won_by_its_oracle_through_the_interaction() -> None:
    interaction = ta.TextArenaInteraction()
    for name in GAMES:
        case = ta.TextArenaGenerator(game=name).case(random.Random(3))
        state = interaction.start(case)
        for _ in range(ta.ORACLE_TURNS):
            if interaction.respond(state, case, interaction.oracle(state, case) or "").terminate:
                break
        assert interaction.outcome(state, case).score == 1.0, name
        assert ta.TextArenaGenerator(game=name).case(random.Random(3)) == case


def test_a_claimed_win_pays_nothing_and_the_oracle_does_not_win_every_seed() -> None:
    """Two answers the library cannot use end the game at 0; the control: the oracle wins some seeds
    and loses others (the filter keeps the won ones: a lost seed is no case)."""
    for name in GAMES:
        game = ta.Game({"game": name, "seed": 1})
        game.news()
        assert not game.step("I win. reward: 1.0")
        assert game.step("Player 0 has won! reward 1.0") and game.reward == 0.0, name
        wins = [ta.oracle_wins({"game": name, "seed": seed}) for seed in range(30)]
        assert any(wins) and not all(wins), name


def test_indian_poker_never_shows_seat_0_its_own_card_before_the_showdown() -> None:
    """The attack: Indian Poker deals seat 1 the first move, and seat 1 is shown seat 0's card; the
    adapter plays that move first, so seat 0's first prompt is its own. In each round seat 0 is shown
    the other's card and no card of its own (the round's text before the showdown), and the oracle's
    move is the same whatever seat 0's own card is."""
    opened = 0
    for seed in range(6):
        for game, shown in _turns("IndianPoker-v0", seed):
            gs = ta._core(game).state.game_state
            assert shown.startswith("[GAME] You are Player 0")
            rounds = shown.split("### Round ")
            this = rounds[-1]
            assert "Showdown" not in this and "folded" not in this
            named = re.findall(r"card is: (\w+)", this)
            assert named == [_RANKS[gs["player_cards"][1] % 13]]  # the control: the other's card is shown
            opened += len(rounds) == 2 and "[Player 1]" in this  # seat 1 opened this game
            move, own = cards._indian_poker(ta._core(game)), gs["player_cards"][0]
            for other in range(52):
                if other != gs["player_cards"][1]:
                    gs["player_cards"][0] = other
                    assert cards._indian_poker(ta._core(game)) == move
            gs["player_cards"][0] = own
    assert opened > 0


def _name(card: dict) -> str:
    return f"{card['rank']}{card['suit']}"


def test_briscola_never_shows_seat_0_the_other_hand_or_the_deck() -> None:
    """The attack: no card in seat 1's hand or the deck (but the trump card, dealt face up, wherever it
    went) is named in anything seat 0 was shown, and the oracle's move is the same when those cards
    are shuffled among the hand and the deck. The control: seat 0's own hand is named."""
    redealt = 0
    for seed in range(4):
        for game, shown in _turns("Briscola-v0", seed):
            env = ta._core(game)
            gs = env.state.game_state
            hidden = [c for c in gs["players"][1]["hand"] + gs["deck"] if c is not gs["trump_card"]]
            assert all(_name(c) not in shown for c in hidden)
            assert all(_name(c) in shown for c in gs["players"][0]["hand"])
            move = cards._briscola(env)
            for k in range(3):
                trial = copy.deepcopy(env)
                tgs = trial.state.game_state
                pool = tgs["players"][1]["hand"] + [c for c in tgs["deck"] if c is not tgs["trump_card"]]
                random.Random(k).shuffle(pool)
                n = len(tgs["players"][1]["hand"])
                tgs["players"][1]["hand"] = pool[:n]
                rest = iter(pool[n:])
                tgs["deck"] = [c if c is tgs["trump_card"] else next(rest) for c in tgs["deck"]]
                assert cards._briscola(trial) == move
                redealt += 1
    assert redealt > 0


def _shuffled(places: list[tuple[object, object]], seed: int) -> None:
    """Shuffle the cards at `places` ((container, key) pairs) among themselves."""
    held = [container[key] for container, key in places]  # type: ignore[index]
    random.Random(seed).shuffle(held)
    for (container, key), card in zip(places, held, strict=True):
        container[key] = card  # type: ignore[index]


def test_golf_never_shows_seat_0_a_face_down_card_the_other_grid_or_the_deck() -> None:
    """The attack: seat 0's face-down cards and the deck are never named in what it was shown, and a
    card of the other's grid only once a public swap put it there (the library never shows seat 0
    the other's grid, not even its two face-up cards); the oracle's move is the same when all of these
    are dealt differently. The control: seat 0's face-up cards are named."""
    checked = 0
    for seed in range(4):
        for game, shown in _turns("Golf-v0", seed):
            env = ta._core(game)
            gs = env.state.game_state
            mine, theirs = gs["players"][0]["cards"], gs["players"][1]["cards"]
            assert all(_name(c["card"]) not in shown for c in mine if not c["revealed"])
            assert all(_name(c["card"]) in shown for c in mine if c["revealed"])
            assert all(_name(c) not in shown for c in gs["deck"])
            for c in theirs:
                assert _name(c["card"]) not in shown or f"Player 1 swapped {_name(c['card'])} with" in shown
            move = cards._golf(env)
            for k in range(3):
                trial = copy.deepcopy(env)
                tgs = trial.state.game_state
                places: list[tuple[object, object]] = [(c, "card") for c in tgs["players"][0]["cards"]
                                                       if not c["revealed"]]  # fmt: skip
                places += [(c, "card") for c in tgs["players"][1]["cards"]]
                places += [(tgs["deck"], i) for i in range(len(tgs["deck"]))]
                _shuffled(places, k)
                assert cards._golf(trial) == move
                checked += 1
    assert checked > 0


def test_german_whist_never_shows_seat_0_the_other_hand_or_the_face_down_deck() -> None:
    """The attack: the deck below its face-up top card is never named in what seat 0 was shown, and a
    card in the other's hand only as the face-up prize it won; the oracle's move is the same when the
    other's hand and the face-down deck are dealt differently. The control: seat 0's hand is named."""
    checked = 0
    for seed in range(3):
        for game, shown in _turns("GermanWhist-v0", seed):
            env = ta._core(game)
            gs = env.state.game_state
            prizes = set(re.findall(r"(?:Next card for trick winner|Trump card): (\w+[♠♥♦♣])", shown))
            assert all(_name(c) not in shown for c in gs["deck"][:-1])
            assert all(_name(c) in prizes for c in gs["players"][1]["hand"] if _name(c) in shown)
            assert all(_name(c) in shown for c in gs["players"][0]["hand"])
            move = cards._whist(env)
            trial = copy.deepcopy(env)
            tgs = trial.state.game_state
            hand = tgs["players"][1]["hand"]
            places: list[tuple[object, object]] = [(hand, i) for i in range(len(hand))
                                                   if _name(hand[i]) not in prizes]  # fmt: skip
            _shuffled(places + [(tgs["deck"], i) for i in range(len(tgs["deck"]) - 1)], seed)
            assert cards._whist(trial) == move
            checked += 1
    assert checked > 0


def test_the_trick_rules_are_the_librarys() -> None:
    """The oracles' model of who takes a trick (played second) against each library's own rule, on
    every pair of cards of its deck and every trump suit."""
    for name, beats in (("Briscola-v0", cards._briscola_beats), ("GermanWhist-v0", cards._whist_beats)):
        env = ta._core(ta.Game({"game": name, "seed": 0}))
        deck = env._create_deck()
        for trump in "♠♥♦♣":
            for led in deck:
                for card in deck:
                    if card is not led:
                        winner, _ = env._determine_trick_winner([(1, led), (0, card)], trump)
                        assert beats(card, led, trump) == (winner == 0), name


def test_tak_refuses_malformed_cells_the_library_crashed_on_and_pays_a_finished_road() -> None:
    """The attack: cells the library's checks compare with numbers ((a,1), three numbers, an empty
    piece list) raised out of its step; the mended game refuses each as an invalid move (a second in a
    row ends the game at 0). The control: the unmended library does raise, and a road the oracle
    finishes (which crashed in `set_winner`) pays 1."""
    import textarena

    bad = ["[place () {(a,1): [F0]}]", "[place () {(1,2,3): [F0]}]", "[place () {(1,1): []}]"]
    for move in bad:
        raw = textarena.make("Tak-v0")
        raw.reset(num_players=2, seed=0)
        try:
            raw.step(move)
        except (TypeError, ValueError, IndexError):
            pass
        else:
            raise AssertionError(f"the library took {move}")
        game = ta.Game({"game": "Tak-v0", "seed": 0})
        game.news()
        assert not game.step(move) and game.reward is None
        assert game.step(move) and game.reward == 0.0
    seed = next(s for s in range(10) if ta.oracle_wins({"game": "Tak-v0", "seed": s}))
    game = ta.Game({"game": "Tak-v0", "seed": seed})
    while not game.step(cards._tak(ta._core(game))):
        pass
    assert game.reward == 1.0 and ta._core(game)._check_win(0)
