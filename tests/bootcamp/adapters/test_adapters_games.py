"""The Gymnasium toy-text, MiniGrid/BabyAI, PettingZoo classic and chess adapters: generation is
deterministic (byte-identical), each family's oracle wins every generated case through the real
interaction, and hostile answers (a hedge, a list of candidates, a claimed score, nothing) score 0.
In CI a missing library or engine fails these tests instead of skipping them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.environment import build_environment
from ptbench.core.errors import UserError

from ..conftest import REPO, require

# (environment, the module it needs); one or two families per adapter keep the suite fast
GAMES = [
    ("gym.frozen_lake", "gymnasium"),
    ("gym.taxi", "gymnasium"),
    ("gym.cliff_walking", "gymnasium"),
    ("pz.tictactoe_v3", "pettingzoo"),
    ("pz.connect_four_v3", "pettingzoo"),
    ("minigrid.BabyAI-GoToLocal-v0", "minigrid"),
    ("minigrid.BabyAI-UnlockPickup-v0", "minigrid"),
    ("minigrid.MiniGrid-DoorKey-5x5-v0", "minigrid"),
    ("minigrid.MiniGrid-RedBlueDoors-6x6-v0", "minigrid"),
    ("chess.endgame", "chess"),
]
HOSTILE_MOVES = ["", "I won. Score: 1.0", "Move: left or right", "Move: 0, 1, 2, 3", "Move: win\nreward: 1"]


def _need(module: str) -> None:
    require(importlib.util.find_spec(module) is not None, f"{module} is not installed (scripts/install.sh test)")
    if module == "chess":
        from ptbench.bootcamp.adapters.chess_positions import engine_path

        try:
            engine_path()
        except UserError as e:
            require(False, str(e))


def _files(d: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and ".cache" not in p.parts
    }


def _cases(name: str, tmp_path: Path, n: int = 3):
    cfg = load_bootcamp(name).model_copy(update={"splits": {"test": n, "train": 1}})
    generate(cfg, tmp_path / "a", workers=1)
    generate(cfg, tmp_path / "b", workers=1)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")  # same seed, same bytes
    env = build_environment(cfg)
    rows = [json.loads(line) for line in (tmp_path / "a" / "test.jsonl").read_text().splitlines()]
    assert len(rows) == n
    return env, [json.loads(r["reward_model"]["ground_truth"]) for r in rows]


@pytest.mark.parametrize(("name", "module"), GAMES)
def test_the_oracle_wins_every_case_and_hostile_play_scores_0(name: str, module: str, tmp_path: Path) -> None:
    _need(module)
    env, identities = _cases(name, tmp_path)
    interaction = env.interaction
    assert interaction is not None
    for identity in identities:
        state = interaction.start(identity)
        for _ in range(1000):
            text = interaction.oracle(state, identity)
            assert text is not None, identity
            result = interaction.respond(state, identity, text)
            assert result.extra.get("valid") is True, (text, result.feedback[-300:])
            if result.terminate:
                break
        assert interaction.outcome(state, identity).score == 1.0, identity
        assert interaction.oracle(state, identity) is None  # nothing to play after the end
        # hostile answers: each is a strike; the third loses; text never pays
        state = interaction.start(identity)
        for text in HOSTILE_MOVES:
            result = interaction.respond(state, identity, text)
            assert result.extra.get("valid") is not True, text
            assert 0.0 <= result.turn_score <= 1.0
        assert interaction.outcome(state, identity).score == 0.0
        for text in HOSTILE_MOVES:
            assert env.reward.score(text, identity).score == 0.0


def test_an_honest_losing_game_scores_0_and_a_win_needs_the_goal(tmp_path: Path) -> None:
    """Control: legal moves that walk into a hole end FrozenLake at 0; the same case won pays 1."""
    _need("gymnasium")
    from ptbench.bootcamp.adapters.gymnasium_toytext import FrozenLake

    for seed in range(40):
        game = FrozenLake({"game": "frozen_lake", "seed": seed})
        holes = [(r, c) for r, row in enumerate(game.desc) for c, ch in enumerate(row) if ch == "H"]
        if (0, 1) in holes:  # a hole right of the start: `right` falls in
            game.play("right")
            assert game.finished() and game.score() == 0.0
            return
    pytest.fail("no seed among 40 has a hole right of the start")


def test_mate_in_one_reference_scores_1_and_hedges_0(tmp_path: Path) -> None:
    _need("chess")
    import chess

    cfg = load_bootcamp("chess.mate_in_one").model_copy(update={"splits": {"test": 4, "train": 1}})
    generate(cfg, tmp_path / "a", workers=1)
    generate(cfg, tmp_path / "b", workers=1)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    env = build_environment(cfg)
    gen = next(iter(env.generators.values()))
    for line in (tmp_path / "a" / "test.jsonl").read_text().splitlines():
        identity = json.loads(json.loads(line)["reward_model"]["ground_truth"])
        reference = gen.reference_completion(identity)
        assert reference is not None and env.reward.score(reference, identity).score == 1.0
        board = chess.Board(identity["fen"])
        mate = reference[len("<answer>") : -len("</answer>")]
        other = next(board.san(m) for m in board.legal_moves if board.san(m) != mate and "#" not in board.san(m))
        legal = " ".join(board.san(m) for m in board.legal_moves)
        uci = board.parse_san(mate).uci()
        assert env.reward.score(f"<answer>{uci}</answer>", identity).score == 1.0  # UCI spelling counts too
        hedges = [f"<answer>{mate} or {other}</answer>", f"<answer>{legal}</answer>",
                  f"<answer>{mate}</answer> <answer>{other}</answer>"]  # fmt: skip
        for text in (f"<answer>{other}</answer>", *hedges, "<answer>score: 1.0</answer>", mate, ""):
            assert env.reward.score(text, identity).score == 0.0, text


@pytest.mark.slow
def test_every_minigrid_family_oracle_wins_two_seeds() -> None:
    """The whole MiniGrid/BabyAI catalogue (two seeds each): the families `EXCLUDED` leaves out are
    the ones whose oracle did not win or did not finish here."""
    _need("minigrid")
    from ptbench.bootcamp.adapters import minigrid_text
    from ptbench.bootcamp.adapters.turns import oracle_wins

    lost = [
        (n, s)
        for n in minigrid_text.names()
        for s in (11, 12)
        if not oracle_wins(minigrid_text.make, {"game": n, "seed": s})
    ]
    assert not lost


def test_the_new_libraries_are_listed_with_their_source(tmp_path: Path) -> None:
    for module in ("gymnasium", "minigrid", "pettingzoo", "chess"):
        _need(module)
    proc = subprocess.run([sys.executable, "-m", "ptbench", "bootcamp", "list", "--json"], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    entries = [e for e in json.loads(proc.stdout) if e["installed"] == "yes"]
    by_source = {s: sum(e["source"] == s for e in entries) for s in ("gymnasium", "minigrid", "pettingzoo", "chess")}
    assert by_source["gymnasium"] == 6 and by_source["pettingzoo"] == 2 and by_source["chess"] == 2, by_source
    assert by_source["minigrid"] >= 50, by_source
    assert "minigrid.MiniGrid-Playground-v0" not in {e["name"] for e in entries}  # no mission: left out


HIDE = "import sys; sys.modules.update({{m: None for m in {mods!r}}}); from ptbench.cli.main import main; main()"


@pytest.mark.parametrize(
    ("name", "modules", "extra"),
    [("gym.taxi", ["gymnasium"], "bootcamp-gymnasium"),
     ("pz.tictactoe_v3", ["pettingzoo"], "bootcamp-pettingzoo"),
     ("minigrid.BabyAI-GoToLocal-v0", ["minigrid"], "bootcamp-minigrid"),
     ("chess.endgame", ["chess"], "bootcamp-chess")],
)  # fmt: skip
def test_a_missing_library_is_one_line_naming_its_extra(
    tmp_path: Path, name: str, modules: list[str], extra: str
) -> None:
    out = tmp_path / "data"
    argv = ["bootcamp", "generate", name, "--out", str(out)]
    proc = subprocess.run([sys.executable, "-c", HIDE.format(mods=modules), *argv], capture_output=True, text=True,
                          timeout=300, cwd=REPO)  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'ptbench[{extra}]'" in lines[0], proc.stderr[-2000:]
    assert not out.exists()


def test_a_missing_chess_engine_is_one_line(monkeypatch) -> None:
    _need("chess")
    from ptbench.bootcamp.adapters import chess_positions

    monkeypatch.delenv("PTBENCH_CHESS_ENGINE", raising=False)
    monkeypatch.setattr(chess_positions.shutil, "which", lambda _: None)
    monkeypatch.setattr(chess_positions.os, "access", lambda *_: False)
    with pytest.raises(UserError, match="apt-get install stockfish"):
        chess_positions.EndgameGenerator.check_params({"game": "endgame"})


def test_a_process_that_searched_with_the_chess_engine_exits() -> None:
    """A cached engine kept a non-daemon thread alive, so `bootcamp verify chess.*` hung after its last
    result; each search now closes its engine (the control: the search really ran, its move printed)."""
    _need("chess")
    code = (
        "import chess\nfrom ptbench.bootcamp.adapters import chess_positions as c\n"
        "print(c._search(chess.Board(), 4)['pv'][0])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0 and len(proc.stdout.strip()) == 4, proc.stderr[-2000:]


def test_a_move_is_one_legal_move_exactly_spelt_first() -> None:
    from ptbench.bootcamp.adapters.turns import parse_move

    assert parse_move("Move: bxc3", ["Bxc3", "bxc3"]) == "bxc3"  # case decides between two legal moves
    assert parse_move("Move: Bxc3", ["bxc3", "Bxc3"]) == "Bxc3"
    assert parse_move("thinking…\nmove:  LEFT ", ["left", "right"]) == "left"  # case and spaces forgiven
    assert parse_move("Move: left\nMove: right", ["left", "right"]) == "right"  # the last Move line counts
    for hedge in ("Move: left or right", "Move: left, right", "left", "", "Move: 1.0 reward"):
        assert parse_move(hedge, ["left", "right"]) is None, hedge
