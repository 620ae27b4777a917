"""Deterministic data generation in verl's RLHF dataset layout (JSONL + Parquet), sharded and resumable.

How a dataset is made, so that the same config and seed always give byte-identical files:
- Case k of level L in split S comes from `random.Random(f"{seed}:{S}:{L}:{k}")`, nothing else.
- Each split's size is shared among levels by weight (largest remainder). Level L of split S takes
  the first cases k = 0, 1, ... whose dedup key no earlier split or level has taken.
- Rows are ordered by a seeded shuffle; JSON keys are sorted; Parquet is written with fixed settings.
Candidate cases are cached (one JSONL line each, flushed) under `.cache/<data_hash>/`, so an
interrupted run resumes, and `--shard i/N` runs fill the cache in parallel before one assembly.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.bootcamp.api import canonical_json
from ptbench.bootcamp.config import BootcampConfig
from ptbench.bootcamp.environment import Environment, build_environment
from ptbench.bootcamp.rowschema import AGENT_NAME, EpisodeSpec, parquet_bytes
from ptbench.core.errors import UserError
from ptbench.core.files import append_jsonl, atomic_write_bytes, atomic_write_json, read_jsonl

MANIFEST = "manifest.json"
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


# ---------------------------------------------------------------------------------- candidate cache


class CandidateCache:
    """(split, level, k) -> identity, persisted as JSONL lines under `.cache/<data_hash>/`."""

    def __init__(self, out_dir: Path | None, data_hash: str) -> None:
        """With `out_dir` None the cache lives in memory only (nothing written)."""
        self.dir = out_dir / ".cache" / data_hash if out_dir is not None else None
        self.items: dict[tuple[str, str, int], dict[str, Any]] = {}
        for path in sorted(self.dir.glob("*.jsonl")) if self.dir is not None else []:
            _repair_torn_tail(path)
            for rec in read_jsonl(path):
                self.items[(rec["split"], rec["level"], rec["k"])] = rec["identity"]

    def get_or_make(self, env: Environment, split: str, level: str, k: int, file: str) -> dict[str, Any]:
        key = (split, level, k)
        if key not in self.items:
            identity = env.generators[level].case(case_rng(env.config.seed, split, level, k))
            # Round-trip through JSON so a fresh identity and a cached one are the same value.
            identity = json.loads(canonical_json(identity))
            if self.dir is not None:
                self.dir.mkdir(parents=True, exist_ok=True)
                append_jsonl(self.dir / file, {"split": split, "level": level, "k": k, "identity": identity})
            self.items[key] = identity
        return self.items[key]


def _repair_torn_tail(path: Path) -> None:
    """Cut a half-written last line (killed writer) so the next append starts on a fresh line."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


def _first_pass(config: BootcampConfig) -> Iterator[tuple[str, str, int]]:
    """Every (split, level, k) a dedup-free run needs, in a fixed order: what shards divide among them."""
    for split, n in config.splits.items():
        for level, target in level_targets(config, n).items():
            for k in range(target):
                yield split, level, k


# ---------------------------------------------------------------------------------------- generate


def fill_cache(env: Environment, out_dir: Path, shard: Shard) -> int:
    """Compute this shard's share of first-pass candidates; returns how many were new."""
    cache = CandidateCache(out_dir, env.config.data_hash())
    before = len(cache.items)
    for j, (split, level, k) in enumerate(_first_pass(env.config)):
        if j % shard.count == shard.index:
            cache.get_or_make(env, split, level, k, f"{shard.tag}.jsonl")
    return len(cache.items) - before


def select_cases(env: Environment, cache: CandidateCache) -> dict[str, list[dict[str, Any]]]:
    """Dedup in the fixed order; returns split -> chosen cases (level, k, identity, key, sample_id)."""
    cfg = env.config
    seen: set[str] = set()
    chosen: dict[str, list[dict[str, Any]]] = {}
    for split, n in cfg.splits.items():
        picked: list[dict[str, Any]] = []
        for level, target in level_targets(cfg, n).items():
            got, k = 0, 0
            while got < target:
                if k >= target * _MAX_TRIES_FACTOR + 100:
                    raise UserError(
                        f"bootcamp '{cfg.name}': level '{level}' ran out of distinct cases for split '{split}' "
                        f"({got} of {target} after {k} tries); lower the split size or widen the level's params"
                    )
                identity = cache.get_or_make(env, split, level, k, "assemble.jsonl")
                key = env.generators[level].dedup_key(identity)
                if key not in seen:
                    seen.add(key)
                    picked.append(
                        {"level": level, "k": k, "identity": identity, "sample_id": sample_id(cfg.source, key)}
                    )
                    got += 1
                k += 1
        random.Random(f"{cfg.seed}:{split}:order").shuffle(picked)
        chosen[split] = picked
    return chosen


