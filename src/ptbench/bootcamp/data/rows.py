"""One generated case as an RL row (verl's RLHF layout) and as an SFT example, and their JSON lines.

`build_row` and `sft_row` define the rows; `dumps_jsonl` their spelling in the files (sorted keys,
json's default separators, UTF-8). `RowText` writes the same lines at scale: every row of a level
differs from the others only in five values (index, case index, sample id, user prompt, ground
truth), so it makes the level's JSON once from `build_row`/`sft_row` with marker values, and then
fills each row's values in (a fraction of the CPU of building and encoding the dicts). It checks
itself against the dict path regularly (the first row of each level, then every 1,000th) and
raises if they ever differ.
"""

from __future__ import annotations

import copy
import itertools
import json
import operator
import re
from array import array
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring  # what json.dumps uses for str
from typing import Any

from ptbench.bootcamp.api import canonical_json
from ptbench.bootcamp.data.rowschema import AGENT_NAME, EpisodeSpec
from ptbench.bootcamp.environment import Environment

_JSONL = json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # json.dumps(r, sort_keys=True, ensure_ascii=False)


def build_row(
    env: Environment,
    split: str,
    index: int,
    case: dict[str, Any],
    *,
    gt: str | None = None,
    spec: str | None = None,
    reward_params: str | None = None,
) -> dict[str, Any]:
    """One row; `gt` (the identity's canonical JSON), `spec` (EpisodeSpec JSON) and `reward_params`
    (canonical JSON) when already known: the same for every row of a config."""
    cfg = env.config
    identity, level = case["identity"], case["level"]
    gt = gt if gt is not None else canonical_json(identity)
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
        "reward_params": reward_params if reward_params is not None else canonical_json(cfg.reward.params),
    }
    # Every row of every bootcamp has the same columns (rowschema.row_schema): what differs between
    # environments goes in the `ptbench` JSON string, so mixtures concatenate and empty splits load.
    extra["ptbench"] = spec if spec is not None else EpisodeSpec.from_config(cfg).to_json()
    return {
        "agent_name": AGENT_NAME,
        "data_source": cfg.source,
        "prompt": prompt,
        "ability": cfg.name,
        "reward_model": {"ground_truth": gt, "style": "rule"},
        "extra_info": extra,
    }


