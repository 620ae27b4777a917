"""A toy integrity check, as a site would add one (docs/guides/add-an-integrity-check.md): it
flags a trial whose final_model holds a file with the marker name (default `CHEAT`). One class,
registered where it is defined; its settings come from the campaign's `integrity.toy_cheat:`."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Finding, Unchecked


class ToyCheatSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)  # a misspelt key is an error, not ignored

    marker: str = Field(default="CHEAT", min_length=1, description="file name that marks a cheat")


@register_check("toy_cheat")
class ToyCheat(IntegrityCheck):
    Settings = ToyCheatSettings

    def check(self, ctx: CheckContext) -> Finding:
        marker = self.settings.marker  # type: ignore[attr-defined]
        if not ctx.final_model.is_dir():
            raise Unchecked("no final_model/ to check")  # never `clean` for what was not looked at
        hits = [
            {"where": os.path.relpath(os.path.join(root, name), ctx.trial_dir), "match": marker}
            for root, dirs, files in os.walk(ctx.final_model)  # does not follow links
            for name in dirs + files
            if name == marker
        ]
        if hits:
            return Finding(verdict="flagged", reason=f"final_model holds a file named {marker}", evidence=hits)
        return Finding(verdict="clean", reason=f"no file named {marker} in final_model")
