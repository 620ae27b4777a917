"""The script a scripted provider plays: a list of turns, written in YAML or JSON.

Each turn is one model reply: a tool action (`shell`, `write_file`), a final `message`, or an API
`error` the provider answers with instead of a reply (to exercise the CLI's failure handling).
Example::

    turns:
      - shell: "python train.py > train.log 2>&1"
        timeout_s: 3600
      - write_file: {path: notes.md, content: "done\\n"}
      - message: "final_model/ is saved."
      - error: {kind: rate_limit}       # answered before the next reply, `times` times
        times: 2
      - shell: "sleep 1000"             # a turn that overruns any small budget
        delay_s: 0.5                    # the provider waits this long before replying
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ptbench.core.errors import UserError

ErrorKind = Literal["rate_limit", "overloaded", "auth", "quota", "context_length", "server"]


class WriteFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(
        description="Relative paths are made absolute against the agent's working directory when the request names it."
    )
    content: str


class ApiError(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: ErrorKind
    message: str | None = Field(default=None, description="Overrides the provider-typical message text.")


class Turn(BaseModel):
    """One scripted model reply. Exactly one of shell / write_file / message / error."""

    model_config = ConfigDict(extra="forbid")
    shell: str | None = None
    write_file: WriteFile | None = None
    message: str | None = None
    error: ApiError | None = None
    times: int | None = Field(default=None, ge=1, description="error only: how many requests get it (default: all).")
    timeout_s: float | None = Field(
        default=None, gt=0, description="shell only: passed as the tool's timeout where it has one."
    )
    delay_s: float = Field(default=0.0, ge=0, description="Seconds the provider waits before answering.")

    @model_validator(mode="after")
    def _one_kind(self) -> Turn:
        kinds = [k for k in ("shell", "write_file", "message", "error") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a turn needs exactly one of shell, write_file, message, error (got {kinds or 'none'})")
        if self.times is not None and self.error is None:
            raise ValueError("`times` applies only to an error turn")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in ("shell", "write_file", "message", "error") if getattr(self, k) is not None)


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turns: list[Turn] = Field(min_length=1)
    after_end: str = Field(default="The scripted session is over.", description="Reply once every turn is played.")
    side_reply: str = Field(
        default="Scripted session", description="Reply to side requests (titles, summaries, checks)."
    )

    def replies(self) -> list[Turn]:
        """The turns that produce a model reply, in order (error turns are not replies)."""
        return [t for t in self.turns if t.error is None]


def load_script(path: str | Path) -> Script:
    """Read a script file (YAML or JSON); a malformed one is a UserError naming the file and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read script {path}: {exc.strerror}; pass an existing YAML/JSON file") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"script {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from exc
    if isinstance(data, list):  # a bare list of turns is accepted too
        data = {"turns": data}
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise UserError(
            f"script {path}: field {where}: {err['msg']}; see ptbench/testing/script.py for the format"
        ) from exc
