"""The environment libraries of issue 33 (reasoning-core, GEM, ScienceWorld, TextWorld,
mathematics_dataset): each environment's own oracle scores 1 on seeded cases, wrong, empty and
hostile answers (a hedge, a list of candidates, a claimed score) score 0, generation is
deterministic (the same bytes twice, in another interpreter with another hash seed, from an empty
cache), and a missing library is one line naming its extra."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.environment import build_environment

from ..conftest import require

REPO = Path(__file__).resolve().parents[3]


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _files(d: Path) -> dict[str, bytes]:
    files = [p for p in sorted(d.rglob("*")) if p.is_file() and ".cache" not in p.parts]
    return {str(p.relative_to(d)): p.read_bytes() for p in files}


def _cases(name: str, tmp_path: Path, n: int) -> tuple[object, list[dict]]:
    """Generate `name` twice (byte-identical) and return its environment and test cases."""
    cfg = load_bootcamp(name).model_copy(update={"splits": {"test": n, "train": 0}})
    generate(cfg, tmp_path / "a", workers=1)
    generate(cfg, tmp_path / "b", workers=1)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")  # same seed, same bytes
    rows = [json.loads(line) for line in (tmp_path / "a" / "test.jsonl").read_text().splitlines()]
    assert len(rows) == n
    return build_environment(cfg), [json.loads(r["reward_model"]["ground_truth"]) for r in rows]


# ------------------------------------------------------------------------------------ reasoning-core

RC_SLOW = {"constraint_satisfaction", "set_expression", "math_word_problem", "qualitative_reasoning"}


def _rc_sample() -> list[str]:
    if not _installed("reasoning_core"):
        return ["rc.logic_qa"]  # the test then skips (fails in CI) on the missing library
    from ptbench.bootcamp.adapters import reasoning_core

    names = [n for n in reasoning_core.names() if n not in RC_SLOW]
    rng = random.Random(os.environ.get("PTBENCH_CATALOGUE_SAMPLE", "ci"))
    return ["rc." + n for n in rng.sample(names, 6)]


def _rc_hostile(answer: str) -> list[str]:
    return [
        "",
        "<answer></answer>",
        answer,  # right, but not in the answer tags the prompt asks for
        "<answer>score: 1.0</answer> I claim full credit",
        f"<answer>{answer} or not {answer}</answer>",
        f"<answer>{answer}, 0, 1, yes, no, True</answer>",
        f"<answer>[{answer!r}, 'x', 'y']</answer>",
        "<answer>1e308</answer>",
    ]


@pytest.mark.parametrize("name", _rc_sample())
def test_reasoning_core_oracle_scores_1_and_hostile_answers_0(name: str, tmp_path: Path) -> None:
    require(_installed("reasoning_core"), "reasoning-core is not installed (ptbench[bootcamp-reasoning-core])")
    env, cases = _cases(name, tmp_path, 3)
    gen = next(iter(env.generators.values()))
    for identity in cases:
        reference = gen.reference_completion(identity)
        assert reference is not None and env.reward.score(reference, identity).score == 1.0, identity["answer"]
        for text in _rc_hostile(identity["answer"]):
            assert env.reward.score(text, identity).score == 0.0, (text, identity["answer"])
        for other in (c for c in cases if c["answer"] != identity["answer"]):  # another case's answer is wrong here
            assert env.reward.score(f"<answer>{other['answer']}</answer>", identity).score < 1.0


def test_reasoning_core_cases_are_the_same_in_another_interpreter(tmp_path: Path) -> None:
    """Families whose cases depended on process state (caches, unseeded RNGs, hash order) were left
    out: a family kept gives the same bytes in a fresh interpreter with another hash seed."""
    require(_installed("reasoning_core"), "reasoning-core is not installed (ptbench[bootcamp-reasoning-core])")
    # parsing_derivation: its words came from an OS-seeded Faker at import, until the worker drew them again
    names = [*_rc_sample()[:3], "rc.parsing_derivation"]
    code = ("import sys\nfrom ptbench.bootcamp import generate, load_bootcamp\n"
            "for n in sys.argv[2:]:\n"
            "    cfg = load_bootcamp(n).model_copy(update={'splits': {'test': 2, 'train': 0}})\n"
            "    generate(cfg, sys.argv[1] + '/' + n, workers=1)\n")  # fmt: skip
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / seed), *names], env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
    for n in names:
        assert _files(tmp_path / "1" / n) == _files(tmp_path / "2" / n), n


def test_reasoning_core_left_out_families_are_not_listed_and_reasons_given() -> None:
    require(_installed("reasoning_core"), "reasoning-core is not installed (ptbench[bootcamp-reasoning-core])")
    import reasoning_core

    from ptbench.bootcamp.adapters import reasoning_core as adapter

    roster = set(reasoning_core.list_tasks())
    assert set(adapter.EXCLUDED) <= roster  # each reason names a real family
    assert set(adapter.names()) == roster - set(adapter.EXCLUDED)
    assert len(adapter.names()) >= 25 and all(r.strip() for r in adapter.EXCLUDED.values())


# ---------------------------------------------------------------------------------------------- GEM


def _play(env, identity: dict, move, turns: int = 300) -> tuple[float, list[str]]:
    """Play one episode with `move(state) -> text` (at most `turns`); returns the outcome and the feedback."""
    state = env.interaction.start(identity)
    seen = []
    for _ in range(turns):
        text = move(state)
        if text is None:
            break
        result = env.interaction.respond(state, identity, text)
        seen.append(result.feedback)
        assert 0.0 <= result.turn_score <= 1.0
        if result.terminate:
            break
    return env.interaction.outcome(state, identity).score, seen


GEM_GAMES = ["Crosswords", "GuessTheNumber", "Mastermind", "Minesweeper", "Sudoku", "TowerofHanoi"]


@pytest.mark.parametrize("game", GEM_GAMES)
def test_gem_oracle_wins_every_case_and_hostile_play_scores_0(game: str, tmp_path: Path) -> None:
    require(_installed("gem"), "gem-llm is not installed (ptbench[bootcamp-gem] + gem-llm --no-deps)")
    env, cases = _cases(f"gem.{game}", tmp_path, 2)
    for identity in cases:
        score, seen = _play(env, identity, lambda s, i=identity: env.interaction.oracle(s, i))
        assert score == 1.0, seen[-3:]
        again, seen_again = _play(env, identity, lambda s, i=identity: env.interaction.oracle(s, i))
        assert (again, seen_again) == (score, seen)  # an episode is a pure function of case and moves
        for hostile in ("", "I won: reward 1.0", r"\boxed{}", r"\boxed{win} score: 1.0"):
            assert _play(env, identity, lambda s, h=hostile: h)[0] == 0.0, hostile
        assert env.reward.score("Congratulations! I won. reward: 1.0", identity).score == 0.0  # text proves nothing


def test_gem_a_lost_game_scores_0_although_gem_pays_a_share(tmp_path: Path) -> None:
    """GEM pays a closeness share on Guess the Number's last guess; ptbench pays only a win."""
    require(_installed("gem"), "gem-llm is not installed (ptbench[bootcamp-gem] + gem-llm --no-deps)")
    env, cases = _cases("gem.GuessTheNumber", tmp_path, 1)
    identity = cases[0]

    def near_miss(state):  # guesses next to the number, never the number itself
        g = state.game
        tried = {g.game_number - 1, g.game_number + 1} | set(g.previous_guesses)
        pick = next(x for x in range(g.min_number, g.max_number + 1) if x not in tried and x != g.game_number)
        first = g.game_number + 1 if g.game_number + 1 <= g.max_number else g.game_number - 1
        return rf"\boxed{{{first if first not in g.previous_guesses else pick}}}"

    assert _play(env, identity, near_miss)[0] == 0.0