def build_row(env: Environment, split: str, index: int, case: dict[str, Any]) -> dict[str, Any]:
    cfg = env.config
    identity, level = case["identity"], case["level"]
    gt = canonical_json(identity)
    prompt = []
    system = env.system_prompt(level)
    if system:
        prompt.append({"content": system, "role": "system"})
    prompt.append({"content": env.generators[level].prompt(identity), "role": "user"})
    extra: dict[str, Any] = {
        "index": index,
        "split": split,
        "sample_id": case["sample_id"],
        "level": level,
        "case_index": case["k"],
        "seed": cfg.seed,
        "reward_fn": cfg.reward.name,
        "reward_params": canonical_json(cfg.reward.params),
    }
    # Every row of every bootcamp has the same columns (rowschema.row_schema): what differs between
    # environments goes in the `ptbench` JSON string, so mixtures concatenate and empty splits load.
    extra["ptbench"] = EpisodeSpec.from_config(cfg).to_json()
    return {
        "agent_name": AGENT_NAME,
        "data_source": cfg.source,
        "prompt": prompt,
        "ability": cfg.name,
        "reward_model": {"ground_truth": gt, "style": "rule"},
        "extra_info": extra,
    }


def sft_row(env: Environment, row: dict[str, Any], fmt: str = "chat") -> dict[str, Any] | None:
    """The generator's reference answer as an SFT example (None: the generator has none).

    `chat` (TRL's conversational prompt-completion): `prompt` is the row's messages, `completion` one
    assistant message, `tools` the tool schemas as a JSON string (TRL's SFTTrainer json-loads it), so
    TRL applies the model's chat template and trains on the completion only. `text`: the prompt as plain
    text (system + user) and the answer as a string, for base models without a chat template."""
    identity = json.loads(row["reward_model"]["ground_truth"])
    completion = env.generators[row["extra_info"]["level"]].reference_completion(identity)
    if completion is None:
        return None
    if fmt == "text":
        return {"completion": completion, "prompt": "\n\n".join(m["content"] for m in row["prompt"])}
    return {
        "completion": [{"content": completion, "role": "assistant"}],
        "prompt": [dict(m) for m in row["prompt"]],
        "tools": json.dumps(env.tool_schemas, sort_keys=True),
    }


def dumps_jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows).encode()


def build_rows(env: Environment, out_dir: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """All splits' rows; with `out_dir` it reuses and extends that directory's candidate cache."""
    cache = CandidateCache(out_dir, env.config.data_hash())
    chosen = select_cases(env, cache)
    return {split: [build_row(env, split, i, c) for i, c in enumerate(cases)] for split, cases in chosen.items()}


def generate(
    config: BootcampConfig,
    out_dir: str | Path,
    *,
    shard: Shard | None = None,
    parquet: bool = True,
    force: bool = False,
) -> dict[str, Any]:
    """Write `<split>.jsonl`, `<split>.parquet`, `sft/<split>.jsonl` and `manifest.json` into out_dir.

    With `shard`, only fills this shard's part of the candidate cache (run `generate` without a shard
    afterwards to assemble). Returns the manifest (or a small status dict for a shard run).
    """
    env = build_environment(config)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    existing = _read_manifest(out)
    if existing and existing.get("data_hash") != config.data_hash() and not force:
        raise UserError(
            f"{out} holds data from a different bootcamp config (data_hash {existing.get('data_hash')}, now "
            f"{config.data_hash()}); pick another --out or pass --force to overwrite"
        )
    if shard is not None:
        new = fill_cache(env, out, shard)
        return {"shard": shard.tag, "new_candidates": new}
    if existing and existing.get("data_hash") == config.data_hash() and _outputs_intact(out, existing):
        return existing
    fill_cache(env, out, Shard(0, 1))
    splits = build_rows(env, out)
    (out / "sft").mkdir(exist_ok=True)
    manifest: dict[str, Any] = {
        "name": config.name,
        "data_source": config.source,
        "data_hash": config.data_hash(),
        "seed": config.seed,
        "splits": {},
    }
    for split, rows in splits.items():
        data = dumps_jsonl(rows)
        atomic_write_bytes(out / f"{split}.jsonl", data)
        if parquet:
            atomic_write_bytes(out / f"{split}.parquet", parquet_bytes(rows))
        sft = [s for s in (sft_row(env, r) for r in rows) if s is not None]
        atomic_write_bytes(out / "sft" / f"{split}.jsonl", dumps_jsonl(sft))
        levels: dict[str, int] = {}
        for r in rows:
            levels[r["extra_info"]["level"]] = levels.get(r["extra_info"]["level"], 0) + 1
        manifest["splits"][split] = {
            "n": len(rows),
            "levels": levels,
            "jsonl_sha256": hashlib.sha256(data).hexdigest(),
            "sft_rows": len(sft),
        }
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
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != info.get("jsonl_sha256"):
            return False
    return True


def load_rows(data_dir: str | Path, split: str) -> list[dict[str, Any]]:
    path = Path(data_dir) / f"{split}.jsonl"
    if not path.is_file():
        raise UserError(f"{path}: no such split file; run `ptbench bootcamp generate` first or check --split")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
