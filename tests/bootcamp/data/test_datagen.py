"""Data generation: byte-identical output, disjoint splits, dedup, sharding, resume, verl layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.bootcamp import generate, load_bootcamp, sft_examples
from ptbench.bootcamp.data.datagen import Shard, first_pass
from ptbench.core.errors import UserError

from ..conftest import small_config


def _files(d: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and ".cache" not in p.parts
    }


@pytest.mark.parametrize("name", ["arithmetic", "mastermind", "sql_explore"])
def test_same_config_and_seed_give_byte_identical_files(tmp_path: Path, name: str) -> None:
    cfg = load_bootcamp(small_config(tmp_path, name))
    generate(cfg, tmp_path / "a")
    generate(cfg, tmp_path / "b")
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert set(a) == {
        "manifest.json",
        "test.jsonl",
        "test.parquet",
        "train.jsonl",
        "train.parquet",
        "sft/test.jsonl",
        "sft/train.jsonl",
    }
    assert a == b


def test_other_seed_gives_other_cases(tmp_path: Path) -> None:
    base = small_config(tmp_path)
    other = tmp_path / "other.yaml"
    other.write_text(base.read_text().replace("seed: 1234", "seed: 99"))
    generate(load_bootcamp(base), tmp_path / "a")
    generate(load_bootcamp(other), tmp_path / "b")
    assert (tmp_path / "a" / "train.jsonl").read_bytes() != (tmp_path / "b" / "train.jsonl").read_bytes()


def test_splits_are_disjoint_and_ids_unique(tmp_path: Path) -> None:
    cfg = load_bootcamp(small_config(tmp_path, "arithmetic", test=40, train=200))
    generate(cfg, tmp_path / "d")
    rows = {
        s: [json.loads(x) for x in (tmp_path / "d" / f"{s}.jsonl").read_text().splitlines()] for s in ("test", "train")
    }
    ids = {s: [r["extra_info"]["sample_id"] for r in rs] for s, rs in rows.items()}
    exprs = {s: {json.loads(r["reward_model"]["ground_truth"])["expression"] for r in rs} for s, rs in rows.items()}
    assert len(ids["test"]) == 40 and len(ids["train"]) == 200
    assert len(set(ids["test"])) == 40 and len(set(ids["train"])) == 200
    assert not set(ids["test"]) & set(ids["train"])
    assert not exprs["test"] & exprs["train"]
    # weights 2:1 over levels, largest remainder
    assert sum(r["extra_info"]["level"] == "easy" for r in rows["train"]) == 133


def test_duplicates_removed_when_case_space_is_small(tmp_path: Path) -> None:
    # 2-term sums/products of 1..3: only 27 distinct expressions; 25 rows must all differ.
    path = tmp_path / "tiny.yaml"
    path.write_text(
        "name: tiny\nseed: 3\nlevels:\n  - {name: t, generator: arithmetic, params: {n_terms: 2, max_value: 3}}\n"
        "splits: {test: 5, train: 20}\nreward: {name: boxed_number}\n"
    )
    generate(load_bootcamp(path), tmp_path / "d")
    exprs = [
        json.loads(json.loads(x)["reward_model"]["ground_truth"])["expression"]
        for s in ("test", "train")
        for x in (tmp_path / "d" / f"{s}.jsonl").read_text().splitlines()
    ]
    assert len(exprs) == 25 == len(set(exprs))
    path.write_text(path.read_text().replace("train: 20", "train: 30"))
    with pytest.raises(UserError, match="ran out of distinct cases"):
        generate(load_bootcamp(path), tmp_path / "e")


def test_test_split_unchanged_when_train_grows(tmp_path: Path) -> None:
    generate(load_bootcamp(small_config(tmp_path, train=30)), tmp_path / "a")
    generate(load_bootcamp(small_config(tmp_path, train=90)), tmp_path / "b")
    assert (tmp_path / "a" / "test.jsonl").read_bytes() == (tmp_path / "b" / "test.jsonl").read_bytes()


def test_sharded_generation_assembles_to_the_same_bytes(tmp_path: Path) -> None:
    cfg = load_bootcamp(small_config(tmp_path, "sql_explore"))
    generate(cfg, tmp_path / "one")
    made = []
    for i in range(3):
        generate(cfg, tmp_path / "sharded", shard=Shard(i, 3))
        made.append(len(list((tmp_path / "sharded" / ".cache").rglob("*.npz"))))
    assert not (tmp_path / "sharded" / "train.jsonl").exists()  # shards only make candidate chunks
    assert made[-1] == len(first_pass(cfg)) and made[0] < made[-1]  # each shard its own share
    generate(cfg, tmp_path / "sharded")
    assert _files(tmp_path / "one") == _files(tmp_path / "sharded")


def test_interrupted_generation_resumes_to_the_same_bytes(tmp_path: Path) -> None:
    cfg = load_bootcamp(small_config(tmp_path, "mastermind", train=120))
    generate(cfg, tmp_path / "ref")
    # A run killed mid-way: some chunks complete, one without its index (killed between the two
    # writes), a temporary file, a row part of an earlier try, and no outputs.
    generate(cfg, tmp_path / "resumed", shard=Shard(0, 2))
    spool = next((tmp_path / "resumed" / ".cache").iterdir())
    next(spool.glob("*.npz")).unlink()
    (spool / ".x.jsonl.123.tmp").write_bytes(b"torn")
    generate(cfg, tmp_path / "resumed")
    assert _files(tmp_path / "ref") == _files(tmp_path / "resumed")


def test_generation_in_workers_gives_the_same_bytes_as_inline(tmp_path: Path, monkeypatch) -> None:
    import ptbench.bootcamp.data.spool as spool

    monkeypatch.setattr(spool, "CHUNK", 7)  # many chunks and parts for a small config
    monkeypatch.setattr("ptbench.bootcamp.data.datagen.CHUNK", 7)
    monkeypatch.setattr("ptbench.bootcamp.data.datagen.PART", 5)
    cfg = load_bootcamp(small_config(tmp_path, "arithmetic", test=20, train=60))
    generate(cfg, tmp_path / "one", workers=1)
    generate(cfg, tmp_path / "two", workers=2)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_rows_follow_verl_rlhf_layout_and_parquet_matches_jsonl(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    cfg = load_bootcamp(small_config(tmp_path, "sql_explore"))
    generate(cfg, tmp_path / "d")
    rows = [json.loads(x) for x in (tmp_path / "d" / "train.jsonl").read_text().splitlines()]
    r = rows[0]
    assert r["data_source"] == "bootcamp/sql_explore"
    assert [m["role"] for m in r["prompt"]] == ["system", "user"]
    assert r["reward_model"]["style"] == "rule"
    identity = json.loads(r["reward_model"]["ground_truth"])
    assert {"db", "question", "answer"} <= set(identity)
    spec = json.loads(r["extra_info"]["ptbench"])
    assert [t["name"] for t in spec["tools"]] == ["sql_query"] and spec["interaction"] is None
    assert r["agent_name"] == "ptbench_agent" and "tools_kwargs" not in r["extra_info"]
    assert [x["extra_info"]["index"] for x in rows] == list(range(len(rows)))
    table = pq.read_table(tmp_path / "d" / "train.parquet").to_pylist()
    assert [json.dumps(t, sort_keys=True) for t in table] == [json.dumps(x, sort_keys=True) for x in rows]


def test_every_bootcamp_writes_one_schema_and_empty_splits_are_valid_tables(tmp_path: Path) -> None:
    """Same columns and types for every environment (verl concatenates files only when they match),
    and an empty split is a readable Parquet file with that schema, not 0 bytes."""
    import datasets
    import pyarrow.parquet as pq

    from ptbench.bootcamp.data.rowschema import row_schema

    schemas = set()
    for name in ("arithmetic", "mastermind", "sql_explore"):
        generate(load_bootcamp(small_config(tmp_path, name, test=0, train=3)), tmp_path / name)
        for split in ("test", "train"):
            table = pq.read_table(tmp_path / name / f"{split}.parquet")
            assert table.schema == row_schema(), (name, split)
            schemas.add(str(table.schema))
        empty = pq.read_table(tmp_path / name / "test.parquet")
        assert empty.num_rows == 0 and (tmp_path / name / "test.parquet").stat().st_size > 0
        ds = datasets.Dataset(empty)
        assert len(ds) == 0 and set(ds.features) == set(row_schema().names)
        assert pq.read_table(tmp_path / name / "train.parquet").num_rows == 3
    assert len(schemas) == 1


def test_changed_config_refuses_to_overwrite(tmp_path: Path) -> None:
    generate(load_bootcamp(small_config(tmp_path, train=30)), tmp_path / "d")
    with pytest.raises(UserError, match="different bootcamp config"):
        generate(load_bootcamp(small_config(tmp_path, train=31)), tmp_path / "d")


def test_sft_examples_match_the_written_sft_file(tmp_path: Path) -> None:
    path = small_config(tmp_path)
    generate(load_bootcamp(path), tmp_path / "d")
    examples = sft_examples(path, "train")
    written = [json.loads(x) for x in (tmp_path / "d" / "sft" / "train.jsonl").read_text().splitlines()]
    assert examples == written and len(examples) == 30
    assert (
        set(examples[0]) == {"prompt", "completion", "tools"} and "\\boxed{" in examples[0]["completion"][0]["content"]
    )
    assert [m["role"] for m in examples[0]["prompt"]] == ["system", "user"]
    text = sft_examples(path, "train", "text")
    assert set(text[0]) == {"prompt", "completion"} and isinstance(text[0]["prompt"], str)
    with pytest.raises(UserError, match="no split 'dev'"):
        sft_examples(path, "dev")