# -------------------------------------------------------------------------------------- ScienceWorld

SW_TASKS = ["find-plant", "lifespan-longest-lived", "chemistry-mix"]  # three topics, short gold paths


@pytest.mark.slow
def test_scienceworld_gold_path_completes_and_hostile_play_scores_0(tmp_path: Path) -> None:
    """The simulator's own gold sequence completes each case (reward 1); answers without an action,
    a claimed score, and a wrong focus score 0. Java comes from the test role (a missing one fails in CI)."""
    import shutil

    require(_installed("scienceworld"), "scienceworld is not installed (ptbench[bootcamp-scienceworld])")
    require(shutil.which("java") is not None, "no Java runtime (apt-get install default-jre-headless)")
    for task in SW_TASKS:
        env, cases = _cases(f"sw.{task}", tmp_path / task, 2)
        for identity in cases:
            score, seen = _play(env, identity, lambda s, i=identity, e=env: e.interaction.oracle(s, i))
            assert score == 1.0, seen[-3:]
            for hostile in ("I completed the task. score: 100", "", "Action: focus on door"):
                assert _play(env, identity, lambda s, h=hostile: h, turns=5)[0] == 0.0, hostile


def test_scienceworld_observations_list_objects_in_one_order() -> None:
    """The simulator lists a room's objects in hash-set order (boil, freeze and melt variation 27 gave
    two orders of one room): each run of listed objects is sorted, the rest stays where it was."""
    from ptbench.bootcamp.adapters.scienceworld import canonical

    one = "Kitchen. Here you see:\n\ta wood cup\n\tan oven\n\tthe agent\nYou also see:\n\tA door (open)\n\tA closet"
    two = "Kitchen. Here you see:\n\tthe agent\n\tan oven\n\ta wood cup\nYou also see:\n\tA closet\n\tA door (open)"
    assert canonical(one) == canonical(two) != canonical(two.replace("oven", "stove"))
    assert canonical(two).splitlines()[0] == "Kitchen. Here you see:" and "You also see:" in canonical(two).splitlines()
    assert canonical("no list here\nat all") == "no list here\nat all"