def sft_row(
    env: Environment,
    row: dict[str, Any],
    fmt: str = "chat",
    *,
    tools: str | None = None,
    identity: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The generator's reference answer as an SFT example (None: the generator has none).

    `chat` (TRL's conversational prompt-completion): `prompt` is the row's messages, `completion` one
    assistant message, `tools` the tool schemas as a JSON string (TRL's SFTTrainer json-loads it), so
    TRL applies the model's chat template and trains on the completion only. `text`: the prompt as plain
    text (system + user) and the answer as a string, for base models without a chat template."""
    identity = identity if identity is not None else json.loads(row["reward_model"]["ground_truth"])
    completion = env.generators[row["extra_info"]["level"]].reference_completion(identity)
    if completion is None:
        return None
    if fmt == "text":
        return {"completion": completion, "prompt": "\n\n".join(m["content"] for m in row["prompt"])}
    return {
        "completion": [{"content": completion, "role": "assistant"}],
        "prompt": [dict(m) for m in row["prompt"]],
        "tools": tools if tools is not None else json.dumps(env.tool_schemas, sort_keys=True),
    }


def dumps_line(row: dict[str, Any]) -> str:
    return _JSONL.encode(row) + "\n"


def dumps_jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(_JSONL.encode(r) + "\n" for r in rows).encode()


# ------------------------------------------------------------------------------ rows from templates

_MARK = "\x00ptbench-slot-{}\x00"
_MARKED = re.compile(re.escape(encode_basestring(_MARK)).replace(r"\{\}", "([0-9])"))
_CHECK_EVERY = 1000


class _Template:
    """The JSON of a row with marker values, cut at the markers; `fill` puts the values in the gaps
    (one list copy, one slice assignment and one join: a third of a Python loop over the pieces)."""

    def __init__(self, text: str) -> None:
        self.pieces = _MARKED.split(text)  # text, slot, text, slot, ..., text
        slots = [int(slot) for slot in self.pieces[1::2]]
        self.values: Callable[[tuple[str, ...]], tuple[str, ...]] = (
            operator.itemgetter(*slots) if len(slots) > 1 else lambda v: tuple(v[i] for i in slots)
        )

    def fill(self, values: tuple[str, ...]) -> str:
        out = self.pieces[:]
        out[1::2] = self.values(values)
        return "".join(out)


class RowText:
    """The JSON lines `dumps_line(build_row(...))` and `dumps_line(sft_row(...))` (chat format) of
    one split's rows, made from per-level templates."""

    def __init__(self, env: Environment, split: str, *, spec: str, reward_params: str, tools: str) -> None:
        self.env, self.split = env, split
        self.spec, self.reward_params, self.tools = spec, reward_params, tools
        self.row_t: dict[str, _Template] = {}
        self.sft_t: dict[str, _Template] = {}  # made from the level's first row that has an SFT example
        self.marked: dict[str, dict[str, Any]] = {}  # each level's row with marker values (for `table`)
        self.count = 0
        # each row's level (its position in `marked`) and its slot values, raw: what `table` is made of
        self.levels: list[int] = []
        self._level_ids: dict[str, int] = {}
        self.values: list[tuple[int, int, str, str, str]] = []

    def lines(
        self, index: int, level: str, case_index: int, sample_id: str, identity: dict[str, Any], gt: str
    ) -> tuple[str, str | None]:
        """(the row's line, the SFT example's line or None), each ending in a newline."""
        gen = self.env.generators[level]
        completion = gen.reference_completion(identity)
        self.count += 1
        want = None  # the dict path's lines: to make a level's templates, and to check them now and then
        if (
            level not in self.row_t
            or (completion is not None and level not in self.sft_t)
            or self.count % _CHECK_EVERY == 0
        ):
            want = self._by_dicts(index, level, case_index, sample_id, identity, gt)
        prompt = gen.prompt(identity)
        self.levels.append(self._level_ids[level])
        self.values.append((index, case_index, sample_id, prompt, gt))
        user = encode_basestring(prompt)
        values = (str(index), str(case_index), encode_basestring(sample_id), user, encode_basestring(gt))
        row = self.row_t[level].fill(values)
        sft = None if completion is None else self.sft_t[level].fill((encode_basestring(completion), user))
        if want is not None and (row, sft) != want:
            raise RuntimeError(f"RowText: row {index} of level {level!r} differs from build_row's (a bug)")
        return row, sft

    def _by_dicts(
        self, index: int, level: str, case_index: int, sample_id: str, identity: dict[str, Any], gt: str
    ) -> tuple[str, str | None]:
        """The lines made from dicts (the reference); the level's templates from the first such lines."""
        case = {"level": level, "k": case_index, "identity": identity, "sample_id": sample_id}
        row = build_row(self.env, self.split, index, case, gt=gt, spec=self.spec, reward_params=self.reward_params)
        sft = sft_row(self.env, row, tools=self.tools, identity=identity)
        if level not in self.row_t:
            marked = copy.deepcopy(row)
            extra = marked["extra_info"]
            extra["index"], extra["case_index"], extra["sample_id"] = (_MARK.format(i) for i in range(3))
            marked["prompt"][-1]["content"] = _MARK.format(3)
            marked["reward_model"]["ground_truth"] = _MARK.format(4)
            self.row_t[level] = _Template(dumps_line(marked))
            self.marked[level] = marked
            self._level_ids[level] = len(self._level_ids)
        if sft is not None and level not in self.sft_t:
            marked = copy.deepcopy(sft)
            marked["completion"][0]["content"] = _MARK.format(0)
            marked["prompt"][-1]["content"] = _MARK.format(1)
            self.sft_t[level] = _Template(dumps_line(marked))
        return dumps_line(row), None if sft is None else dumps_line(sft)

    def table(self) -> Any:
        """The Arrow table (`rowschema.row_schema`) of the rows `lines` made so far: what
        `rowschema.table_from_jsonl` reads from their lines, built column by column from each level's
        marked row and the rows' slot values (a fifth of the JSON reader's CPU). The leaves are made
        from buffers (`_leaf`), not `pa.array`, which imports pandas to ask whether its argument is
        one of pandas' arrays (60 MB more in every worker)."""
        import pyarrow as pa

        from ptbench.bootcamp.data.rowschema import row_schema

        schema = row_schema()
        if not self.values:
            return schema.empty_table()
        slots = list(zip(*self.values, strict=True))

        def build(typ: Any, templates: list[Any], tids: list[int], rows: list[int] | range) -> Any:
            """The array of these entries: entry e is row rows[e]'s value whose marked form is templates[tids[e]]."""
            if pa.types.is_struct(typ):
                children = [build(f.type, [t[f.name] for t in templates], tids, rows) for f in typ]
                return pa.StructArray.from_arrays(children, fields=list(typ))
            if pa.types.is_list(typ):
                first = [0]  # template t's items are items[first[t]:first[t] + len(templates[t])]
                for t in templates:
                    first.append(first[-1] + len(t))
                items = [item for t in templates for item in t]
                offsets, item_tids, item_rows = [0], list[int](), list[int]()
                for t, r in zip(tids, rows, strict=True):
                    size = len(templates[t])
                    item_tids += range(first[t], first[t] + size)
                    item_rows += [r] * size
                    offsets.append(len(item_tids))
                return pa.ListArray.from_arrays(
                    _leaf(pa.int32(), offsets), build(typ.value_type, items, item_tids, item_rows)
                )
            # a leaf: each template holds a constant, or a marker naming the slot that holds the row's value
            marks = [_slot(t) for t in templates]
            if all(m is None for m in marks):
                if all(t == templates[0] for t in templates):
                    return _leaf(typ, [templates[0]], repeat=len(tids))
                return _leaf(typ, [templates[t] for t in tids])
            if (m0 := marks[0]) is not None and all(m == m0 for m in marks) and rows == range(len(self.values)):
                return _leaf(typ, slots[m0])  # every row's own value, in row order
            return _leaf(
                typ, [templates[t] if (m := marks[t]) is None else slots[m][r] for t, r in zip(tids, rows, strict=True)]
            )

        marked = list(self.marked.values())
        arrays = [build(f.type, [m[f.name] for m in marked], self.levels, range(len(self.levels))) for f in schema]
        return pa.Table.from_arrays(arrays, schema=schema)


def _leaf(typ: Any, values: Sequence[Any], repeat: int = 1) -> Any:
    """An Arrow array of non-null strings or integers (int32 or int64) from its buffers: `values`,
    or `values` (one value) `repeat` times."""
    import pyarrow as pa

    n = len(values) * repeat
    if pa.types.is_string(typ):
        data = [v.encode() for v in values]
        offsets = array("i", [0])  # int32 offsets: a part's column is far below 2 GB
        if repeat == 1:
            offsets.extend(itertools.accumulate(map(len, data)))
            blob = b"".join(data)
        else:
            offsets.extend(range(len(data[0]), len(data[0]) * repeat + 1, len(data[0])) if data[0] else [0] * repeat)
            blob = data[0] * repeat
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(blob)]
    elif typ in (pa.int32(), pa.int64()):
        buffers = [None, pa.py_buffer(array("i" if typ == pa.int32() else "q", values) * repeat)]
    else:
        raise TypeError(f"RowText.table: no leaf of type {typ} in the row schema")
    return pa.Array.from_buffers(typ, n, buffers)


_MARK_HEAD, _MARK_TAIL = _MARK.split("{}")


def _slot(value: Any) -> int | None:
    """The slot a marked row's value (`_MARK.format(slot)`) stands for, or None for a constant."""
    if isinstance(value, str) and value.startswith(_MARK_HEAD) and value.endswith(_MARK_TAIL):
        return int(value[len(_MARK_HEAD) : -len(_MARK_TAIL)])
    return None
