"""OpenSpiel's games as multi-turn ptbench environments (`pip install 'ptbench[bootcamp-openspiel]'`).

Each sequential, default-loadable game with one or two players is an environment `spiel.<game>`, and
so are the games listed below it: simultaneous-move games played turn-based (`SIMULTANEOUS`), games of
three or more seats (`MORE_SEATS`, every other seat random), and games that need parameters (`PARAMS`).
The model plays one seat against seeded uniform-random opponents; chance events are drawn from
the game's own chance distribution with the same per-episode seed, so an episode is a pure function
of its case (game, seed, seat) and the model's moves. Every user turn shows the state as the
model's seat observes it and its legal moves; the model answers `Move: <move>` with one of them.
A move that does not parse or is not legal is refused with the list of legal moves, and the third
such answer ends the game as a loss. The reward is the outcome, the seat's return scaled from the
game's [min, max] utility to [0, 1]; an unfinished game (the turn limit came first) scores 0.
"""

from __future__ import annotations

import functools
import random
import re
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config, outcome_result
from ptbench.bootcamp.adapters.turns import first_case
from ptbench.bootcamp.api import (
    Generator,
    Identity,
    Interaction,
    InteractionResult,
    RewardResult,
    register_generator,
    register_interaction,
)
from ptbench.core.errors import UserError

EXTRA = "bootcamp-openspiel"
PREFIX = "spiel."
SOURCE = "openspiel"
DOMAIN = "OpenSpiel games (multi-turn, against a seeded random opponent)"
# of a task family another environment is counted as (bootcamp/families.py): chess is the chess adapter's;
# the matrix games are one family, a one-shot payoff matrix (their payoffs its parameters, as matrix_brps's)
_MATRIX = ["spiel.matrix_bos", "spiel.matrix_cd", "spiel.matrix_coordination", "spiel.matrix_mp", "spiel.matrix_pd",
           "spiel.matrix_sh", "spiel.matrix_shapleys_game"]  # fmt: skip
# Variants of one game (another view, size, seat count, board or cursor) and another source's family count once.
SAME_FAMILY = {"spiel.chess": "chess.endgame", **dict.fromkeys(_MATRIX, "spiel.matrix_rps"),
               "spiel.cliff_walking": "gym.cliff_walking", "spiel.liars_dice_ir": "spiel.liars_dice",
               "spiel.phantom_ttt_ir": "spiel.phantom_ttt", "spiel.dark_hex_ir": "spiel.dark_hex",
               "spiel.tiny_bridge_4p": "spiel.tiny_bridge_2p", "spiel.repeated_leduc_poker": "spiel.leduc_poker",
               "spiel.cursor_go": "spiel.go", "spiel.tiny_hanabi": "spiel.hanabi"}  # fmt: skip
