"""The one Arrow schema of every generated RL row, and the episode spec each row carries.

Why a fixed schema: verl concatenates its `train_files` with `datasets.concatenate_datasets`, which
refuses files whose columns differ, and Arrow infers a struct's fields from the rows it sees (an empty
split has none; a mixture of bootcamps has different keys per row, filled with nulls where verl then
expects a dict). So every bootcamp writes exactly these columns with these types; whatever differs
between environments (tools, their params, the interaction, limits) travels as one canonical JSON
string, `extra_info.ptbench`, read back by `EpisodeSpec.from_extra_info`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ptbench.bootcamp.api import canonical_json
from ptbench.bootcamp.config import BootcampConfig

AGENT_NAME = "ptbench_agent"
"""verl agent loop that plays every bootcamp row (see verl_agent_loop.py)."""

_EXTRA_FIELDS = (
    ("case_index", "int64"),
    ("index", "int64"),
    ("level", "string"),
    ("ptbench", "string"),
    ("reward_fn", "string"),
    ("reward_params", "string"),
    ("sample_id", "string"),
    ("seed", "int64"),
    ("split", "string"),
)


def row_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("agent_name", pa.string()),
            ("ability", pa.string()),
            ("data_source", pa.string()),
            ("extra_info", pa.struct([(name, getattr(pa, kind)()) for name, kind in _EXTRA_FIELDS])),
            ("prompt", pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))),
            ("reward_model", pa.struct([("ground_truth", pa.string()), ("style", pa.string())])),
        ]
    )


def parquet_bytes(rows: list[dict[str, Any]], schema: Any | None = None) -> bytes:
    """Parquet with the fixed schema and settings, so the bytes depend only on the rows (and an
    empty split is still a readable file with every column)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=schema if schema is not None else row_schema())
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=PARQUET_ROW_GROUP, **PARQUET_SETTINGS)
    return sink.getvalue().to_pybytes()


def table_from_jsonl(data: bytes) -> Any:
    """The Arrow table of the rows these JSON lines hold, with the fixed schema, parsed by Arrow's
    C++ JSON reader (about eight times less CPU than from Python objects)."""
    import io

    import pyarrow.json as pj

    if not data:
        return row_schema().empty_table()
    return pj.read_json(
        io.BytesIO(data),
        read_options=pj.ReadOptions(use_threads=False, block_size=max(1 << 20, len(data) + 1)),
        parse_options=pj.ParseOptions(explicit_schema=row_schema(), unexpected_field_behavior="error"),
    )


PARQUET_ROW_GROUP = 10_000
PARQUET_SETTINGS: dict[str, Any] = {"compression": "snappy", "use_dictionary": True, "write_statistics": True,
                                    "version": "2.6"}  # fmt: skip


@dataclass(frozen=True)
class EpisodeSpec:
    """How to play a row: what `ptbench_agent` and the verl tool adapters need beyond the prompt."""

    bootcamp: str
    imports: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    """[{"name", "params", "timeout_s"}] in config order."""
    interaction: dict[str, Any] | None = None
    """{"name", "params"} or None."""
    max_assistant_turns: int = 8
    max_tool_calls: int = 16

    @property
    def multi_turn(self) -> bool:
        return bool(self.tools) or self.interaction is not None

    @classmethod
    def from_config(cls, cfg: BootcampConfig) -> EpisodeSpec:
        return cls(
            bootcamp=cfg.name,
            imports=list(cfg.imports),
            tools=[{"name": t.name, "params": dict(t.params), "timeout_s": t.timeout_s} for t in cfg.tools],
            interaction={"name": cfg.interaction.name, "params": dict(cfg.interaction.params)}
            if cfg.interaction
            else None,
            max_assistant_turns=cfg.limits.max_assistant_turns,
            max_tool_calls=cfg.limits.max_tool_calls,
        )

    def to_json(self) -> str:
        return canonical_json(
            {
                "bootcamp": self.bootcamp,
                "imports": self.imports,
                "tools": self.tools,
                "interaction": self.interaction,
                "limits": {"max_assistant_turns": self.max_assistant_turns, "max_tool_calls": self.max_tool_calls},
            }
        )

    @classmethod
    def from_extra_info(cls, extra_info: dict[str, Any]) -> EpisodeSpec:
        raw = (extra_info or {}).get("ptbench")
        if not raw:
            raise ValueError(
                "row has no extra_info.ptbench episode spec; regenerate it with `ptbench bootcamp generate` or "
                "`export-verl`"
            )
        data = json.loads(raw) if isinstance(raw, str) else raw
        limits = data.get("limits") or {}
        return cls(
            bootcamp=data["bootcamp"],
            imports=list(data.get("imports") or []),
            tools=list(data.get("tools") or []),
            interaction=data.get("interaction"),
            max_assistant_turns=int(limits.get("max_assistant_turns", 8)),
            max_tool_calls=int(limits.get("max_tool_calls", 16)),
        )
