from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CAMPAIGNS = REPO / "campaigns" / "bootcamp"


def require(ok: bool, why: str) -> None:
    """In CI a missing real component fails the test; locally it skips."""
    if not ok:
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(why)


@pytest.fixture
def campaign_copy(tmp_path: Path):
    """Copy an example bootcamp YAML into tmp_path, optionally replacing top-level YAML text."""

    def make(name: str, **replace: str) -> Path:
        text = (CAMPAIGNS / f"{name}.yaml").read_text()
        for old, new in replace.items():
            assert old in text, old
            text = text.replace(old, new)
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        return path

    return make


def small_config(tmp_path: Path, name: str = "arithmetic", test: int = 12, train: int = 30, extra: str = "") -> Path:
    """A small copy of an example bootcamp with the given split sizes."""
    import yaml

    data = yaml.safe_load((CAMPAIGNS / f"{name}.yaml").read_text())
    data["splits"] = {"test": test, "train": train}
    path = tmp_path / f"{name}-small.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False) + extra)
    return path


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst)


def make_rollout(
    tmp_path: Path, name: str, endpoint: str, *, test: int = 12, train: int = 4, extra_yaml: str = "", **settings
):
    """Generate a small dataset and write a rollout folder for it; returns the rollout folder."""
    from ptbench.bootcamp import generate, load_bootcamp
    from ptbench.bootcamp.rollout.runner import RolloutSettings, write_settings

    cfg = load_bootcamp(small_config(tmp_path, name, test=test, train=train, extra=extra_yaml))
    generate(cfg, tmp_path / "data")
    out = tmp_path / "rollout"
    args = {"concurrency": 8, "request_timeout_s": 10.0, "max_retries": 6, **settings}
    write_settings(
        out,
        RolloutSettings(
            config=cfg,
            config_hash=cfg.config_hash(),
            data_dir=str(tmp_path / "data"),
            split="test",
            endpoint=endpoint,
            model="scripted",
            **args,
        ),
        force=True,
    )
    return out


def shard_records(out: Path) -> list[dict]:
    from ptbench.core.files import read_jsonl

    return [r for p in sorted((out / "shards").glob("shard-*.jsonl")) for r in read_jsonl(p)]


def rollout_with(tmp_path: Path, endpoint: str, *, base: str = "arithmetic", test: int = 3, train: int = 1, **fields):
    """A rollout folder for `base`'s example YAML with top-level fields replaced (tools, imports, limits...)."""
    import yaml

    from ptbench.bootcamp import generate, load_bootcamp
    from ptbench.bootcamp.rollout.runner import RolloutSettings, write_settings

    data = yaml.safe_load((CAMPAIGNS / f"{base}.yaml").read_text())
    data.update(fields, splits={"test": test, "train": train})
    path = tmp_path / f"{base}-with.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    cfg = load_bootcamp(path)
    generate(cfg, tmp_path / "data")
    out = tmp_path / "rollout"
    write_settings(
        out,
        RolloutSettings(
            config=cfg,
            config_hash=cfg.config_hash(),
            data_dir=str(tmp_path / "data"),
            split="test",
            endpoint=endpoint,
            model="scripted",
            concurrency=8,
            request_timeout_s=10.0,
        ),
        force=True,
    )
    return out
