"""The shortcuts users of other harnesses expect (issue 31): a one-line run without a campaign file,
`run --retry-failed/--retry-cancelled`, `status --rehearse`, a status table that fits 80 columns,
and validate's new checks (chat templates, backend options) — each with its hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbench.cli import main
from tests.conftest import ptbench

CAMPAIGN = """
name: sc
agents: [{name: quick-copy}, {name: link-model}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 1, gpus: 0, grace_seconds: 2}
sandbox: none
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
"""


def run_cli(capsys, *args: str) -> tuple[int, str]:
    """(exit code, stderr) of a command that fails."""
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    return int(exc.value.code or 0), capsys.readouterr().err.strip()


def one_line_error(code: int, err: str, *needles: str) -> str:
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# ---- 1. a one-line run ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_one_line_run_makes_validates_and_runs_a_campaign(test_agents, tiny_model, tmp_path):
    args = ["--agent", "quick-copy", "--model", str(tiny_model), "--task", "arithmetic", "--hours", "0.1"]
    args += ["--task-options", '{"n_test": 4}', "--gpus", "0", "--sandbox", "none"]
    first = ptbench("run", *args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    cdir = tmp_path / "results" / "arithmetic-quick-copy-tiny-llama"
    assert f"results in {cdir}" in " ".join(first.stdout.split())  # the folder is printed
    result = json.loads((cdir / "quick-copy__tiny-llama__arithmetic__s0" / "result.json").read_text())
    assert result["status"] == "completed" and result["primary_metric"]["n"] == 4
    # 4 test items: memorization has no method (the campaign says so), so it is decided in the
    # integrity stage with the other checks, not in a second check process after evaluation
    assert result["integrity"]["memorization"] == "not_applicable", result["integrity"]
    events = [json.loads(line) for line in (cdir / result["trial_id"] / "events.jsonl").read_text().splitlines()]
    assert [e.get("stage") for e in events if e["event"] == "stage_done"].count("integrity") == 1
    assert json.loads((cdir / "campaign.json").read_text())["source"] == "ptbench run"
    again = ptbench("run", *args, cwd=tmp_path)  # the same line again: the same campaign, nothing to redo
    assert again.returncode == 0, again.stderr
    assert "nothing to run" in again.stdout


def test_one_line_run_problems_name_the_flag_and_create_nothing(capsys, test_agents, tiny_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = ["--agent", "quick-copy", "--model", str(tiny_model), "--task", "arithmetic", "--hours", "0.1"]

    def bad(*args: str) -> str:
        code, err = run_cli(capsys, "run", *args)
        assert code == 2, err
        return err

    one_line_error(*run_cli(capsys, "run", *good[:2]), "--model, --task, --hours")
    one_line_error(*run_cli(capsys, "run", "c.yaml", *good), "not both")  # a file and the flags
    one_line_error(*run_cli(capsys, "run", *good, "--task-options", "{digits: 2"), "--task-options", "not JSON")
    one_line_error(*run_cli(capsys, "run", *good, "--task-options", "[2]"), "--task-options", "JSON object")
    one_line_error(
        *run_cli(capsys, "run", *good[:-1], "0"), "ptbench run --hours", "budget.hours", "positive"
    )  # the same schema as a file
    one_line_error(
        *run_cli(capsys, "run", *[("quick-cpy" if a == "quick-copy" else a) for a in good]),
        "ptbench run --agent",
        "did you mean 'quick-copy'?",
    )
    one_line_error(*run_cli(capsys, "run", *good, "--sandbox", "jail"), "ptbench run --sandbox")
    one_line_error(
        *run_cli(capsys, "run", *[("./no-such-model" if a == str(tiny_model) else a) for a in good]),
        "ptbench run --model",
        "does not exist",
    )
    # the task's options get validate's own check: the same message a campaign file gets, at the flag
    flags = bad(*good, "--task-options", '{"digts": 2}')
    assert flags.startswith("error: ptbench run --task-options: tasks[0].options.digts:"), flags
    (tmp_path / "c.yaml").write_text(
        CAMPAIGN.replace("@MODEL@", str(tiny_model))
        .replace("@RESULTS@", str(tmp_path / "results"))
        .replace("n_test: 4", "digts: 2")
    )
    code, from_file = run_cli(capsys, "validate", "c.yaml")
    assert flags.split("tasks[0]", 1)[1] in from_file
    assert not (tmp_path / "results").exists()  # nothing created by any of them


# ---- 2. retrying failed and cancelled trials ----------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_retry_failed_and_cancelled_keep_every_attempt(write_campaign, test_agents, tmp_path):
    path = write_campaign(CAMPAIGN)
    cdir = tmp_path / "results" / "sc"
    copy, link = "quick-copy__tiny__arithmetic__s0", "link-model__tiny__arithmetic__s0"
    assert ptbench("plan", str(path)).returncode == 0
    assert ptbench("cancel", str(path), copy).returncode == 0
    first = ptbench("run", str(path), cwd=tmp_path)
    status = {t: json.loads((cdir / t / "result.json").read_text())["status"] for t in (copy, link)}
    assert status[copy] == "cancelled", first.stdout
    assert status[link] in ("no_model", "agent_failed"), status  # a symlinked final model is refused
    failed_result = (cdir / link / "result.json").read_text()

    # controls: a plain run, and a retry of the other kind, leave both as they are
    plain = ptbench("run", str(path), cwd=tmp_path)
    assert "nothing to run" in plain.stdout, plain.stdout + plain.stderr
    assert plain.returncode == 1  # exit 1: some trial has no scored result (docs/campaigns.md, exit codes)
    again = ptbench("run", str(path), "--retry-failed", cwd=tmp_path)
    assert again.returncode == 1, again.stderr  # the failed trial failed again; the cancelled one stays
    assert json.loads((cdir / copy / "result.json").read_text())["status"] == "cancelled"
    assert (cdir / ".attempts" / link / "1" / "result.json").read_text() == failed_result  # kept, untouched
    assert not (cdir / ".attempts" / copy).exists()

    retried = ptbench("run", str(path), "--retry-cancelled", cwd=tmp_path)
    assert retried.returncode == 1, retried.stderr  # the copy completes; the symlinked model is refused again
    assert json.loads((cdir / copy / "result.json").read_text())["status"] == "completed"
    assert json.loads((cdir / ".attempts" / copy / "1" / "result.json").read_text())["status"] == "cancelled"
    # a completed trial is never retried, and a second retry of the failed one is attempt 2, not 1 again
    ptbench("run", str(path), "--retry-failed", "--retry-cancelled", cwd=tmp_path)
    assert sorted(p.name for p in (cdir / ".attempts" / copy).iterdir()) == ["1"]
    assert sorted(p.name for p in (cdir / ".attempts" / link).iterdir()) == ["1", "2"]
    assert (cdir / ".attempts" / link / "1" / "result.json").read_text() == failed_result
    # earlier attempts are never counted as results
    collated = ptbench("collate", str(path), "--no-plots", cwd=tmp_path)
    assert collated.returncode == 0, collated.stderr
    trials = json.loads((cdir / "tables" / "results.json").read_text())["trials"]
    assert sorted(t["trial_id"] for t in trials) == sorted([copy, link])


def test_retry_refuses_a_trial_a_runner_holds(write_campaign, test_agents, tmp_path):
    from ptbench import commands
    from ptbench.core.errors import UserError

    path = write_campaign(CAMPAIGN)
    p = commands.plan(str(path))
    trial = p.trials[0]
    assert commands.record_cancelled_if_idle(trial)
    p = commands.plan(str(path))
    with trial.try_lock() as held:  # a runner (or another `run`) holds it
        assert held
        with pytest.raises(UserError, match="a runner is still working"):
            commands.retry_finished(p, {"cancelled"})
    assert json.loads(trial.result_json.read_text())["status"] == "cancelled"
    assert not (p.campaign_dir / ".attempts").exists()


# ---- 3. status of a rehearsal -------------------------------------------------------------------


def test_status_of_a_rehearsal(write_campaign, test_agents, tmp_path):
    from ptbench import commands

    path = write_campaign(CAMPAIGN)
    commands.plan_checked(str(path), rehearse=True)  # what `run --rehearse` plans first
    plain = ptbench("status", str(path), cwd=tmp_path)
    one_line_error(plain.returncode, plain.stderr, "no planned trials", "sc-rehearsal", "status --rehearse")
    rehearsal = ptbench("status", "--rehearse", str(path), cwd=tmp_path, env={"COLUMNS": "200"})
    assert rehearsal.returncode == 0, rehearsal.stderr
    assert "sc-rehearsal: 2 pending" in rehearsal.stdout and "quick-copy__tiny__arithmetic__s0" in rehearsal.stdout
    by_folder = ptbench("status", "--rehearse", str(tmp_path / "results" / "sc"), cwd=tmp_path)
    assert by_folder.returncode == 0 and "sc-rehearsal" in by_folder.stdout
    collate = ptbench("collate", "--rehearse", str(path), "--no-plots", cwd=tmp_path)
    one_line_error(collate.returncode, collate.stderr, "sc-rehearsal", "no result.json")


# ---- 4. the status table at 80 columns ----------------------------------------------------------


def test_status_fits_80_columns_without_breaking_a_word(write_campaign, test_agents, tmp_path):
    from ptbench import commands

    path = write_campaign(
        CAMPAIGN.replace("{name: link-model}", "{name: quick-copy, label: a-rather-long-agent-label-here}").replace(
            "budget:", "seeds: [0, 1]\nbudget:"
        )
    )
    p = commands.plan(str(path))
    assert commands.record_cancelled_if_idle(p.trials[0])
    state = p.trials[1].load_state()
    state.failure = {"stage": "solve", "kind": "agent_failed", "message": "the agent exited with status 3 early"}
    p.trials[1].save_state(state)
    # the failed trial's runner printed a traceback (status names only a log that holds text)
    log = p.campaign_dir / "logs" / f"{p.trials[1].id}.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text("Traceback (most recent call last): the agent exited with status 3\n")
    rows = commands.status_rows(p.campaign_dir)

    narrow = ptbench("status", str(path), cwd=tmp_path, env={"COLUMNS": "80"})
    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    table = [line for line in lines if line.startswith(("│", "┃"))]
    assert table and max(len(line) for line in lines if not line.startswith("log of ")) <= 80
    # every cell holds whole words: joined over a row's lines, each column's text is a value of the
    # table's data (a trial id without its shared parts, a state, a detail), or that value cut with '…'
    header = [c.strip() for c in table[0].strip("┃").split("┃")]
    values = {
        "trial": {r.trial_id.replace("__tiny__arithmetic", "") for r in rows},
        "state": {r.state for r in rows},
        "stage": {r.stage or "" for r in rows},
        "detail": {r.detail for r in rows},
    }
    record: list[list[str]] = []
    for line in table[1:]:
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[0]:  # a new row; continuation lines of a row have an empty trial cell
            record.append(cells)
        else:
            record[-1] = [" ".join(x for x in (a, b) if x) for a, b in zip(record[-1], cells, strict=True)]
    assert len(record) == len(rows)
    for cells in record:
        for col, text in zip(header, cells, strict=True):
            ok = text in values.get(col, {text}) or (
                text.endswith("…") and any(v.startswith(text[:-1]) for v in values.get(col, ()))
            )
            assert ok, (col, text)
    assert "(tiny, arithmetic)" in lines[0]  # the parts every trial id shares moved to the title
    log = next(line for line in lines if line.startswith("log of quick-copy__s1: "))  # the log path, whole
    assert Path(log.split(": ", 1)[1]).name == "quick-copy__tiny__arithmetic__s1.log"

    wide = ptbench("status", str(path), cwd=tmp_path, env={"COLUMNS": "200"})  # control: whole ids when they fit
    assert "a-rather-long-agent-label-here__tiny__arithmetic__s1" in wide.stdout
    assert "the agent exited with status 3 early" in wide.stdout


# ---- 5. validate: chat templates, backend options, option messages ------------------------------


def _run_validate(capsys, path: Path) -> tuple[int, str]:
    try:
        main(["validate", str(path)])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, (out.err + out.out).strip()


CHAT = """
name: ch
agents: [quick-copy]
base_models: [{id: ID, path: "@MODEL@"}]
tasks: [{name: gsm8k, options: OPTIONS}]
budget: {hours: 1, gpus: 0}
results_dir: "@RESULTS@"
evaluation: {chat_template: TEMPLATE}
"""


@pytest.mark.parametrize(
    "base_id, options, template, refused",
    [
        ("local/tiny", "{}", "harness", True),  # the attack on a user's time: every trial would fail at eval
        ("local/qwen3-tiny", "{}", "harness", False),  # the family is read from the id
        ("local/tiny", "{prompt_format: base}", "harness", False),  # completion prompts need no template
        ("local/tiny", "{}", "model", False),  # the model's own template, asked for
        ("local/tiny", "{}", "llama3", False),  # a family named
    ],
)
def test_validate_refuses_a_base_model_without_a_chat_template(
    capsys, write_campaign, test_agents, base_id, options, template, refused
):
    path = write_campaign(CHAT.replace("ID", base_id).replace("OPTIONS", options).replace("TEMPLATE", template))
    code, text = _run_validate(capsys, path)
    if refused:
        line = one_line_error(code, text, f"{path}:4: base_models[0].id", "no harness chat template", "chat_template")
        assert "gsm8k" in line
    else:
        assert code == 0, text


def test_demo_campaign_still_validates(capsys, tiny_model, tmp_path, monkeypatch):
    """Control: the demo's local tiny Llama (no family) on arithmetic (completion prompts) is fine."""
    demo = Path(__file__).resolve().parents[2] / "campaigns" / "demo.yaml"
    text = (
        demo.read_text().replace(".cache/tiny-llama", str(tiny_model)).replace("results_dir: results", "results_dir: r")
    )
    (tmp_path / "demo.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out = _run_validate(capsys, tmp_path / "demo.yaml")
    assert code == 0, out


BACKEND = """
name: be
agents: [quick-copy]
base_models: [{id: local/tiny, path: "@MODEL@"}]
tasks: [arithmetic]
budget: {hours: 1, gpus: 0}
results_dir: "@RESULTS@"
backend:
  name: NAME
  options:
    OPTION
"""


@pytest.mark.parametrize(
    "name, option, needles",
    [
        ("slurm", "partiton: gpu", ["backend.options.partiton", "did you mean 'partition'?", "sbatch"]),
        ("slurm", "mem_gb: -3", ["backend.options.mem_gb", "greater than 0"]),
        ("htcondor", "request_disk_gbb: 3", ["backend.options.request_disk_gbb", "not an HTCondor option"]),
        ("local", "partition: gpu", ["backend.options.partition", "not an option of the local backend"]),
    ],
)
def test_backend_option_errors_name_file_line_and_a_fix(capsys, write_campaign, test_agents, name, option, needles):
    path = write_campaign(BACKEND.replace("NAME", name).replace("OPTION", option))
    code, text = _run_validate(capsys, path)
    one_line_error(code, text, f"{path}:11: ", *needles)


def test_good_backend_options_validate(capsys, write_campaign, test_agents):
    path = write_campaign(BACKEND.replace("NAME", "slurm").replace("OPTION", "partition: gpu"))
    code, text = _run_validate(capsys, path)
    assert code == 0, text


def test_task_option_errors_point_to_the_task_docs(capsys, write_campaign, test_agents):
    path = write_campaign(CAMPAIGN.replace("n_test: 4", "digts: 2"))
    code, text = _run_validate(capsys, path)
    line = one_line_error(code, text, f"{path}:5: tasks[0].options.digts", "did you mean 'digits'?", "docs/tasks.md")
    assert "ptbench list" not in line and "docs/campaigns.md" not in line
    assert Path(__file__).resolve().parents[2].joinpath("docs", "tasks.md").read_text().count("digits")
