"""Every user mistake: one clear line naming what/where/fix, exit code 2, nothing created."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ptbench.cli import main

GOOD = """\
name: bad
agents: [{name: quick-copy}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [arithmetic]
seeds: [0, 1]
budget: {hours: 1, gpus: 0}
results_dir: "@RESULTS@"
"""


def run_cli(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    err = capsys.readouterr().err.strip()
    return exc.value.code, err


@pytest.fixture
def campaign(tmp_path, test_agents):
    def make(text: str = GOOD, **replace: str) -> Path:
        for old, new in replace.items():
            assert old in text, old
            text = text.replace(old, new)
        (tmp_path / "tiny").mkdir(exist_ok=True)  # validate looks for a local base model's path
        text = text.replace("@MODEL@", str(tmp_path / "tiny"))
        p = tmp_path / "c.yaml"
        p.write_text(text.replace("@RESULTS@", str(tmp_path / "results")))
        return p

    return make


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize(
    "replace, needles",
    [
        ({"seeds: [0, 1]": "seeds: [0, 1"}, ["c.yaml:6", "YAML syntax error"]),
        (
            {"name: quick-copy": "name: quick-cpy"},
            ["c.yaml:2", "unknown agent 'quick-cpy'", "did you mean 'quick-copy'"],
        ),
        (
            {"tasks: [arithmetic]": "tasks: [arithmetc]"},
            ["c.yaml:4", "unknown task 'arithmetc'", "did you mean 'arithmetic'"],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nbackend: {name: slrum}"},
            ["c.yaml:6", "backend.name", "unknown backend 'slrum'", "did you mean 'slurm'"],
        ),
        (  # the shorthand, and a name nothing is near: the known ones (the registry's, a plugin's too)
            {"seeds: [0, 1]": "seeds: [0, 1]\nbackend: pbs"},
            ["c.yaml:6", "backend.name", "unknown backend 'pbs'", "known: htcondor, local, slurm", "add-a-scheduler"],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nsandbox: bwarp"},
            ["c.yaml:6", "sandbox: unknown sandbox 'bwarp'", "did you mean 'bwrap'"],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nevaluation: {engine: vlm}"},
            ["c.yaml:6", "evaluation.engine: unknown engine 'vlm'", "did you mean 'vllm'"],
        ),
        ({"hours: 1": "hours: 0"}, ["c.yaml:6", "budget.hours", "positive"]),
        ({"hours: 1": "hours: -3"}, ["c.yaml:6", "budget.hours", "positive"]),
        ({"seeds: [0, 1]": "sedes: [0, 1]"}, ["c.yaml:5", "unknown key 'sedes'", "did you mean 'seeds'"]),
        (
            {"gpus: 0}": "gpus: 0, grase_seconds: 3}"},
            ["c.yaml:6", "unknown key 'budget.grase_seconds'", "did you mean 'grace_seconds'"],
        ),
        ({"seeds: [0, 1]": "seeds: [0, 1]\nseeds: [2]"}, ["c.yaml:6", "'seeds' appears twice"]),
        (
            {"agents: [{name: quick-copy}]": "agents: [{name: quick-copy}, {name: quick-copy}]"},
            ["two trials get the id 'quick-copy__tiny__arithmetic__s0'", "distinct labels"],
        ),
        # task and agent options, against what each declares (the constructor's signature / agent.yaml)
        (
            {"tasks: [arithmetic]": "tasks: [{name: arithmetic, options: {digits: lots}}]"},
            ["c.yaml:4", "tasks[0].options.digits", "valid integer", "'lots'"],
        ),
        (
            {"tasks: [arithmetic]": "tasks:\n  - name: arithmetic\n    options:\n      digts: 2"},
            ["c.yaml:7", "tasks[0].options.digts", "did you mean 'digits'"],
        ),
        (
            {"tasks: [arithmetic]": "tasks: [{name: arithmetic, options: {digits: 7}}]"},
            ["c.yaml:4", "tasks[0].options", "digits must be 1, 2 or 3"],
        ),
        (
            {"agents: [{name: quick-copy}]": "agents: [{name: reference, options: {max_step: 5}}]"},
            ["c.yaml:2", "agents[0].options.max_step", "did you mean 'max_steps'"],
        ),
        (
            {"agents: [{name: quick-copy}]": "agents: [{name: reference, options: {max_steps: many}}]"},
            ["c.yaml:2", "agents[0].options.max_steps", "expected int"],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nbackend: {name: slurm, options: {partiton: gpu}}"},
            ["backend.options.partiton", "not a Slurm option"],
        ),
        # network: gateway only where every model call goes through the trial gateway, under bwrap
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nsandbox_options: {network: gateway}"},
            ["c.yaml:6", "sandbox_options.network", "agent 'quick-copy'", "network: host"],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nsandbox: none\nsandbox_options: {network: gateway}"},
            ["c.yaml:7", "needs sandbox: bwrap"],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nsandbox_options: {network: wifi}"},
            ["c.yaml:6", "'wifi' is not one of gateway, host"],
        ),
        # a local base model that is not there, and a gateway agent without a model: caught here, not on the node
        (
            {'path: "@MODEL@"': "path: /nonexistent/tiny"},
            ["c.yaml:3", "base_models[0].path", "/nonexistent/tiny does not exist", "path_on_nodes: true"],
        ),
        (
            {"agents: [{name: quick-copy}]": "agents:\n  - name: quick-copy\n  - name: claude-code"},
            ["c.yaml:4", "agents[1].model", "agent 'claude-code'", "add `model:`"],
        ),
        # a required integrity check must decide every trial: refused before anything runs where it has no
        # method for a task, or where the campaign makes the test split too small for it
        (
            {
                "seeds: [0, 1]": "seeds: [0, 1]\nintegrity:\n  require: [memorization]\n",
                "tasks: [arithmetic]": ("tasks: [arithmetic, {name: arena_hard_writing, options: {data_path: /x}}]"),
                "id: local/tiny": "id: local/qwen3-tiny",  # a chat template exists: the one problem is require's
            },
            ["c.yaml:7", "integrity.require", "'memorization' does not apply to tasks[1] 'arena_hard_writing'"],
        ),
        (
            {
                "seeds: [0, 1]": "seeds: [0, 1]\nintegrity: {require: [memorization]}",
                "tasks: [arithmetic]": "tasks: [{name: arithmetic, options: {n_test: 12}}]",
            },
            ["c.yaml:6", "tasks[0] 'arithmetic'", "too small for the check to have power"],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nintegrity: {checks: [contamination], require: [memorization]}"},
            ["c.yaml:6", "'memorization' is not among the checks run", "add it to checks"],
        ),
        # integrity check names are plugin names, checked against the registry (not a list in spec/)
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nintegrity:\n  checks: [contamination, memorisation]\n"},
            [
                "c.yaml:7",
                "integrity.checks[1]",
                "unknown integrity check 'memorisation'",
                "did you mean 'memorization'?",
            ],
        ),
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nintegrity:\n  chekcs: [contamination]\n"},
            ["c.yaml:7", "unknown key 'integrity.chekcs'", "did you mean 'checks'?"],
        ),
        # other keys under integrity: are a check's settings, validated by its settings model
        (
            {"seeds: [0, 1]": "seeds: [0, 1]\nintegrity:\n  api_usage:\n    strict: true\n"},
            ["c.yaml:8", "unknown key 'integrity.api_usage.strict'"],
        ),
    ],
)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_campaign_is_one_line_and_creates_nothing(campaign, capsys, tmp_path, replace, needles, command):
    path = campaign(**replace)
    code, err = run_cli(capsys, command, str(path))
    assert_one_line_error(code, err, *needles)
    assert not (tmp_path / "results").exists()


def test_path_on_nodes_is_the_explicit_opt_out(campaign, capsys, tmp_path):
    """A path that exists only on the compute nodes: validated and planned, and recorded as such."""
    path = campaign(**{'path: "@MODEL@"': "path: /nodes-only/tiny, path_on_nodes: true"})
    assert main_ok(["validate", str(path)])
    assert main_ok(["plan", str(path)])
    spec = json.loads((tmp_path / "results" / "bad" / "quick-copy__tiny__arithmetic__s0" / "trial.json").read_text())
    assert spec["base_model"]["path"] == "/nodes-only/tiny" and spec["base_model"]["path_on_nodes"] is True
    # at its default the field stays out of trial.json: trials planned before it existed keep their hash
    plain = campaign()
    (tmp_path / "results").rename(tmp_path / "results-nodes")
    assert main_ok(["plan", str(plain)])
    spec = json.loads((tmp_path / "results" / "bad" / "quick-copy__tiny__arithmetic__s0" / "trial.json").read_text())
    assert "path_on_nodes" not in spec["base_model"]


def test_missing_campaign_file(capsys, tmp_path):
    code, err = run_cli(capsys, "validate", str(tmp_path / "nope.yaml"))
    assert_one_line_error(code, err, "nope.yaml: file not found")


def test_results_dir_not_writable(campaign, capsys, tmp_path):
    if os.geteuid() == 0:
        # root ignores permission bits: a results_dir under a regular file is unwritable for anyone
        blocker = tmp_path / "blocker"
        blocker.write_text("")
        path = campaign(**{'"@RESULTS@"': f'"{blocker}/results"'})
    else:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        path = campaign(**{'"@RESULTS@"': f'"{ro}/results"'})
    code, err = run_cli(capsys, "plan", str(path))
    assert_one_line_error(code, err, "is not writable", "results_dir")


def test_trial_directory_from_another_campaign(campaign, capsys, tmp_path):
    path = campaign()
    assert main_ok(["plan", str(path)])
    trial = tmp_path / "results" / "bad" / "quick-copy__tiny__arithmetic__s0" / "trial.json"
    spec = json.loads(trial.read_text())
    spec["campaign"] = "someone-else"
    trial.write_text(json.dumps(spec))
    before = sorted(p.name for p in (tmp_path / "results" / "bad").iterdir())
    code, err = run_cli(capsys, "plan", str(path))
    assert_one_line_error(code, err, "belongs to campaign 'someone-else'")
    assert sorted(p.name for p in (tmp_path / "results" / "bad").iterdir()) == before


def test_trial_run_on_corrupt_state(campaign, capsys, tmp_path):
    path = campaign()
    assert main_ok(["plan", str(path)])
    trial = tmp_path / "results" / "bad" / "quick-copy__tiny__arithmetic__s0"
    (trial / "state.json").write_text('{"stages": {"prepare": ')
    code, err = run_cli(capsys, "trial", "run", str(trial))
    assert_one_line_error(code, err, "state.json: corrupt state file", "move it aside")
    assert (trial / "state.json").read_text() == '{"stages": {"prepare": '
    assert not (trial / "result.json").exists()


def test_trial_run_on_a_non_trial_directory(capsys, tmp_path):
    code, err = run_cli(capsys, "trial", "run", str(tmp_path))
    assert_one_line_error(code, err, "not a trial directory")


def main_ok(args: list[str]) -> bool:
    try:
        main(args)
    except SystemExit as exc:
        return exc.code in (0, None)
    return True


@pytest.mark.parametrize(
    "args, message",
    [
        (["no-such-command"], "No such command 'no-such-command'"),
        (["collate"], "Missing argument 'targets'"),
        (["status", "--no-such-flag", "x"], "No such option: --no-such-flag"),
    ],
)
def test_a_usage_mistake_is_clicks_message_and_exit_2_not_a_traceback(capsys, args, message):
    """typer 0.2x carries its own copy of click, whose usage errors are not click's: main() must
    still turn them into the usage message and exit code 2."""
    import typer

    from ptbench.cli.main import _click_exceptions

    errors, aborts = _click_exceptions()
    assert issubclass(typer.BadParameter, errors) and issubclass(typer.Abort, aborts)
    code, err = run_cli(capsys, *args)
    assert code == 2
    assert message in err and "Traceback" not in err and "Try '" in err


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["eval", "arithmetic", "--model", "/nope"], ["--model /nope: no such folder"]),
        (["baseline", "--model", "./nope", "--tasks", "arithmetic"], ["--model ./nope: no such folder"]),
        (["eval-references", "arena_hard_writing", "--model", "/nope"], ["--model /nope: no such folder"]),
    ],
)
def test_a_model_path_that_is_not_there_says_so(capsys, argv, needles):
    """Not a hub id error: a path is never read as a hub id (issue 31)."""
    code, err = run_cli(capsys, *argv)
    assert_one_line_error(code, err, *needles)


def test_a_folder_given_as_a_campaign_says_it_is_a_folder(capsys, tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\n")
    code, err = run_cli(capsys, "validate", str(tmp_path))
    assert_one_line_error(code, err, "is a folder, not a campaign file", "a.yaml")


def test_validate_lists_every_problem_at_once(campaign, capsys, tmp_path):
    """Schema problems and name/path problems alike, one line each, so a file is fixed in one pass."""
    path = campaign(
        **{
            "agents: [{name: quick-copy}]": "agents: [{name: quick-cpy}, {name: referense}]",
            "tasks: [arithmetic]": "tasks: [arithmetc]",
        }
    )
    code, err = run_cli(capsys, "validate", str(path))
    lines = err.splitlines()
    assert code == 2 and all(line.startswith("error: ") for line in lines), err
    assert len(lines) == 3, err
    assert "unknown agent 'quick-cpy'" in lines[0] and "did you mean 'reference'" in lines[1]
    assert "c.yaml:4" in lines[2] and "unknown task 'arithmetc'" in lines[2]
    bad_schema = campaign(**{"seeds: [0, 1]": "sedes: [0, 1]", "hours: 1": "hours: 0, grase: 3"})
    code, err = run_cli(capsys, "validate", str(bad_schema))
    assert code == 2 and len(err.splitlines()) == 3, err
    assert "Value error" not in err and "did you mean 'seeds'" in err and "did you mean 'grace_seconds'" in err
    assert not (tmp_path / "results").exists()
