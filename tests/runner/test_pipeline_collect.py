"""The collect stage only takes a model the agent left inside its workspace."""

from __future__ import annotations

import json

from tests.conftest import ptbench

CAMPAIGN = """
name: col
agents: [{name: link-model}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0}
results_dir: "@RESULTS@"
"""


def test_final_model_symlinked_outside_the_workspace_is_rejected(write_campaign, test_agents, tmp_path):
    path = write_campaign(CAMPAIGN)
    assert ptbench("run", str(path), cwd=tmp_path).returncode == 1  # no model: not a scored result
    trial = tmp_path / "results" / "col" / "link-model__tiny__arithmetic__s0"
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "no_model" and result["primary_metric"] is None
    collect = json.loads((trial / "state.json").read_text())["stages"]["collect"]
    assert "links outside the workspace" in collect["detail"]["rejected"]
    assert not (trial / "final_model").exists()
