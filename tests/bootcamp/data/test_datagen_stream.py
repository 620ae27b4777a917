"""Streaming generation's fast paths give the bytes of the plain ones: pinned output, the parallel
path, the row templates, the arithmetic evaluator, and resume after a kill during the assembly."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.api import Generator, canonical_json
from ptbench.bootcamp.data.datagen import case_rng, load_rows, sample_id
from ptbench.bootcamp.data.rows import RowText, build_row, dumps_jsonl, dumps_line, sft_row
from ptbench.bootcamp.data.rowschema import PARQUET_SETTINGS, EpisodeSpec, parquet_bytes, table_from_jsonl
from ptbench.bootcamp.data.spool import as_stored
from ptbench.bootcamp.environment import build_environment
from ptbench.bootcamp.envs.arithmetic import ArithmeticGenerator, flat_value, safe_eval

from ..conftest import CAMPAIGNS, small_config

GOLDEN = """name: arith_golden
seed: 11
levels:
  - {name: small, generator: arithmetic, weight: 2, params: {n_terms: 3, max_value: 9}}
  - {name: mixed, generator: arithmetic, weight: 1, params: {n_terms: 4, max_value: 40, ops: "+-*/%"}}
splits: {test: 20, train: 60}
tools: [{name: calculator}]
reward: {name: boxed_number}
"""
# sha256 of the files that ptbench made of GOLDEN before generation was made faster (main at
# 91c84ac: rows built as dicts and json.dumps'ed, answers from ast). Parquet is checked against a
# single write of the same rows instead (its bytes name the pyarrow version).
PINNED = {
    "manifest.json": "436876c7bccc15e539d4c00ee981112d6fab60445f61f168dba554916ff6e595",
    "test.jsonl": "e6bd9c835cd1849e223bda9de75632b1a8b85ad1dff51ffbfc73fe602f48f58a",
    "train.jsonl": "78ec07e9b4d1f803741129b22c87cb440e6304f3f93b88728b3b65a1e593aa20",
    "sft/test.jsonl": "d23d6fa59516b47cfa10833832c4d279f9693a5f02344b760cbc03cb22c5ca23",
    "sft/train.jsonl": "f21f4ee132e4ff3ffd66f0ca95e7a7ca04f111ac969992c7b3cfc1aa483dc914",
}


def pq_bytes(table: Any) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_SETTINGS)
    return sink.getvalue().to_pybytes()


def _files(d: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and ".cache" not in p.parts
    }


def _small_parts(monkeypatch) -> None:
    """Many chunks and parts (and Parquet row groups) for a small config."""
    monkeypatch.setattr("ptbench.bootcamp.data.spool.CHUNK", 7)
    monkeypatch.setattr("ptbench.bootcamp.data.datagen.CHUNK", 7)
    monkeypatch.setattr("ptbench.bootcamp.data.datagen.PART", 5)


def test_output_is_the_pinned_bytes_inline_and_in_workers(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "c.yaml").write_text(GOLDEN)
    cfg = load_bootcamp(tmp_path / "c.yaml")
    generate(cfg, tmp_path / "one", workers=1)
    got = {name: hashlib.sha256((tmp_path / "one" / name).read_bytes()).hexdigest() for name in PINNED}
    assert got == PINNED
    for split in ("test", "train"):  # the Parquet file is the one a single write of all the rows makes
        rows = load_rows(tmp_path / "one", split)
        assert (tmp_path / "one" / f"{split}.parquet").read_bytes() == parquet_bytes(rows)
    # The parallel path (forked workers, the main process assembling parts as they come): same bytes.
    _small_parts(monkeypatch)
    monkeypatch.setattr("ptbench.bootcamp.data.datagen.PART", 10_000)  # one Parquet row group, as above
    generate(cfg, tmp_path / "two", workers=2)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_flat_value_is_what_python_computes() -> None:
    rng = random.Random(5)
    for _ in range(20_000):
        n = rng.randint(1, 7)
        numbers = [rng.randint(1, rng.choice([3, 50, 10**6])) for _ in range(n)]
        ops = [rng.choice("+-*/%") for _ in range(n - 1)]
        text = " ".join([str(numbers[0])] + [f"{op} {x}" for op, x in zip(ops, numbers[1:], strict=True)])
        want, got = safe_eval(text, max_len=10_000), flat_value(numbers, ops)
        assert (type(got), repr(got)) == (type(want), repr(want)), text


class _PlainRandom(random.Random):
    """A subclass: the arithmetic generator takes its general path (randint, choice) for it."""


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"n_terms": 1},
        {"n_terms": 5, "max_value": 1000},
        {"max_value": 1, "ops": "-"},
        {"ops": "+-*/%"},
        {"n_terms": 4, "max_value": 2**40 + 3, "ops": "*%"},
        {"max_value": 64, "ops": "+"},
    ],
)
def test_arithmetic_fast_draws_are_randint_and_choice(params: dict[str, Any]) -> None:
    """The spelt-out draws of a plain Random give the cases (and leave the state) randint/choice do."""
    gen = ArithmeticGenerator(**params)
    for k in range(3000):
        fast, general = random.Random(f"7:train:easy:{k}"), _PlainRandom(f"7:train:easy:{k}")
        assert gen.case(fast) == gen.case(general)
        assert fast.getrandbits(64) == general.getrandbits(64)


def test_arithmetic_params_that_randint_refuses_still_raise() -> None:
    with pytest.raises(ValueError):
        ArithmeticGenerator(max_value=0).case(random.Random(1))
    with pytest.raises(IndexError):
        ArithmeticGenerator(ops="").case(random.Random(1))


def test_identity_as_stored_is_what_json_gives_back() -> None:
    """A chunk's dedup key is made from the identity as a reader of the chunk sees it; the shortcut
    that skips json.loads must not change it for any value JSON spells differently."""
    flat = {"expression": "1 + 2", "answer": 3, "f": 0.1, "neg": -0.0}
    assert as_stored(flat, canonical_json(flat)) is flat
    for odd in ({"t": (1, 2)}, {"b": True}, {"n": None}, {1: "x"}, {"d": {"a": 1}}, {"x": float("nan")}, {"x": 1e400}):
        text = canonical_json(odd)
        got = as_stored(odd, text)
        assert got is not odd and repr(got) == repr(json.loads(text)), odd


class _Awkward(Generator):
    """Text that JSON must escape (quotes, backslashes, braces, control and non-ASCII characters,
    the template's own marker) and no reference answer for some cases."""

    def case(self, rng: random.Random) -> dict[str, Any]:
        pick = "".join(
            rng.choice(['"', "\\", "{", "}", "{0}", "\n", "\x00", "é", "😀", "a", " ", "%s"]) for _ in range(8)
        )
        return {"text": pick, "n": rng.randint(0, 3), "f": rng.random()}

    def prompt(self, identity: dict[str, Any]) -> str:
        return f"Say {identity['text']} \x00ptbench-slot-3\x00 {{n}}"

    def system_prompt(self) -> str:
        return 'System "quoted" {braces} \\ é'

    def reference_completion(self, identity: dict[str, Any]) -> str | None:
        return None if identity["n"] == 0 else f"{identity['text']}\\boxed{{{identity['n']}}}"


@pytest.mark.parametrize("name", sorted(p.stem for p in CAMPAIGNS.glob("*.yaml") if p.stem != "suite") + ["awkward"])
def test_row_templates_give_the_lines_of_build_row(tmp_path: Path, name: str, monkeypatch) -> None:
    monkeypatch.setattr("ptbench.bootcamp.data.rows._CHECK_EVERY", 10**9)  # compare here, not in RowText
    cfg = load_bootcamp(small_config(tmp_path, "arithmetic" if name == "awkward" else name))
    env = build_environment(cfg)
    if name == "awkward":
        env = dataclasses.replace(env, generators={level: _Awkward() for level in env.generators})
    spec, params = EpisodeSpec.from_config(cfg).to_json(), canonical_json(cfg.reward.params)
    tools = json.dumps(env.tool_schemas, sort_keys=True)
    text = RowText(env, "train", spec=spec, reward_params=params, tools=tools)
    seen_none, lines = 0, []
    for k in range(60):
        level = list(env.generators)[k % len(env.generators)]
        gt = canonical_json(env.generators[level].case(case_rng(cfg.seed, "train", level, k)))
        identity = json.loads(gt)
        sid = sample_id(cfg.source, env.generators[level].dedup_key(identity))
        case = {"level": level, "k": 1000 + k, "identity": identity, "sample_id": sid}
        row = build_row(env, "train", k, case, gt=gt, spec=spec, reward_params=params)
        sft = sft_row(env, row, tools=tools, identity=identity)
        want = (dumps_line(row), None if sft is None else dumps_line(sft))
        assert text.lines(k, level, 1000 + k, sid, identity, gt) == want
        seen_none += sft is None
        lines.append(want[0])
    # the part's Arrow table, built from the columns, is what Arrow's JSON reader makes of the lines
    assert text.table().equals(table_from_jsonl("".join(lines).encode()))
    assert pq_bytes(text.table()) == pq_bytes(table_from_jsonl("".join(lines).encode()))
    if name == "awkward":
        assert 0 < seen_none < 60


def test_row_templates_refuse_a_row_that_differs_from_build_row(tmp_path: Path, monkeypatch) -> None:
    """A row field that varies per row but is not one of the template's slots (here a nonce added to
    build_row) must not be frozen at its first value: the regular check raises."""
    import ptbench.bootcamp.data.rows as rows

    plain = rows.build_row

    def with_nonce(*args: Any, **kwargs: Any) -> dict[str, Any]:
        row = plain(*args, **kwargs)
        row["extra_info"]["nonce"] = random.random()
        return row

    monkeypatch.setattr(rows, "build_row", with_nonce)
    monkeypatch.setattr(rows, "_CHECK_EVERY", 3)
    cfg = load_bootcamp(small_config(tmp_path, "arithmetic", test=0, train=20))
    with pytest.raises(RuntimeError, match="differs from build_row"):
        generate(cfg, tmp_path / "d", workers=1)
    assert not (tmp_path / "d" / "train.jsonl").exists() and not (tmp_path / "d" / "manifest.json").exists()


def test_a_part_whose_arrow_table_differs_from_its_lines_is_refused(tmp_path: Path, monkeypatch) -> None:
    """The column-built table is checked against Arrow's JSON reader on sampled rows: a table that
    lost one row's value (here the first row's sample id) stops the run before any output exists."""
    import pyarrow as pa

    import ptbench.bootcamp.data.rows as rows

    plain = rows.RowText.table

    def one_value_wrong(self: Any) -> Any:
        table = plain(self)
        extra = table.column("extra_info").combine_chunks()
        ids = extra.field("sample_id").to_pylist()
        ids[0] = "0" * 16
        fields = [extra.field(i) if f.name != "sample_id" else pa.array(ids) for i, f in enumerate(extra.type)]
        return table.set_column(
            table.schema.get_field_index("extra_info"),
            "extra_info",
            pa.StructArray.from_arrays(fields, fields=list(extra.type)),
        )

    monkeypatch.setattr(rows.RowText, "table", one_value_wrong)
    cfg = load_bootcamp(small_config(tmp_path, "arithmetic", test=0, train=20))
    with pytest.raises(RuntimeError, match="differs from its JSON lines"):
        generate(cfg, tmp_path / "d", workers=1)
    assert not (tmp_path / "d" / "train.parquet").exists() and not (tmp_path / "d" / "manifest.json").exists()


class _Stopped(BaseException):
    pass


def test_interrupted_assembly_resumes_to_the_same_bytes(tmp_path: Path, monkeypatch) -> None:
    """Stopped at the third row part (the assembly had written the first two into its temporary
    files): the next run reuses the parts made, leaves no temporary file, and writes the same bytes."""
    import ptbench.bootcamp.data.datagen as datagen

    _small_parts(monkeypatch)
    cfg = load_bootcamp(small_config(tmp_path, "arithmetic", test=0, train=23))
    generate(cfg, tmp_path / "ref", workers=1)
    plain, made, reused = datagen.write_part, [], []

    def stop_at_third(split: str, part: int) -> None:
        if part == 2:
            raise _Stopped
        plain(split, part)
        made.append(part)

    monkeypatch.setattr(datagen, "write_part", stop_at_third)
    with pytest.raises(_Stopped):
        generate(cfg, tmp_path / "resumed", workers=1)
    assert made == [0, 1] and not (tmp_path / "resumed" / "train.jsonl").exists()
    (tmp_path / "resumed" / ".train.jsonl.x1.tmp").write_bytes(b"torn")  # as a SIGKILL leaves it
    spool = next((tmp_path / "resumed" / ".cache").iterdir()) / "out"

    def record(split: str, part: int) -> None:
        if (spool / f"{split}.{part:06d}.arrow").is_file():
            reused.append(part)
        plain(split, part)

    monkeypatch.setattr(datagen, "write_part", record)
    generate(cfg, tmp_path / "resumed", workers=1)
    assert reused == [0, 1]
    assert _files(tmp_path / "ref") == _files(tmp_path / "resumed")


def test_generate_killed_mid_way_resumes_to_the_same_bytes(tmp_path: Path) -> None:
    """The CLI with two workers, killed (SIGKILL, workers too) once the first row part is on disk."""
    cfg = tmp_path / "big.yaml"
    cfg.write_text(
        GOLDEN.replace("max_value: 9}", "max_value: 1000}").replace("test: 20, train: 60", "test: 1000, train: 14000")
    )
    cmd = [sys.executable, "-m", "ptbench", "bootcamp", "generate", str(cfg), "--workers", "2"]
    proc = subprocess.Popen([*cmd, "--out", str(tmp_path / "killed")], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        while proc.poll() is None and not list((tmp_path / "killed").glob(".cache/*/out/*.arrow")):
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        err = proc.communicate()[1]
    assert proc.returncode == -signal.SIGKILL, f"generate ended before its first part was seen: {err}"
    assert not (tmp_path / "killed" / "manifest.json").exists()
    subprocess.run([*cmd, "--out", str(tmp_path / "killed")], check=True, capture_output=True)
    subprocess.run([*cmd, "--out", str(tmp_path / "ref")], check=True, capture_output=True)
    assert _files(tmp_path / "ref") == _files(tmp_path / "killed")


def test_sft_parts_are_copied_without_copy_file_range(tmp_path: Path, monkeypatch) -> None:
    """A file system without copy_file_range (none here, so the call is made to fail with EXDEV
    after a first partial copy): the rest goes through user space, same bytes."""
    import errno

    cfg = load_bootcamp(small_config(tmp_path, "arithmetic", test=10, train=25))
    generate(cfg, tmp_path / "ref", workers=1)
    plain, calls = os.copy_file_range, []

    def partial_then_exdev(src: int, dst: int, count: int, *args: Any) -> int:
        calls.append(count)
        if len(calls) % 2:
            return plain(src, dst, 7)
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(os, "copy_file_range", partial_then_exdev)
    generate(cfg, tmp_path / "fallback", workers=1)
    assert calls and _files(tmp_path / "ref") == _files(tmp_path / "fallback")


def test_load_rows_keeps_a_line_separator_inside_a_prompt(tmp_path: Path) -> None:
    # Rows are written with non-ASCII raw: a U+2028 (or U+0085) in a prompt is in the line as is,
    # and only b"\n" ends a row (str.splitlines cut the row there and load_rows failed).
    rows = [
        {"prompt": [{"role": "user", "content": "a\u2028b\u0085c é"}], "extra_info": {"index": 0}},
        {"prompt": [{"role": "user", "content": "plain"}], "extra_info": {"index": 1}},
    ]
    (tmp_path / "test.jsonl").write_bytes(dumps_jsonl(rows))
    assert b"\xe2\x80\xa8" in (tmp_path / "test.jsonl").read_bytes()  # written raw, not escaped
    assert load_rows(tmp_path, "test") == rows
