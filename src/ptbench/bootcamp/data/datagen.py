"""Deterministic data generation in verl's RLHF dataset layout (JSONL + Parquet), streamed,
sharded and resumable.

How a dataset is made, so that the same config and seed always give byte-identical files:
- Case k of level L in split S comes from `random.Random(f"{seed}:{S}:{L}:{k}")`, nothing else.
- Each split's size is shared among levels by weight (largest remainder). Level L of split S takes
  the first cases k = 0, 1, ... whose dedup key no earlier split or level has taken.
- Rows are ordered by a seeded shuffle; JSON keys are sorted; Parquet is written with fixed settings.

How it streams (memory does not grow with the rows: about 8 bytes a case for the dedup hashes,
then 4 for the shuffle, shared by the forked workers; the picks are records on disk): candidates
are made in chunks of 50,000 (`spool.py`) by worker processes and kept under `.cache/<data_hash>/`;
the dedup reads only their 64-bit key hashes and writes each split's picks to a file; the rows are
then built in parts of 10,000 by the workers (JSONL and SFT lines from per-level templates, and the
part's Arrow table from the same values column by column: `rows.RowText`), while this process
appends each finished part, in order, to the final files (the Parquet file gets one row group a
part). Every chunk and part is written atomically, so an interrupted run resumes where it stopped,
and `--shard i/N` runs make the candidate chunks in parallel before one assembly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import tempfile
from array import array
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from ptbench.bootcamp.api import canonical_json
from ptbench.bootcamp.config import BootcampConfig
from ptbench.bootcamp.data.rows import RowText
from ptbench.bootcamp.data.rowschema import EpisodeSpec, parquet_bytes, table_from_jsonl
from ptbench.bootcamp.data.spool import CHUNK, PART, Chunk, HashSet, Picks, Reader, load_index, make_chunk, pick_dtype
from ptbench.bootcamp.environment import Environment, build_environment
from ptbench.core import fastjson
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_json, atomic_writer

MANIFEST = "manifest.json"
_TABLE_CHECK_ROWS = 200  # a part's first rows, whose Arrow table is checked against Arrow's JSON reader
_MAX_TRIES_FACTOR = 20  # a level may try this many times its target before we call it exhausted


def level_targets(config: BootcampConfig, n: int) -> dict[str, int]:
    """Split n among levels by weight; leftover units go to the largest remainders (ties: config order)."""
    total = sum(lv.weight for lv in config.levels)
    exact = [(lv.name, n * lv.weight / total) for lv in config.levels]
    out = {name: int(x) for name, x in exact}
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i][1] - int(exact[i][1])), i))
    for i in order[: n - sum(out.values())]:
        out[exact[i][0]] += 1
    return out


def case_rng(seed: int, split: str, level: str, k: int) -> random.Random:
    return random.Random(f"{seed}:{split}:{level}:{k}")


def sample_id(data_source: str, dedup_key: str) -> str:
    """Stable across runs, shards and split sizes: a hash of the data source and the case's identity."""
    return hashlib.sha256(f"{data_source}\x00{dedup_key}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            i, n = (int(x) for x in text.split("/"))
        except ValueError:
            raise UserError(f"--shard '{text}': write it as i/N, e.g. 0/4") from None
        if not (n >= 1 and 0 <= i < n):
            raise UserError(f"--shard '{text}': need 0 <= i < N")
        return cls(i, n)

    @property
    def tag(self) -> str:
        return f"shard-{self.index:05d}-of-{self.count:05d}"


# ------------------------------------------------------------------------------ candidates and dedup


def first_pass(config: BootcampConfig) -> list[Chunk]:
    """The chunks every dedup-free run needs, in a fixed order: what shards and workers divide."""
    out = []
    for split, n in config.splits.items():
        for li, (level, target) in enumerate(level_targets(config, n).items()):
            out += [Chunk(split, level, li, k, min(k + CHUNK, target)) for k in range(0, target, CHUNK)]
    return out


def _max_tries(target: int) -> int:
    return target * _MAX_TRIES_FACTOR + 100  # a level may try this many before it counts as exhausted


def select_cases(env: Environment, spool: Path) -> dict[str, Picks]:
    """Dedup in the fixed order (split, level, k); writes each split's picks to the spool and returns
    them. Extra candidates beyond the first pass (only where duplicates were dropped) are made here,
    in order, and kept."""
    import numpy as np

    cfg = env.config
    seen = HashSet()
    chosen: dict[str, Picks] = {}
    for split, n in cfg.splits.items():
        picks = Picks(spool / f"picks.{split}.bin")
        with atomic_writer(picks.path) as records:
            for li, (level, target) in enumerate(level_targets(cfg, n).items()):
                got, k = 0, 0
                while got < target:
                    if k >= _max_tries(target):
                        raise UserError(
                            f"bootcamp '{cfg.name}': level '{level}' ran out of distinct cases for split '{split}' "
                            f"({got} of {target} after {k} tries); lower the split size or widen the level's params"
                        )
                    if k < target:  # the first pass: the chunks `first_pass` lists
                        end = min(k + CHUNK, target)
                    else:  # extra candidates for dropped duplicates: about what is missing (generators can be slow)
                        end = min(k + min(CHUNK, max(64, 2 * (target - got))), _max_tries(target))
                    chunk = Chunk(split, level, li, k, end)
                    make_chunk(env, chunk, spool)
                    offsets, hashes = load_index(spool, chunk)
                    first = np.zeros(len(hashes), dtype=bool)
                    first[np.unique(hashes, return_index=True)[1]] = True  # a key twice in the chunk: its first
                    new = np.flatnonzero(first & ~seen.contains(hashes))[: target - got]
                    seen.add(hashes[new])
                    rec = np.empty(len(new), dtype=pick_dtype())
                    rec["chunk"], rec["line"] = len(picks.chunks), new
                    rec["start"], rec["length"] = offsets[new], offsets[new + 1] - offsets[new] - 1  # no newline
                    records.write(rec.tobytes())
                    picks.chunks.append(chunk)
                    picks.n += len(new)
                    got, k = got + len(new), chunk.k1
        chosen[split] = picks
    return chosen


def row_order(seed: int, split: str, n: int) -> array:
    """The rows' seeded shuffle, as `random.Random(...).shuffle(list_of_n_cases)` orders them, over
    an array of indices (4 bytes a row below 2**32 rows) instead of the cases: shuffle only swaps
    items, so the permutation does not depend on the array's type."""
    order = array("I" if n < 2**32 else "q", range(n))
    random.Random(f"{seed}:{split}:order").shuffle(order)
    return order


# ------------------------------------------------------------------------------------ rows, in parts

# What worker processes read (set before they fork: the picks and orders are never pickled).
_JOB: dict[str, Any] = {}


def _part_names(split: str, part: int) -> tuple[str, str, str]:
    stem = f"{split}.{part:06d}"
    return f"{stem}.jsonl", f"{stem}.sft.jsonl", f"{stem}.arrow"


def write_part(split: str, part: int) -> None:
    """Rows part*PART .. of `split` (in the shuffled order) into the spool's out/ folder."""
    env, spool, parquet = _JOB["env"], _JOB["spool"], _JOB["parquet"]
    picks, order = _JOB["picks"][split], _JOB["orders"][split]
    jsonl, sft_name, pq_name = _part_names(split, part)
    out = spool / "out"
    if (out / (pq_name if parquet else sft_name)).is_file():
        return  # made by an earlier (interrupted) run: parts are written atomically, this one last
    spec, tools = EpisodeSpec.from_config(env.config).to_json(), json.dumps(env.tool_schemas, sort_keys=True)
    params = canonical_json(env.config.reward.params)
    text = RowText(env, split, spec=spec, reward_params=params, tools=tools)
    source, generators = env.config.source, env.generators
    reader = Reader(spool, picks)
    head: list[str] = []  # the part's first rows, to check its Arrow table against
    sft_rows = 0
    levels: dict[str, int] = {}
    out.mkdir(exist_ok=True)
    # Each line goes to its file as it is made (a part's lines are never held together: they were a
    # worker's largest allocation). The meta file, then the JSON lines (the inner writer), then the SFT
    # file are put in place, and the Arrow file last: a part's last file is the mark that it is whole.
    try:
        with atomic_writer(out / sft_name) as sft, atomic_writer(out / jsonl) as rows:
            first = part * PART
            records = reader.records(order[first : first + PART])
            fields = (records[name].tolist() for name in ("chunk", "line", "start", "length"))  # ints, not numpy's
            for i, (c, n, start, length) in enumerate(zip(*fields, strict=True), start=first):
                chunk = picks.chunks[c]
                line = reader.line(c, start, length)
                identity = json.loads(line)
                sid = sample_id(source, generators[chunk.level].dedup_key(identity))
                row, s = text.lines(i, chunk.level, chunk.k0 + n, sid, identity, line)
                rows.write(row.encode())
                if len(head) < _TABLE_CHECK_ROWS:
                    head.append(row)
                levels[chunk.level] = levels.get(chunk.level, 0) + 1
                if s is not None:
                    sft.write(s.encode())
                    sft_rows += 1
            atomic_write_json(out / f"{split}.{part:06d}.meta.json", {"levels": levels, "sft_rows": sft_rows})
    finally:
        reader.close()
    if parquet:  # the rows as an Arrow table (IPC file): the assembly writes it into the Parquet file as is
        import pyarrow as pa

        sink = pa.BufferOutputStream()
        table = text.table()
        # RowText's table checked against Arrow's JSON reader on the part's first rows (shuffled: every
        # level shows up); slices, not `take`, which would import pyarrow.compute (20 MB a worker)
        if not table.slice(0, len(head)).equals(table_from_jsonl("".join(head).encode())):
            raise RuntimeError(f"RowText: the Arrow table of {split} part {part} differs from its JSON lines (a bug)")
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        with atomic_writer(out / pq_name) as fh:
            fh.write(sink.getvalue())  # Arrow's buffer as is: no copy into a Python bytes object
        del table, sink
        # Arrow's allocator (mimalloc) keeps freed blocks for reuse; the next part is made in the same
        # worker, but a tree of workers each holding a part's worth counts in the run's peak memory.
        pa.default_memory_pool().release_unused()


def _assemble(
    out_dir: Path, spool: Path, split: str, parts: int, parquet: bool, ready: Iterator[None]
) -> dict[str, Any]:
    """Concatenate a split's parts into <split>.jsonl, sft/<split>.jsonl and <split>.parquet, each
    part as soon as `next(ready)` returns (the parts are made in this order, meanwhile)."""
    digest, sft_rows = hashlib.sha256(), 0
    levels: dict[str, int] = {}
    with contextlib.ExitStack() as files:
        jsonl = files.enter_context(atomic_writer(out_dir / f"{split}.jsonl"))
        sft = files.enter_context(atomic_writer(out_dir / "sft" / f"{split}.jsonl"))
        table = None
        if parquet:  # entered last: its footer is written (or the writer let go) before the file is closed
            table = files.enter_context(_ParquetParts(files.enter_context(atomic_writer(out_dir / f"{split}.parquet"))))
        for i in range(parts):
            next(ready)
            names = _part_names(split, i)
            with open(spool / "out" / names[0], "rb") as part:
                while block := part.read(1 << 20):
                    digest.update(block)
                    jsonl.write(block)
            with open(spool / "out" / names[1], "rb") as part:
                _copy(part, sft)
            meta = json.loads((spool / "out" / f"{split}.{i:06d}.meta.json").read_text())
            for level, n in meta["levels"].items():
                levels[level] = levels.get(level, 0) + n
            sft_rows += meta["sft_rows"]
            if table is not None:
                table.add(spool / "out" / names[2])
    return {"n": sum(levels.values()), "levels": levels, "jsonl_sha256": digest.hexdigest(), "sft_rows": sft_rows}


def _copy(src: BinaryIO, dst: BinaryIO) -> None:
    """src (from its start) appended to dst, in the kernel where it can."""
    dst.flush()
    copied = 0
    try:
        while n := os.copy_file_range(src.fileno(), dst.fileno(), 1 << 30):
            copied += n
    except OSError:  # a file system without copy_file_range: the rest through user space
        src.seek(copied)
        shutil.copyfileobj(src, dst, 1 << 20)


class _ParquetParts:
    """The parts' Arrow tables as the row groups of one Parquet file, with the settings of
    `parquet_bytes` (each part is one row group of 10,000 rows, the last maybe fewer, so the file is
    the one a single write of every row makes; no part: `parquet_bytes([])`, every column, no rows)."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.writer = fh, cast(Any, None)

    def add(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from ptbench.bootcamp.data.rowschema import PARQUET_ROW_GROUP, PARQUET_SETTINGS, row_schema

        if self.writer is None:
            self.writer = pq.ParquetWriter(self.fh, row_schema(), **PARQUET_SETTINGS)
        with pa.memory_map(str(path)) as source:
            self.writer.write_table(pa.ipc.open_file(source).read_all(), row_group_size=PARQUET_ROW_GROUP)

    def __enter__(self) -> _ParquetParts:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if self.writer is not None:
            self.writer.close()  # on an error too (the temporary file goes): else its __del__ writes to a closed file
        elif kind is None:
            self.fh.write(parquet_bytes([]))


def _in_order(
    fn: Callable[..., None], calls: list[tuple], workers: int, say: Callable[[str], None], what: str
) -> Generator[None, None, None]:
    """fn(*args) for each call, in forked worker processes (inline for one worker or one call);
    yields as each call, in order, is done; says how far it got about every tenth of the way."""
    step = max(1, len(calls) // 10)

    def done(i: int) -> None:
        if (i + 1) % step == 0 or i + 1 == len(calls):
            say(f"{what}: {i + 1}/{len(calls)}")

    if workers <= 1 or len(calls) <= 1:
        for i, args in enumerate(calls):
            fn(*args)
            done(i)
            yield
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(min(workers, len(calls))) as pool:
        for i, result in enumerate([pool.apply_async(fn, args) for args in calls]):
            result.get()  # a worker's exception is raised here
            done(i)
            yield


def _make_chunk_job(index: int) -> None:
    make_chunk(_JOB["env"], _JOB["chunks"][index], _JOB["spool"])


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def build_rows(env: Environment, out_dir: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """All splits' rows in memory (small data: SFT examples of a config); made as `generate` makes them."""
    with tempfile.TemporaryDirectory(prefix="ptbench-rows-") as tmp:
        generate(env.config, Path(tmp), parquet=False, workers=1, env=env)
        return {split: load_rows(tmp, split) for split in env.config.splits}


def generate(
    config: BootcampConfig,
    out_dir: str | Path,
    *,
    shard: Shard | None = None,
    parquet: bool = True,
    force: bool = False,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
    env: Environment | None = None,
) -> dict[str, Any]:
    """Write `<split>.jsonl`, `<split>.parquet`, `sft/<split>.jsonl` and `manifest.json` into out_dir.

    With `shard`, only makes this shard's part of the candidate chunks (run `generate` without a
    shard afterwards to assemble). Returns the manifest (or a small status dict for a shard run).
    """
    env = env or build_environment(config)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    existing = _read_manifest(out)
    if existing and existing.get("data_hash") != config.data_hash() and not force:
        raise UserError(
            f"{out} holds data from a different bootcamp config (data_hash {existing.get('data_hash')}, "
            f"now {config.data_hash()}); pick another --out or pass --force to overwrite"
        )
    spool = out / ".cache" / config.data_hash()
    chunks = first_pass(config)
    say = progress or (lambda _msg: None)
    if shard is not None:
        mine = [c for j, c in enumerate(chunks) if j % shard.count == shard.index]
        before = sum((spool / f"{c.name}.npz").is_file() for c in mine)
        for c in mine:
            make_chunk(env, c, spool)
        return {"shard": shard.tag, "new_candidates": sum(c.k1 - c.k0 for c in mine[before:])}
    if existing and existing.get("data_hash") == config.data_hash() and _outputs_intact(out, existing):
        return existing
    workers = workers or default_workers()
    _JOB.update(env=env, spool=spool, chunks=chunks, parquet=parquet)
    try:
        todo = [(j,) for j, c in enumerate(chunks) if not (spool / f"{c.name}.npz").is_file()]
        if len(todo) < len(chunks):
            say(f"resuming: {len(chunks) - len(todo)} of {len(chunks)} candidate chunks already made")
        for _ in _in_order(_make_chunk_job, todo, workers, say, "candidate chunks"):
            pass
        picks = select_cases(env, spool)
        orders = {split: row_order(config.seed, split, len(p)) for split, p in picks.items()}
        _JOB.update(picks=picks, orders=orders)
        parts = {split: -(-len(p) // PART) for split, p in picks.items()}
        calls = [(split, i) for split, n in parts.items() for i in range(n)]
        (out / "sft").mkdir(exist_ok=True)
        for split in parts:  # what a killed assembly left: atomic_writer's temporary files
            for folder, name in ((out, f"{split}.jsonl"), (out / "sft", f"{split}.jsonl"), (out, f"{split}.parquet")):
                for stale in folder.glob(f".{name}.*.tmp"):
                    stale.unlink(missing_ok=True)
        manifest: dict[str, Any] = {
            "name": config.name,
            "data_source": config.source,
            "data_hash": config.data_hash(),
            "seed": config.seed,
            "splits": {},
        }
        # The parts are made by the workers while this process writes the ones done into the final files.
        ready = _in_order(write_part, calls, workers, say, f"row parts of {PART:,}")
        with contextlib.closing(ready):
            for split, n in parts.items():
                manifest["splits"][split] = _assemble(out, spool, split, n, parquet, ready)
    finally:
        _JOB.clear()
    shutil.rmtree(spool / "out", ignore_errors=True)  # the parts are in the final files now
    atomic_write_json(out / MANIFEST, manifest)
    return manifest


def _read_manifest(out: Path) -> dict[str, Any] | None:
    try:
        return json.loads((out / MANIFEST).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _outputs_intact(out: Path, manifest: dict[str, Any]) -> bool:
    for split, info in manifest.get("splits", {}).items():
        path = out / f"{split}.jsonl"
        if not path.is_file():
            return False
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):  # streamed: the file may be many GB
                digest.update(block)
        if digest.hexdigest() != info.get("jsonl_sha256"):
            return False
    return True


def load_rows(data_dir: str | Path, split: str) -> list[dict[str, Any]]:
    path = Path(data_dir) / f"{split}.jsonl"
    if not path.is_file():
        raise UserError(f"{path}: no such split file; run `ptbench bootcamp generate` first or check --split")
    # Split on b"\n" only: the rows are written with non-ASCII raw (rows.dumps_line), and str.splitlines
    # would also cut at a U+2028 in a prompt. fastjson: orjson, a third of json's time (a shard's start).
    return [fastjson.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]
