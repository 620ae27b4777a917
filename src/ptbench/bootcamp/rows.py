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
import json
import re
from json.encoder import encode_basestring  # what json.dumps uses for str
from typing import Any

from ptbench.bootcamp.api import canonical_json
from ptbench.bootcamp.environment import Environment
from ptbench.bootcamp.rowschema import AGENT_NAME, EpisodeSpec

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


Template = tuple[list[str], list[int]]
"""The JSON of a row with marker values, cut at the markers: the text pieces, and which value goes
after each piece but the last."""


def _template(text: str) -> Template:
    pieces = _MARKED.split(text)
    return pieces[0::2], [int(slot) for slot in pieces[1::2]]


def _fill(template: Template, values: tuple[str, ...]) -> str:
    pieces, slots = template
    out = [pieces[0]]
    for slot, piece in zip(slots, pieces[1:], strict=True):
        out += (values[slot], piece)
    return "".join(out)


class RowText:
    """The JSON lines `dumps_line(build_row(...))` and `dumps_line(sft_row(...))` (chat format) of
    one split's rows, made from per-level templates."""

    def __init__(self, env: Environment, split: str, *, spec: str, reward_params: str, tools: str) -> None:
        self.env, self.split = env, split
        self.spec, self.reward_params, self.tools = spec, reward_params, tools
        self.row_t: dict[str, Template] = {}
        self.sft_t: dict[str, Template] = {}  # made from the level's first row that has an SFT example
        self.count = 0

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
        user = encode_basestring(gen.prompt(identity))
        values = (str(index), str(case_index), encode_basestring(sample_id), user, encode_basestring(gt))
        row = _fill(self.row_t[level], values)
        sft = None if completion is None else _fill(self.sft_t[level], (encode_basestring(completion), user))
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
            self.row_t[level] = _template(dumps_line(marked))
        if sft is not None and level not in self.sft_t:
            marked = copy.deepcopy(sft)
            marked["completion"][0]["content"] = _MARK.format(0)
            marked["prompt"][-1]["content"] = _MARK.format(1)
            self.sft_t[level] = _template(dumps_line(marked))
        return dumps_line(row), None if sft is None else dumps_line(sft)
