"""An integrity check from a third-party package (the toy plugin's `toy_cheat`, tests/plugins/ptbench-toy).
Its real campaign (the honest trial clean, the one that planted a `CHEAT` file in final_model flagged)
runs with every toy plugin at once in tests/core/test_registry_plugins.py. Its name and settings are checked by
`validate` against the registry: a misspelt name or key is one line with file:line and did-you-mean."""

from __future__ import annotations

import pytest

from tests.conftest import ptbench
from tests.support import install_plugin_package

CAMPAIGN = """
name: toy
agents:
  - toy-copy
  - {name: toy-copy, label: toy-cheat, options: {plant: CHEAT}}
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
results_dir: "@RESULTS@"
integrity:
  checks: [toy_cheat]
  require: [toy_cheat]
  toy_cheat: {marker: CHEAT}
"""


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory) -> dict[str, str]:
    return install_plugin_package(tmp_path_factory.mktemp("toy") / "site")


def _one_line(out, *needles: str) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# The campaign requiring the toy check (honest clean, planted CHEAT flagged, the toy CLI's trace parsed)
# runs once for every toy plugin together: tests/core/test_registry_plugins.py,
# test_one_campaign_on_every_toy_plugin_at_once.


def test_a_misspelt_plugin_check_is_one_line_with_did_you_mean(write_campaign, tmp_path, toy_env):
    path = write_campaign(CAMPAIGN.replace("checks: [toy_cheat]\n  require: [toy_cheat]", "checks: [toy_chaet]"))
    _one_line(
        ptbench("validate", str(path), cwd=tmp_path, env=toy_env),
        f"{path}:11:",
        "integrity.checks[0]: unknown integrity check 'toy_chaet'",
        "did you mean 'toy_cheat'?",
    )
    assert not (tmp_path / "results").exists()


def test_the_plugin_checks_settings_are_validated_by_its_model(write_campaign, tmp_path, toy_env):
    path = write_campaign(CAMPAIGN.replace("toy_cheat: {marker: CHEAT}", "toy_cheat: {markr: CHEAT}"))
    _one_line(
        ptbench("validate", str(path), cwd=tmp_path, env=toy_env),
        f"{path}:13:",  # the line of the misspelt key itself
        "unknown key 'integrity.toy_cheat.markr'",
        "did you mean 'marker'?",
    )
    path = write_campaign(CAMPAIGN.replace("toy_cheat: {marker: CHEAT}", "toy_cheat: {marker: ''}"))
    _one_line(ptbench("validate", str(path), cwd=tmp_path, env=toy_env), f"{path}:13:", "integrity.toy_cheat.marker")
    # The honest control: the same campaign validates.
    out = ptbench("validate", str(write_campaign(CAMPAIGN)), cwd=tmp_path, env=toy_env)
    assert out.returncode == 0, out.stderr


def test_without_the_plugin_its_check_is_unknown(write_campaign, tmp_path):
    """The suite's own interpreter (and a ptbench without the package) has no toy_cheat: a campaign
    naming it is refused, never run without its check."""
    from ptbench.integrity.checks import CHECKS

    assert "toy_cheat" not in CHECKS.names()
    out = ptbench("validate", str(write_campaign(CAMPAIGN.replace("toy-copy", "reference"))), cwd=tmp_path)
    assert out.returncode == 2 and "unknown integrity check 'toy_cheat'" in out.stderr, out.stderr