STRIKES = 3  # unreadable or illegal answers before the game counts as lost
_MOVE = re.compile(r"^\s*move\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_SHOWN_MOVES = 60  # legal moves listed per turn (games like Go have hundreds)
TURNS = 200  # model turns an episode may take, unless the game's own length bound needs more (LONG)
EXCLUDED = {
    "crossword": "moves are action structs, not the action list this adapter plays",
    "quoridor": "OpenSpiel itself warns that its implementation has known issues",
    "matrix_brps": "biased rock-paper-scissors: a payoff variant of matrix_rps",
    "matrix_rpsw": "rock-paper-scissors-water: a payoff variant of matrix_rps",
    "matching_pennies_3p": "three-player matching pennies: a variant of matrix_mp",
    "repeated_poker": "repeated hands of universal_poker (already in): a parameter variant",
    "efg_game": "plays a game read from a file it names, none shipped with the wheel",
    "nfg_game": "plays a game read from a file it names, none shipped with the wheel",
    "kriegspiel": "no oracle here finishes every game within 200 turns: a random player outlasted them in 16 of 20 "
    "games (median 246 turns), a material-greedy one in 2-3 of 20 (a random opponent takes the pieces it leaves "
    "hanging, then 50-move draws), one that looks a reply ahead in 13 of 20 (1.7 s a case)",
} | {
    g: "a transform of another game (its `game` parameter), not a game of its own"
    for g in ("add_noise", "cached_tree", "coop_to_1p", "misere", "normal_form_extensive_game",
              "restricted_nash_response", "start_at", "turn_based_simultaneous_game", "zerosum")
}  # fmt: skip
# Simultaneous-move games, played through `pyspiel.convert_to_turn_based`: the seats' moves of one
# round are taken in seat order and applied together. The model never sees a move made before its own
# in the round: its view is the wrapped state's observation string, which shows only the observer's own
# buffered move (the wrapper's `str(state)` shows them all, "Partial joint action", so it is never used);
# the random opponents draw from their legal moves alone, which do not depend on the model's move.
SIMULTANEOUS = {"blotto", "capture_the_flag", "coop_box_pushing", "goofspiel", "laser_tag", "markov_soccer",
                "matrix_bos", "matrix_cd", "matrix_coordination", "matrix_mp", "matrix_pd", "matrix_rps",
                "matrix_sh", "matrix_shapleys_game", "oshi_zumo", "pathfinding", "snake", "repeated_game"}  # fmt: skip
# Games of three or more seats (none accepts two): the model plays one, every other seat is random.
MORE_SEATS = {"bridge", "colored_trails", "dou_dizhu", "euchre", "hearts", "oh_hell", "skat", "social_deduction",
              "spades", "tarok", "tiny_bridge_4p"}  # fmt: skip
# Games loaded with parameters (OpenSpiel's own names): one that is not default-loadable, and others
# whose default would not fit an episode.
PARAMS: dict[str, dict[str, Any]] = {
    # The iterated prisoner's dilemma: ten rounds, each player seeing the last round's moves.
    "repeated_game": {"stage_game": {"name": "matrix_pd"}, "num_repetitions": 10},
    # The card play is played out, not scored by a double-dummy solver after the auction (tens of
    # milliseconds a move, and the model would never play a card).
    "bridge": {"use_double_dummy_result": False},
}
# A horizon of 100 rounds, not 1000: an episode must end within TURNS (the game scores its end).
PARAMS |= {g: {"horizon": 100} for g in ("capture_the_flag", "laser_tag", "markov_soccer", "oshi_zumo", "pathfinding")}
# The games' own length rules, shortened so a game fits an episode: Chinese checkers' 1000-move cap
# made every random game a draw at about 530 model turns (at 250, 30 random games took at most 174 of
# a seat's turns, jumps counted; a real player needs a few dozen); 2048 to the 256 tile, not 2048: a
# player greedy for merges needed over 200 turns in 39 of 100 games to 2048, so a better player scored
# 0 more often (at 256: at most 205 turns in 100 games, random or greedy; its limit is TURNS_FOR's).
PARAMS |= {"chinese_checkers": {"max_moves": 250}, "2048": {"max_tile": 256}}
# Turn limits of their own: phantom go's refused moves (a point its hidden stones hold) take a turn
# and are outside its 324-move bound (300 random games: median 134 model turns, at most 231).
TURNS_FOR = {"phantom_go": 400, "2048": 300}
# Games whose oracle plays for material (`_greedy_move`): a random player's chess or shogi outlasted
# 200 turns in 4 and 9 of 20 games; taking pieces ends them sooner (chess: median 36 model turns).
GREEDY = {"chess", "shogi"}
# Games a random game can outlast TURNS in, but that end within their own length bound
# (`max_game_length()`): their turn limit is that bound over the seats, so the game always ends.
LONG = {"go", "hive", "xiangqi", "stones_and_gems"}


def library() -> ModuleType:
    return load_library("pyspiel", "OpenSpiel", EXTRA)


def names() -> list[str]:
    """Sequential games with one or two players that load with their default parameters, and the
    games listed above (played turn-based, with more seats or with parameters)."""
    pyspiel = library()
    seq = pyspiel.GameType.Dynamics.SEQUENTIAL
    listed = SIMULTANEOUS | MORE_SEATS | set(PARAMS)
    return sorted(
        g.short_name
        for g in pyspiel.registered_games()
        if (
            (
                g.default_loadable
                and g.dynamics == seq
                and g.min_num_players <= 2
                and not g.short_name.startswith("mfg_")
            )
            or g.short_name in listed
        )
        and g.short_name not in EXCLUDED
    )


def check_game(name: Any) -> str:
    if not isinstance(name, str) or name not in names():
        raise UserError(f"OpenSpiel has no game {name!r} that ptbench plays; `ptbench bootcamp list` shows them")
    return name


def describe(name: str) -> dict[str, str]:
    return {"domain": "game (OpenSpiel)", "tools": "-", "levels": "default"}


@functools.cache
def _load(name: str):
    pyspiel = library()
    game = pyspiel.load_game(name, PARAMS[name]) if name in PARAMS else pyspiel.load_game(name)
    if name in SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    return game, pyspiel


def _episode_game(name: str, seed: int):
    """The game one episode plays. A game that draws chance from its own RNG (sampled stochastic,
    `rng_seed`) is loaded afresh with the episode's seed: a shared one would deal by how many
    episodes came before in the process, and a fresh one with the default seed deals every episode
    the same cards."""
    game, pyspiel = _load(name)
    kind = game.get_type()
    if (
        kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        and "rng_seed" in kind.parameter_specification
    ):
        game = pyspiel.load_game(name, PARAMS.get(name, {}) | {"rng_seed": int(seed) % (2**31 - 1)})
    return game, pyspiel


def turn_limit(name: str) -> int:
    """TURNS (or TURNS_FOR's), or for a LONG game its own length bound shared over the seats (it always
    ends there)."""
    if name not in LONG:
        return TURNS_FOR.get(name, TURNS)
    game, _ = _load(name)
    return max(TURNS, -(-game.max_game_length() // game.num_players()) + 1)


class Match:
    """One game in progress: the state, the episode's RNG (chance and opponent), strikes, outcome."""

    def __init__(self, identity: Identity) -> None:
        self.game, self.pyspiel = _episode_game(identity["game"], identity["seed"])
        self.seat = int(identity["player"])
        self.turn_based = identity["game"] in SIMULTANEOUS
        self.rng = random.Random(f"openspiel:{identity['game']}:{identity['seed']}")
        self.state = self.game.new_initial_state()
        self.strikes = 0
        self.lost_by_strikes = False
        self.advance()

    def advance(self) -> None:
        """Play chance events and the opponent until the model's seat is to move or the game ends."""
        while not self.state.is_terminal() and self.state.current_player() != self.seat:
            if self.state.is_chance_node():
                outcomes, probs = zip(*self.state.chance_outcomes(), strict=True)
                self.state.apply_action(self.rng.choices(outcomes, weights=probs)[0])
            else:
                self.state.apply_action(self.rng.choice(self.state.legal_actions()))

    def moves(self) -> dict[str, int]:
        return {self.state.action_to_string(self.seat, a): a for a in self.state.legal_actions(self.seat)}

    def board(self) -> str:
        """The state as the seat may see it: its observation, else its information state; the whole
        state (`str`) only in a perfect-information game (it shows hidden cards, dice and boards)."""
        kind = self.game.get_type()
        if kind.provides_observation_string or self.turn_based:
            return self.state.observation_string(self.seat)
        if kind.provides_information_state_string:
            return self.state.information_state_string(self.seat)
        if kind.information == self.pyspiel.GameType.Information.PERFECT_INFORMATION:
            return str(self.state)
        raise UserError(f"OpenSpiel's {kind.short_name} shows no view of its state for one player")

    def view(self) -> str:
        board = self.board()
        moves = list(self.moves())
        shown = ", ".join(moves[:_SHOWN_MOVES]) + (f", … ({len(moves)} in all)" if len(moves) > _SHOWN_MOVES else "")
        return f"State:\n{board}\nYour legal moves: {shown}\nReply with one line `Move: <move>`."

    def score(self) -> float:
        if self.lost_by_strikes:
            return 0.0
        if not self.state.is_terminal():
            return 0.0
        low, high = self.game.min_utility(), self.game.max_utility()
        value = self.state.returns()[self.seat]
        return 1.0 if high <= low else min(1.0, max(0.0, (value - low) / (high - low)))


@register_generator("openspiel")
class OpenSpielGenerator(Generator):
    """Params: game (an OpenSpiel short name). A case is (game, seed, the model's seat)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.game = check_game(params.get("game"))

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        check_game(params.get("game"))

    def case(self, rng: random.Random) -> Identity:
        """A seed and seat whose game gives the model a move: in some games the others can end it
        first (euchre: the partner who goes alone sits the model out), and the outcome of a game
        the model never played would be paid to any answer."""
        game, _ = _load(self.game)
        return first_case(
            lambda: {"game": self.game, "seed": rng.getrandbits(32), "player": rng.randrange(game.num_players())},
            lambda identity: not Match(identity).state.is_terminal(),
            self.game,
            "the model's seat moved in none",
        )

    def prompt(self, identity: Identity) -> str:
        match = Match(identity)
        name = match.game.get_type().long_name
        return f"Let's play {name}. You are player {match.seat}.\n" + match.view()

    def dedup_key(self, identity: Identity) -> str:
        return f"{identity['game']}/{identity['seed']}/{identity['player']}"


@register_interaction("openspiel")
class OpenSpielInteraction(Interaction):
    oracle_wins = False  # the seeded random opponent and chance can beat any player

    def start(self, identity: Identity) -> Match:
        return Match(identity)

    def oracle(self, state: Match, identity: Identity) -> str | None:
        """A scripted player: a move that wins on the spot if there is one (the library's own returns
        after it), else a seeded random legal move; always in the exact text the prompt lists."""
        if state.state.is_terminal():
            return "Move: (the game is over)"
        moves = state.moves()
        best = state.game.max_utility()
        # In a round of a simultaneous game the opponents' moves may already be buffered: looking
        # ahead would read them, so there the oracle plays at random.
        for text, action in {} if state.turn_based else moves.items():
            after = state.state.clone()
            after.apply_action(action)
            if after.is_terminal() and after.returns()[state.seat] >= best:
                return f"Move: {text}"
        rng = random.Random(f"oracle:{identity['seed']}:{len(state.state.history())}")
        if identity["game"] in GREEDY:
            return f"Move: {_greedy_move(state, moves, rng)}"
        return f"Move: {rng.choice(sorted(moves))}"

    def respond(self, state: Match, identity: Identity, assistant_text: str) -> InteractionResult:
        if state.state.is_terminal():  # a game that ended before the model's first move
            return InteractionResult(terminate=True, feedback="The game is over.", turn_score=state.score())
        found = _MOVE.findall(assistant_text or "")
        moves = state.moves()
        move = found[-1] if found else None
        if move not in moves and move is not None:  # forgive case and spacing, nothing else
            move = next((m for m in moves if m.replace(" ", "").lower() == move.replace(" ", "").lower()), None)
        if move is None or move not in moves:
            state.strikes += 1
            if state.strikes >= STRIKES:
                state.lost_by_strikes = True
                return InteractionResult(terminate=True, feedback="Too many invalid moves: you lose.", turn_score=0.0,
                                         extra={"valid": False, "outcome": 0.0})  # fmt: skip
            return InteractionResult(terminate=False, feedback="That is not one of your legal moves.\n" + state.view(),
                                     extra={"valid": False})  # fmt: skip
        state.state.apply_action(moves[move])
        state.advance()
        if state.state.is_terminal():
            score = state.score()
            return InteractionResult(terminate=True, feedback=f"Game over. Your result: {score:.2f} (0 loss … 1 win).",
                                     turn_score=score, extra={"valid": True, "outcome": score})  # fmt: skip
        return InteractionResult(terminate=False, feedback=state.view(), extra={"valid": True})

    def outcome(self, state: Match, identity: Identity) -> RewardResult:
        """The episode's reward: the game's outcome for the model's seat (not any text)."""
        score = state.score()
        return outcome_result(score)


# Piece values for the greedy oracle (chess's usual ones; shogi's by the same letters, its own else 3).
_VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9, "k": 0, "l": 3, "s": 5, "g": 6}


def _greedy_move(match: Match, moves: dict[str, int], rng: random.Random) -> str:
    """A seeded choice among the moves that leave the mover the most material over the other side,
    then the other side the fewest replies (which drives toward mate), never none (stalemate). The
    state's FEN (chess) or SFEN (shogi) has a letter a piece, the mover's in upper case when its
    side field is 'w' in FEN or 'b' in SFEN."""
    mine_upper = str(match.state).split(" ")[1] == ("b" if match.game.get_type().short_name == "shogi" else "w")

    def balance(state: Any) -> int:
        board = str(state).split(" ")[0]
        return sum(_VALUES.get(c.lower(), 3) * (1 if c.isupper() == mine_upper else -1) for c in board if c.isalpha())

    scored = []
    for text, action in sorted(moves.items()):
        after = match.state.clone()
        after.apply_action(action)
        if not after.is_terminal():  # a win was taken before; a draw or loss is no aim
            scored.append(((balance(after), -len(after.legal_actions())), text))
    if not scored:
        return rng.choice(sorted(moves))
    best = max(key for key, _ in scored)
    return rng.choice([text for key, text in scored if key == best])


def bootcamp_dict(game: str, **splits: int) -> dict[str, Any]:
    return game_config(
        f"{PREFIX}{check_game(game)}", "openspiel", game, turns=turn_limit(game), max_tokens=256, **splits
    )