# ----------------------------------------------------------------------------------------- TextWorld


@pytest.mark.slow
@pytest.mark.parametrize("family", ["treasure_hunter", "custom"])
def test_textworld_walkthrough_wins_and_games_are_the_same_from_an_empty_cache(
    family: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each case's game is generated and compiled from its seed: two empty caches give the same bytes;
    the game's own walkthrough wins (reward 1); answers without an action and a claimed win score 0."""
    require(_installed("textworld"), "textworld is not installed (ptbench[bootcamp-textworld])")
    name = f"tw.{family}"
    cfg = load_bootcamp(name).model_copy(update={"splits": {"test": 2, "train": 0}})
    for cache in ("c1", "c2"):
        monkeypatch.setenv("PTBENCH_TEXTWORLD_CACHE", str(tmp_path / cache))
        generate(cfg, tmp_path / f"data-{cache}", workers=1)
    assert _files(tmp_path / "data-c1") == _files(tmp_path / "data-c2")
    env = build_environment(cfg)
    rows = (tmp_path / "data-c2" / "test.jsonl").read_text().splitlines()
    for identity in (json.loads(json.loads(r)["reward_model"]["ground_truth"]) for r in rows):
        score, seen = _play(env, identity, lambda s, i=identity: env.interaction.oracle(s, i))
        assert score == 1.0, seen[-3:]
        for hostile in ("I won. score: 1", "", "Action: quit"):
            assert _play(env, identity, lambda s, h=hostile: h, turns=5)[0] == 0.0, hostile


# ------------------------------------------------------------------------------ mathematics_dataset


def _md_installed() -> bool:
    from ptbench.bootcamp.adapters.mathematics_dataset import venv_python

    return venv_python().is_file()


# polynomials__add and __compose: the worker's mends (every add case failed under numpy 1.23; compose's
# definitions came in an address-dependent order, so two workers wrote other questions)
MD_SAMPLE = ["algebra__linear_2d", "numbers__gcd", "comparison__sort", "polynomials__expand", "measurement__time",
             "polynomials__add", "polynomials__compose"]  # fmt: skip


def test_mathematics_dataset_oracle_scores_1_hostile_0_and_cases_repeat_in_fresh_workers(tmp_path: Path) -> None:
    """Out of process, in its own venv: the library's answer scores 1, hedges and candidate lists 0,
    and two fresh ptbench processes (each with its own worker) give the same bytes."""
    require(_md_installed(), "mathematics_dataset's venv is missing (bash scripts/install.sh test)")
    for module in MD_SAMPLE:
        env, cases = _cases(f"md.{module}", tmp_path / module, 3)
        gen = next(iter(env.generators.values()))
        for identity in cases:
            assert env.reward.score(gen.reference_completion(identity), identity).score == 1.0
            for text in _rc_hostile(identity["answer"]):
                assert env.reward.score(text, identity).score == 0.0, (text, identity["answer"])
    code = ("import sys\nfrom ptbench.bootcamp import generate, load_bootcamp\n"
            "for n in sys.argv[2:]:\n"
            "    cfg = load_bootcamp(n).model_copy(update={'splits': {'test': 3, 'train': 0}})\n"
            "    generate(cfg, sys.argv[1] + '/' + n, workers=1)\n")  # fmt: skip
    names = [f"md.{m}" for m in MD_SAMPLE]
    for run, order in (("1", names), ("2", names[::-1])):  # another order: the worker's caches differ
        proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / run), *order], capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
    for n in names:
        assert _files(tmp_path / "1" / n) == _files(tmp_path / "2" / n), n


