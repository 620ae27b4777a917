"""`ptbench bootcamp export-verl`: a bootcamp (or a suite of them) as files verl 0.9.1 trains on.

```
OUT/data/<split>.parquet    every bootcamp's rows of that split, one schema (rowschema.py); none for an empty split
OUT/data/<split>.jsonl      the same rows as JSON lines (RLHFDataset reads .jsonl too)
OUT/tools.yaml              verl tool config: one BootcampTool entry per tool, with its schema
OUT/agent_loops.yaml        registers the `ptbench_agent` loop (verl_agent_loop.py)
OUT/trainer.yaml            a trainer config snippet: data paths, multi_turn on, the agent loop,
                            custom_reward_function -> ptbench/bootcamp/export/reward.py
OUT/bootcamps/<name>/       each bootcamp's own generated data (manifest, sft/)
```
Nothing here imports verl: the YAML is plain data and verl loads it in its own process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ptbench.bootcamp.api import canonical_json, tool_schema
from ptbench.bootcamp.config import BootcampConfig
from ptbench.bootcamp.data.datagen import generate, load_rows
from ptbench.bootcamp.data.rows import dumps_jsonl
from ptbench.bootcamp.data.rowschema import AGENT_NAME, parquet_bytes
from ptbench.bootcamp.export import reward as reward_module
from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_bytes, atomic_write_json

ADAPTER_CLASS = "ptbench.bootcamp.export.verl_tools.BootcampTool"
AGENT_LOOP_CLASS = "ptbench.bootcamp.export.verl_agent_loop.BootcampAgentLoop"


def tool_entries(configs: list[BootcampConfig]) -> list[dict[str, Any]]:
    """One verl tool entry per tool name across the bootcamps (params travel in each row)."""
    entries: dict[str, dict[str, Any]] = {}
    for cfg in configs:
        cfg.import_modules()
        for ref in cfg.tools:
            if ref.name in entries:
                continue
            schema = tool_schema(ref.name)
            entries[ref.name] = {
                "class_name": ADAPTER_CLASS,
                "config": {"type": "native", "ptbench_tool": ref.name, "imports": list(cfg.imports)},
                "tool_schema": schema,
            }
    return list(entries.values())


def trainer_snippet(out: Path, splits: list[str], max_turns: int) -> dict[str, Any]:
    train = "train" if "train" in splits else splits[0]
    val = next((s for s in ("test", "val", "validation") if s in splits), train)
    return {
        "data": {
            "train_files": str(out / "data" / f"{train}.parquet"),
            "val_files": str(out / "data" / f"{val}.parquet"),
            "prompt_key": "prompt",
            "return_raw_chat": True,
        },
        "actor_rollout_ref": {
            "rollout": {
                "mode": "async",
                "multi_turn": {
                    "enable": True,
                    "format": "hermes",
                    "tool_config_path": str(out / "tools.yaml"),
                    "max_assistant_turns": max_turns,
                },
                "agent": {"default_agent_loop": AGENT_NAME, "agent_loop_config_path": str(out / "agent_loops.yaml")},
            }
        },
        "reward": {
            "custom_reward_function": {"path": str(Path(reward_module.__file__).resolve()), "name": "compute_score"}
        },
    }


def export_verl(configs: list[BootcampConfig], out_dir: str | Path, *, force: bool = False) -> dict[str, Any]:
    """Generate every bootcamp, write the merged splits and verl's config files; returns a manifest."""
    if not configs:
        raise UserError("export-verl: no bootcamp to export")
    out = Path(out_dir).resolve()
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise UserError(f"export-verl: bootcamp names repeat ({', '.join(names)}); each needs its own name")
    split_names: list[str] = []
    for cfg in configs:
        split_names += [s for s in cfg.splits if s not in split_names]
    merged: dict[str, list[dict[str, Any]]] = {s: [] for s in split_names}
    for cfg in configs:
        data = out / "bootcamps" / cfg.name
        generate(cfg, data, force=force)
        for split in cfg.splits:
            merged[split] += load_rows(data, split)
    (out / "data").mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"bootcamps": names, "splits": {}, "empty_splits": []}
    for split, rows in list(merged.items()):
        if not rows:
            # `datasets.load_dataset` (which RLHFDataset calls) refuses a split with no rows in any
            # format, so an empty split gets no file here and no place in the trainer snippet.
            manifest["empty_splits"].append(split)
            del merged[split]
            continue
        atomic_write_bytes(out / "data" / f"{split}.parquet", parquet_bytes(rows))
        atomic_write_bytes(out / "data" / f"{split}.jsonl", dumps_jsonl(rows))
        manifest["splits"][split] = {"n": len(rows), "by_data_source": _count(r["data_source"] for r in rows)}
    atomic_write_bytes(out / "tools.yaml", _yaml({"tools": tool_entries(configs)}))
    atomic_write_bytes(out / "agent_loops.yaml", _yaml([{"name": AGENT_NAME, "_target_": AGENT_LOOP_CLASS}]))
    max_turns = max(c.limits.max_assistant_turns for c in configs)
    if not merged:
        raise UserError(f"export-verl: every split of {', '.join(names)} is empty; give a split some cases")
    atomic_write_bytes(out / "trainer.yaml", _yaml(trainer_snippet(out, list(merged), max_turns)))
    manifest["config_hashes"] = {c.name: c.config_hash() for c in configs}
    atomic_write_json(out / "export.json", manifest)
    return manifest


def _count(xs: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in xs:
        out[x] = out.get(x, 0) + 1
    return dict(sorted(out.items()))


def _yaml(data: Any) -> bytes:
    # Round-trip through canonical JSON first: plain types only, stable key order.
    return yaml.safe_dump(json.loads(canonical_json(data)), sort_keys=True, allow_unicode=True).encode()
