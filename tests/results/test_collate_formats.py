"""The formats a paper takes its numbers from: LaTeX (compiled by a real pdflatex when installed),
Markdown, CSV and JSON, driven through the `ptbench collate` command as a user would."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest

from ptbench.results.aggregate import collate
from ptbench.results.latex import document, escape, to_latex
from ptbench.results.schema import ResultRecord
from ptbench.results.tables import to_json
from tests.conftest import ptbench
from tests.results import synthetic
from tests.support import require

HOSTILE = r"ag&nt_%$#{}~^\x"  # every character LaTeX treats specially, in a label


def hostile_records():
    trials = [
        dict(r, agent={"name": "x", "label": HOSTILE}) if r["agent"]["label"] == "x" else r for r in synthetic.TRIALS
    ]
    return [ResultRecord.model_validate(r) for r in trials + synthetic.BASELINES]


def test_escape_covers_every_special_character():
    assert escape(HOSTILE) == r"ag\&nt\_\%\$\#\{\}\textasciitilde{}\textasciicircum{}\textbackslash{}x"


def test_latex_shows_n_fallback_marks_footnotes_and_compiles(tmp_path):
    tex = to_latex(collate(hostile_records(), "base_fallback"))
    assert r"ag\&nt\_\%\$\#\{\}" in tex and HOSTILE not in tex
    assert r"(2)\textsuperscript{\dag2}" in tex  # n = 2 runs, 2 trials took the base model's score
    assert r"\textsuperscript{\P1}" in tex and r"\P$k$: $k$ trials counted as nan" in tex
    assert r"\dag$k$: $k$ trials took the base model's zero-shot score" in tex
    assert tex.count(r"\toprule") == 2 and r"\midrule" in tex
    shown = to_latex(collate(hostile_records(), "exclude", integrity_policy="show"))
    assert r"\textsuperscript{\textdegree{}1\,\ddag1}" in shown
    pdflatex = shutil.which("pdflatex")
    require(
        pdflatex is not None,
        "pdflatex missing (bash scripts/install.sh test installs texlive-latex-base, texlive-latex-recommended)",
    )
    (tmp_path / "t.tex").write_text(document(tex + "\n" + shown))
    run = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "t.pdf").read_bytes()[:5] == b"%PDF-"


def test_json_is_versioned_and_has_no_nan():
    c = collate(hostile_records(), "nan")
    data = json.loads(json.dumps(to_json(c, []), allow_nan=False))
    assert data["schema"] == "ptbench.collation" and data["schema_version"] == 1
    agg = next(a for a in data["aggregate"] if a["agent"] == HOSTILE)
    assert agg["mean"] is None and agg["values"] == [None, None] and agg["n_nan"] == 4
    trial = next(t for t in data["trials"] if t["status"] == "no_model")
    assert trial["rule"] == "nan" and trial["reason"] == "no_model" and trial["value"] is None


def test_collate_command_end_to_end(tmp_path):
    cdir = synthetic.write(tmp_path / "results")  # baselines beside it, in results/baselines
    out = tmp_path / "tables"
    run = ptbench("collate", str(cdir), "--out", str(out), timeout=120)
    assert run.returncode == 0, run.stderr
    assert "| x | 17.5 ± 3.5 (n=2) †2 | 42.5 ± 3.5 (n=2) †2 | 25.8 ± 3.5 (n=2) †4 |" in run.stdout
    assert "| instruct | 35.0 (n=2) | 85.0 (n=2) | 51.7 (n=1) |" in run.stdout
    assert (
        "Trials by rule: 7 scored; 4 base_fallback (1 agent_failed, 1 flagged, 1 no_model, 1 unchecked)" in run.stdout
    )
    assert "no base zero-shot score for C on gsm8k" in run.stderr and "baseline records read from" in run.stderr
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    agg = next(r for r in rows if r["table"] == "aggregate" and r["agent"] == "x")
    assert agg["n"] == "2" and agg["n_base_fallback"] == "4" and agg["n_scored"] == "4"
    cost = list(csv.DictReader(io.StringIO((out / "cost.csv").read_text())))
    x = next(r for r in cost if r["agent"] == "x")
    assert (
        x["trials"] == "8"
        and x["input_tokens"] == "8000"
        and x["continuations"] == "8"
        and "no_final_model=1" in x["failures"]
    )
    for stem in ("benchmarks", "aggregate", "score_vs_time", "score_vs_cost"):
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
    ptb = ptbench("collate", str(cdir), "--out", str(out), "--weights", "ptb", timeout=120)
    assert ptb.returncode == 0 and "the published weights" in ptb.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--weights", "nosuch"], "--weights nosuch: not a preset"),
        (["--policy", "lenient"], "unknown scoring policy 'lenient'"),
    ],
)
def test_bad_options_are_one_line_exit_2(tmp_path, args, message):
    cdir = synthetic.write(tmp_path / "results")
    run = ptbench("collate", str(cdir), "--out", str(tmp_path / "t"), *args, timeout=120)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "t").exists()  # nothing half-written


def test_markdown_escapes_pipes_in_labels():
    from ptbench.results.tables import to_markdown

    trials = [
        dict(r, agent={"name": "x", "label": "x|y\nz"}) if r["agent"]["label"] == "x" else r for r in synthetic.TRIALS
    ]
    md = to_markdown(collate([ResultRecord.model_validate(r) for r in trials + synthetic.BASELINES], "exclude"))
    assert "| x\\|y z | " in md
    table = md.split("\n\n")[1].splitlines()
    assert {len(re.split(r"(?<!\\)\|", line)) for line in table} == {
        len(re.split(r"\|", table[0]))
    }  # every row: 4 cells
