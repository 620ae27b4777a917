"""`ptbench.api`: docs/api.md's example runs as written, and the API's checks are the CLI's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptbench import api
from ptbench.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(), re.S)
    assert len(blocks) == 1
    return blocks[0]


@pytest.mark.slow
@pytest.mark.integration
def test_the_documented_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(_example(), "docs/api.md", "exec"), scope)  # the example as a user would paste it
    out = capsys.readouterr().out
    assert "unknown agent 'base-modle' (did you mean 'base-model'?)" in out
    assert scope["states"] == {"base-model__tiny-llama__arithmetic__s0": "completed"}
    assert scope["tables"].results["trials"][0]["status"] == "completed"
    assert "| base-model [unsandboxed] |" in scope["tables"].markdown  # sandbox: none, marked
    assert (tmp_path / "results" / "quick" / "tables" / "results.json").is_file()


def test_validate_is_the_cli_validation(tmp_path, capsys, tiny_model, test_agents):
    """The same problems, the same lines, as `ptbench validate` (the hostile input: a broken campaign)."""
    path = tmp_path / "c.yaml"
    path.write_text(
        f"name: c\nagents: [quick-cpy]\nbase_models: [{{id: local/t, path: {tiny_model}}}]\n"
        "tasks: [{name: arithmetic, options: {digts: 2}}]\nbudget: {hours: 1, gpus: 0}\n"
        "backend: {name: slurm, options: {partiton: x}}\n"
    )
    problems = api.validate(path)
    with pytest.raises(SystemExit):
        main(["validate", str(path)])
    cli = [line.removeprefix("error: ") for line in capsys.readouterr().err.splitlines()]
    assert problems == cli and len(problems) == 2  # the agent's name, the backend's option
    assert any("did you mean 'partition'?" in p for p in problems)
    fixed = path.read_text().replace("quick-cpy", "quick-copy").replace("partiton", "partition")
    path.write_text(fixed.replace("digts", "digits"))
    assert api.validate(path) == []  # control
    campaign = api.load(path)
    assert api.validate(campaign) == []  # a Campaign object gets the same checks
    broken = campaign.model_copy(update={"seeds": [0, 0]})
    assert any("two trials get the id" in p for p in api.validate(broken))


def test_collate_of_an_empty_folder_is_a_user_error(tmp_path):
    with pytest.raises(api.UserError, match="no result.json found"):
        api.collate(tmp_path)


def test_run_refuses_an_unknown_retry_kind(tmp_path, tiny_model, test_agents):
    path = tmp_path / "c.yaml"
    path.write_text(
        f"name: c\nagents: [quick-copy]\nbase_models: [{{id: local/t, path: {tiny_model}}}]\n"
        f"tasks: [arithmetic]\nbudget: {{hours: 1, gpus: 0}}\nresults_dir: {tmp_path / 'r'}\n"
    )
    with pytest.raises(api.UserError, match="retry='timed_out'"):
        api.run(path, retry=("timed_out",))
    assert not (tmp_path / "r").exists()  # refused before anything was planned
