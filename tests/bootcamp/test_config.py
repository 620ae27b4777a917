"""The bootcamp YAML: strict validation with file:line errors, and the shipped examples load."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptbench.bootcamp import build_environment, load_bootcamp
from ptbench.core.errors import UserError

from .conftest import CAMPAIGNS


@pytest.mark.parametrize("name", ["arithmetic", "mastermind", "sql_explore"])
def test_example_configs_load_and_resolve(name: str) -> None:
    cfg = load_bootcamp(CAMPAIGNS / f"{name}.yaml")
    env = build_environment(cfg)
    assert cfg.name == name and cfg.source == f"bootcamp/{name}"
    assert set(env.generators) == {lv.name for lv in cfg.levels}
    assert len(cfg.config_hash()) == 16 and cfg.data_hash() != cfg.config_hash()


def test_unknown_key_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(
        "name: x\nseed: 1\nlevels:\n  - {name: a, generator: arithmetic}\nsplits: {test: 2}\n"
        "reward: {name: boxed_number}\nlimits:\n  max_turns: 3\n"
    )
    with pytest.raises(UserError) as exc:
        load_bootcamp(path)
    msg = str(exc.value)
    assert f"{path}:8" in msg and "limits.max_turns" in msg and "unknown key" in msg


def test_unknown_component_name_lists_known_ones(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(
        "name: x\nseed: 1\nlevels:\n  - {name: a, generator: arithmetc}\nsplits: {test: 2}\n"
        "reward: {name: boxed_number}\n"
    )
    with pytest.raises(UserError, match="unknown generator 'arithmetc'.*arithmetic"):
        load_bootcamp(path)


def test_sampling_change_keeps_data_hash(tmp_path: Path) -> None:
    text = (CAMPAIGNS / "arithmetic.yaml").read_text()
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(text.replace("temperature: 0.0", "temperature: 0.5"))
    a, b = load_bootcamp(tmp_path / "a.yaml"), load_bootcamp(tmp_path / "b.yaml")
    assert a.data_hash() == b.data_hash() and a.config_hash() != b.config_hash()