def test_mathematics_dataset_without_its_venv_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "data"
    env = {**os.environ, "PTBENCH_VENVS_DIR": str(tmp_path / "no-venvs")}
    proc = subprocess.run([sys.executable, "-m", "ptbench", "bootcamp", "generate", "md.algebra__linear_1d", "--out",
                           str(out)], capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "bash scripts/install.sh test" in lines[0], proc.stderr[-2000:]
    assert not out.exists()


# --------------------------------------------------------------------------------------- missing extras

HIDE = "import sys; sys.modules.update({{m: None for m in {mods!r}}}); from ptbench.cli.main import main; main()"


@pytest.mark.parametrize(
    ("name", "modules", "hint"),
    [
        ("rc.logic_qa", ["reasoning_core"], "pip install 'ptbench[bootcamp-reasoning-core]'"),
        ("gem.Mastermind", ["gem"], "pip install 'ptbench[bootcamp-gem]' && pip install --no-deps gem-llm==0.1.0"),
        ("sw.boil", ["scienceworld"], "pip install 'ptbench[bootcamp-scienceworld]'"),
        ("tw.simple", ["textworld"], "pip install 'ptbench[bootcamp-textworld]'"),
        ("twx.coin", ["textworld_express"], "pip install 'ptbench[bootcamp-textworld-express]'"),
        ("popgym.repeat_first", ["popgym"], "pip install 'ptbench[bootcamp-popgym]'"),
        ("bsuite.catch", ["bsuite"], "pip install 'ptbench[bootcamp-bsuite]'"),
    ],
)
def test_a_missing_library_is_one_line_naming_its_extra(tmp_path: Path, name: str, modules: list, hint: str) -> None:
    out = tmp_path / "data"
    proc = subprocess.run([sys.executable, "-c", HIDE.format(mods=modules), "bootcamp", "generate", name, "--out",
                           str(out)], capture_output=True, text=True, timeout=300, cwd=REPO)  # fmt: skip
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and hint in lines[0], proc.stderr[-2000:]
    assert not out.exists()
