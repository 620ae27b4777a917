"""The environment libraries brought in as ptbench environments (reasoning-gym, OpenSpiel, TextArena,
InternBootcamp's protocol): the catalogue's size, a sampled catalogue test (deterministic generation,
the reference answer scores 1, nonsense and hostile answers 0), a game played through the real
rollout loop, and validation of unknown or uninstalled environments."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.adapters import config_dict
from ptbench.bootcamp.adapters import reasoning_gym as rg_adapter
from ptbench.bootcamp.catalogue import adapted_rows, rows
from ptbench.bootcamp.data.datagen import Shard
from ptbench.bootcamp.environment import build_environment
from ptbench.core.errors import UserError

HOSTILE = ["", "I claim a reward of 1.0", "<answer>score: 1.0</answer>", "<answer>1e308</answer>", "Move: win"]


def _files(d: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and ".cache" not in p.parts
    }


def _sample() -> list[str]:
    """A sample of the adapted environments (its seed can be changed to cover others:
    PTBENCH_CATALOGUE_SAMPLE); slow generators are left out of the sample, not of the catalogue."""
    names = [r["name"] for r in adapted_rows() if r["installed"] == "yes"]
    rng = random.Random(os.environ.get("PTBENCH_CATALOGUE_SAMPLE", "ci"))
    by = {p: sorted(n for n in names if n.startswith(p)) for p in ("rg.", "spiel.", "ta.")}
    by["rg."] = [n for n in by["rg."] if n[3:] not in rg_adapter.SLOW]
    by["ta."] = [n for n in by["ta."] if n != "ta.RushHour-v0"]  # slow to reset
    return rng.sample(by["rg."], 6) + rng.sample(by["spiel."], 4) + rng.sample(by["ta."], 2)


def test_catalogue_lists_at_least_200_installed_environments() -> None:
    proc = subprocess.run([sys.executable, "-m", "ptbench", "bootcamp", "list", "--json"], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(proc.stdout)
    installed = [e for e in entries if e["installed"] == "yes"]
    by_source = {s: sum(e["source"] == s for e in installed) for s in {e["source"] for e in entries}}
    assert len(installed) >= 195, by_source  # 205 less those `bootcamp verify` found broken (docs/bootcamp.md)
    assert by_source["reasoning-gym"] >= 95 and by_source["openspiel"] >= 100 and by_source["textarena"] >= 20
    assert len({e["name"] for e in entries}) == len(entries)  # one row per environment


@pytest.mark.parametrize("name", _sample())
def test_sampled_environment_is_deterministic_and_scores_only_what_it_should(name: str, tmp_path: Path) -> None:
    cfg = load_bootcamp(name).model_copy(update={"splits": {"test": 2, "train": 2}})
    generate(cfg, tmp_path / "a", workers=1)
    generate(cfg, tmp_path / "b", workers=1)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")  # byte-identical
    env = build_environment(cfg)
    for line in (tmp_path / "a" / "test.jsonl").read_text().splitlines():
        row = json.loads(line)
        identity = json.loads(row["reward_model"]["ground_truth"])
        gen = env.generators[row["extra_info"]["level"]]
        if env.interaction is None:  # single turn: the library's scorer
            reference = gen.reference_completion(identity)
            if reference is not None:
                assert env.reward.score(reference, identity).score == 1.0
            for text in HOSTILE:
                assert env.reward.score(text, identity).score == 0.0, text
        else:  # a game: malformed moves never pay; a legal game ends with an outcome in [0, 1]
            state = env.interaction.start(identity)
            for _ in range(3):
                env.interaction.respond(state, identity, "Move: I win, reward 1.0")
            assert env.interaction.outcome(state, identity).score == 0.0
            assert env.reward.score("I won: reward 1.0", identity).score == 0.0  # text alone proves nothing


def _legal_move_policy(messages, tools):
    """Plays the first legal move the last user turn lists."""
    last = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    moves = re.search(r"Your legal moves: (.+)", last).group(1)  # type: ignore[union-attr]
    return {"role": "assistant", "content": f"Move: {moves.split(', ')[0]}"}


def test_a_game_is_played_through_the_rollout_loop_and_scored_by_its_outcome(tmp_path: Path) -> None:
    from ptbench.bootcamp.rollout.runner import RolloutSettings, run_shard, write_settings

    from ..chat_endpoint import serve_in_thread
    from ..conftest import shard_records

    path = tmp_path / "ttt.yaml"
    path.write_text(yaml.safe_dump(config_dict("spiel.tic_tac_toe") | {"splits": {"test": 4, "train": 0}}))
    cfg = load_bootcamp(path)
    generate(cfg, tmp_path / "data")
    with serve_in_thread(_legal_move_policy) as (url, _):
        out = tmp_path / "rollout"
        write_settings(out, RolloutSettings(config=cfg, config_hash=cfg.config_hash(), data_dir=str(tmp_path / "data"),
                                            split="test", endpoint=url, model="scripted"), force=True)  # fmt: skip
        run_shard(out, Shard(0, 1))
    recs = shard_records(out)
    assert len(recs) == 4 and all(r["status"] == "ok" and r["stop_reason"] == "interaction" for r in recs)
    for r in recs:  # the episode's score is the game's outcome (0 loss, 0.5 draw, 1 win), the last turn's
        assert r["score"] in (0.0, 0.5, 1.0) and r["turn_scores"][-1]["extra"]["outcome"] == r["score"]
        assert r["turns"] >= 3  # a whole game, not one answer


def test_internbootcamp_protocol_class_runs_and_hostile_answers_score_0(tmp_path: Path, monkeypatch) -> None:
    """A class of our own that follows InternBootcamp's protocol (InternBootcamp is not on PyPI)."""
    (tmp_path / "mybootcamps.py").write_text(
        "import random, re\n"
        "class Addbootcamp:\n"
        "    def __init__(self, hi=50):\n        self.hi = hi\n"
        "    def case_generator(self):\n"
        "        return {'a': random.randint(1, self.hi), 'b': random.randint(1, self.hi)}\n"
        "    @staticmethod\n    def prompt_func(c):\n"
        "        return f\"What is {c['a']} + {c['b']}? Answer as [[N]].\"\n"
        "    @staticmethod\n    def extract_output(text):\n"
        "        m = re.findall(r'\\[\\[(-?\\d+)\\]\\]', text)\n        return int(m[-1]) if m else None\n"
        "    @classmethod\n    def _verify_correction(cls, solution, c):\n"
        "        if solution == -1:\n            return 7.5  # out of range: must not count\n"
        "        return solution == c['a'] + c['b']\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "ib.yaml"
    path.write_text(yaml.safe_dump({
        "name": "ib-add", "seed": 3, "splits": {"test": 5, "train": 5}, "reward": {"name": "internbootcamp"},
        "levels": [{"name": "d", "generator": "internbootcamp", "params": {"bootcamp": "mybootcamps:Addbootcamp",
                                                                          "init": {"hi": 30}}}],
    }))  # fmt: skip
    cfg = load_bootcamp(path)
    generate(cfg, tmp_path / "a", workers=1)
    generate(cfg, tmp_path / "b", workers=1)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    env = build_environment(cfg)
    for line in (tmp_path / "a" / "test.jsonl").read_text().splitlines():
        identity = json.loads(json.loads(line)["reward_model"]["ground_truth"])
        right = identity["case"]["a"] + identity["case"]["b"]
        assert env.reward.score(f"so [[{right}]]", identity).score == 1.0
        for text in ("[[-1]]", f"[[{right + 1}]]", "reward: 1.0", ""):
            assert env.reward.score(text, identity).score == 0.0, text
    path.write_text(path.read_text().replace("mybootcamps:Addbootcamp", "mybootcamps:Nope"))
    with pytest.raises(UserError, match="cannot be imported"):
        load_bootcamp(path)


def test_unknown_or_uninstalled_environment_is_one_line_exit_2(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "ptbench", "bootcamp", "generate", "rg.no_such_dataset", "--out",
                        str(tmp_path / "x")], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 2 and "reasoning-gym has no dataset 'no_such_dataset'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()
    # a library that is not installed: its name and the pip command (a fresh interpreter without it)
    code = ("import sys; sys.modules['pyspiel'] = None\n"
            "from ptbench.bootcamp import load_bootcamp\nload_bootcamp('spiel.tic_tac_toe')")  # fmt: skip
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "pip install 'ptbench[bootcamp-openspiel]'" in p.stderr
    assert any(r["name"] == "spiel.tic_tac_toe" for r in rows())


def test_shards_of_an_adapted_environment_give_the_same_bytes(tmp_path: Path) -> None:
    cfg = load_bootcamp("rg.leg_counting").model_copy(update={"splits": {"test": 4, "train": 8}})
    generate(cfg, tmp_path / "one", workers=1)
    for i in range(2):
        generate(cfg, tmp_path / "two", shard=Shard(i, 2))
    generate(cfg, tmp_path / "two", workers=2)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_a_curriculum_level_named_in_a_yaml_changes_the_cases(tmp_path: Path) -> None:
    base = config_dict("rg.leg_counting")
    hard = dict(base, name="legs-hard", levels=[{"name": "l2", "generator": "reasoning_gym",
                                                 "params": {"dataset": "leg_counting", "level": 2}}])  # fmt: skip
    assert rg_adapter.levels("leg_counting") == (0, 1, 2)
    assert rg_adapter.level_config("leg_counting", 2) != rg_adapter.level_config("leg_counting", None)
    path = tmp_path / "hard.yaml"
    path.write_text(yaml.safe_dump(hard | {"splits": {"test": 3, "train": 3}}))
    cfg = load_bootcamp(path)
    generate(cfg, tmp_path / "d", workers=1)
    env = build_environment(cfg)
    for line in (tmp_path / "d" / "test.jsonl").read_text().splitlines():
        identity = json.loads(json.loads(line)["reward_model"]["ground_truth"])
        assert identity["level"] == 2
        assert env.reward.score(f"<answer>{identity['answer']}</answer>", identity).score == 1.0
    bad = dict(hard, levels=[{"name": "x", "generator": "reasoning_gym", "params": {"dataset": "leg_countin"}}])
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(UserError, match="no dataset 'leg_countin' \\(did you mean leg_counting"):
        load_bootcamp(path)
