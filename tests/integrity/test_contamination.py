"""Contamination: planted test items the way a hostile agent would hide them, in real files
(JSONL, CSV, Parquet, zip, tar.gz), against the real task loaders and fixture test sets."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ptbench.integrity.contamination.check import check
from ptbench.integrity.contamination.ngrams import (
    Hasher,
    normalize_bytes,
    normalize_text,
)
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Unchecked
from ptbench.tasks import get_task

from .conftest import FIXTURES, write_trajectory

GSM = [json.loads(line) for line in (FIXTURES / "gsm8k" / "test.jsonl").read_text().splitlines()]


def run(trial, **kw):
    return check(CheckContext(trial_dir=trial.path, spec=trial.spec, **kw))


def disguise(text: str) -> str:
    """Changed case, doubled whitespace, punctuation swapped and a curly quote made straight."""
    return text.upper().replace(" ", "  \t").replace(".", " ;").replace(",", ";").replace("\u2019", "'")


def test_fast_path_normalises_like_the_general_path():
    raw = b'{"q": "Hello,\\n  World!\\tIt\'s A_B-c 3.5"}'
    fast, exact = normalize_bytes(raw)
    assert exact and len(fast) == len(raw.replace(b"\\n", b"  ").replace(b"\\t", b"  "))
    assert fast.split() == normalize_text('{"q": "Hello,\n  World!\tIt\'s A_B-c 3.5"}').split()
    h = Hasher()
    assert (h.tokens(fast)[0] == h.tokens(b"  " + normalize_text("q hello world it s a b c 3 5"))[0]).all()


def test_disguised_items_in_a_jsonl_are_flagged_with_evidence(trial_factory):
    trial = trial_factory(task="gsm8k")
    lines = [json.dumps({"instruction": f"filler line {i}", "output": "nothing to see"}) for i in range(500)]
    lines.insert(321, json.dumps({"instruction": disguise(GSM[2]["question"]), "output": disguise(GSM[2]["answer"])}))
    (trial.workspace / "sft_mix.jsonl").write_text("\n".join(lines) + "\n")
    f = run(trial)
    assert f.verdict == "flagged", f.reason
    ev = [e for e in f.evidence if e["item_id"] == "gsm8k-2"]
    assert {e["part"] for e in ev} == {"question", "answer"}
    assert all(e["file"] == "workspace/sft_mix.jsonl" and "(line 322)" in e["location"] for e in ev)
    assert "josh decides to try flipping a house" in " ".join(e["overlap"] for e in ev)
    assert {e["item_id"] for e in f.evidence} == {"gsm8k-2"}  # nothing else was planted


def test_questions_with_other_answers_are_flagged(trial_factory):
    trial = trial_factory(task="gsm8k")
    rows = [{"prompt": r["question"], "completion": "I think the answer is 7."} for r in GSM]
    (trial.workspace / "data").mkdir()
    (trial.workspace / "data" / "synthetic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    f = run(trial)
    assert f.verdict == "flagged"
    assert {(e["item_id"], e["part"]) for e in f.evidence} == {(f"gsm8k-{i}", "question") for i in range(3)}


def test_items_inside_parquet_zip_and_tar_are_found_with_rows_and_members(trial_factory):
    trial = trial_factory(task="gsm8k")
    table = pa.table(
        {
            "id": list(range(40)),
            "text": [f"unrelated row {i}" for i in range(39)] + [GSM[1]["question"].lower()],
            "meta": [{"src": "web", "tags": ["a", "b"]}] * 39 + [{"src": "web", "tags": [GSM[0]["question"]]}],
        }
    )
    pq.write_table(table, trial.workspace / "mix.parquet", row_group_size=16)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("inner/notes.txt", "hello\n" + disguise(GSM[2]["question"]))
    (trial.home / "stash.zip").write_bytes(buf.getvalue())
    with tarfile.open(trial.workspace / "bundle.tar.gz", "w:gz") as tf:
        data = json.dumps({"q": GSM[1]["answer"]}).encode()
        info = tarfile.TarInfo("data/answers.jsonl")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    f = run(trial)
    where = {(e["file"], e["item_id"], e["part"]): e["location"] for e in f.evidence}
    assert where[("workspace/mix.parquet[text]", "gsm8k-1", "question")] == "row 39"
    assert ("workspace/mix.parquet[meta]", "gsm8k-0", "question") in where
    assert ("home/stash.zip!inner/notes.txt", "gsm8k-2", "question") in where
    assert ("workspace/bundle.tar.gz!data/answers.jsonl", "gsm8k-1", "answer") in where
    assert f.verdict == "flagged"


def test_short_items_are_matched_whole_and_the_harness_training_split_is_clean(trial_factory):
    trial = trial_factory(task="arithmetic", options={"n_test": 4})
    task = get_task("arithmetic", n_test=4)
    train = "".join(json.dumps(r) + "\n" for r in task.train_examples(0))
    (trial.workspace / "data").mkdir()
    (trial.workspace / "data" / "train.jsonl").write_text(train)  # what the prepare stage writes
    (trial.workspace / "notes.md").write_text("I practised 31 + 96 and 67+39 today.\n")  # training pairs: fine
    assert run(trial).verdict == "clean"
    (trial.workspace / "extra.csv").write_text("a,b,sum\n5,5,10\n86 , 57,143\n")
    f = run(trial)
    assert f.verdict == "flagged"
    [e] = f.evidence
    assert (e["item_id"], e["whole_item"], e["overlap"], e["file"]) == ("86+57", True, "86 57", "workspace/extra.csv")


GPQA = [json.loads(line) for line in (FIXTURES / "gpqa" / "gpqa_main.jsonl").read_text().splitlines()]


def test_a_short_question_copied_without_its_template_is_flagged(trial_factory):
    """GPQA's questions are 6 to 11 tokens inside a templated prompt: no 13-gram of the prompt lies
    inside the question, so before question lines a copy of the bare question matched nothing."""
    trial = trial_factory(task="gpqa")
    photon, atp = GPQA[1]["Question"], GPQA[2]["Question"]  # 6 and 8 tokens
    rows = [{"instruction": f"filler line {i}", "output": "nothing to see"} for i in range(200)]
    rows.insert(50, {"instruction": disguise(photon), "output": "1"})
    rows.insert(120, {"instruction": "Quiz: " + atp + " Explain.", "output": "the mitochondrion"})
    (trial.workspace / "quiz.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    f = run(trial)
    assert f.verdict == "flagged", f.reason
    assert {(e["part"], e["file"]) for e in f.evidence} == {("question line", "workspace/quiz.jsonl")}
    overlaps = {e["item_id"]: e["overlap"] for e in f.evidence}
    assert sorted(overlaps.values()) == [
        "what is the spin of a photon",
        "which organelle produces most atp in eukaryotic cells",
    ]


def test_phrases_of_short_questions_and_option_lines_are_not_contamination(trial_factory):
    """The honest side of question lines: a file that shares phrases with the short questions, their
    options as lines, and the template's instructions, but holds no whole question, stays clean; the
    whole templated prompt is still one piece of evidence per item, not one per line."""
    trial = trial_factory(task="gpqa")
    honest = [
        "The spin of a photon is a classic exam topic; what is the spin of an electron?",
        "Which gas makes up most of the air we breathe? Mostly nitrogen, by volume.",
        "Most ATP in eukaryotic cells is made in the mitochondrion.",
        "Which organelle produces most ATP in plant cells at night?",  # the question's first 6 tokens
        "A) Oxygen\nB) Argon\nC) Carbon dioxide\nD) Nitrogen",
        "Think step by step before answering.",
        "Answer the following multiple choice question.",
    ]
    (trial.workspace / "notes.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in honest))
    assert run(trial).verdict == "clean"
    [message] = get_task("gpqa", data_path=str(FIXTURES / "gpqa")).test_examples()[0].prompt
    (trial.workspace / "copy.txt").write_text(message["content"])
    f = run(trial)
    assert f.verdict == "flagged"
    assert [e["part"] for e in f.evidence] == ["question"]


def test_evaluate_outputs_and_allowed_sources_are_not_contamination(trial_factory):
    trial = trial_factory(task="gsm8k")
    run_dir = trial.workspace / "eval_runs" / "1764000000"
    run_dir.mkdir(parents=True)
    (run_dir / "samples.jsonl").write_text(
        "".join(json.dumps({"prompt": r["question"], "completion": "5"}) + "\n" for r in GSM)
    )
    allowed = trial.workspace / "gsm8k_train_copy.jsonl"
    allowed.write_text(json.dumps({"q": GSM[0]["question"]}) + "\n")  # stands in for an allowed split that overlaps
    digest = hashlib.sha256(allowed.read_bytes()).hexdigest()
    trial = trial_factory(task="gsm8k", integrity={"allowed_sources": [f"sha256:{digest}"]})
    f = run(trial)
    assert f.verdict == "clean", f.evidence
    assert f.details["excluded"]["evaluate.sh outputs"] == ["workspace/eval_runs/1764000000/samples.jsonl"]
    assert f.details["excluded"]["allowed"] == ["workspace/gsm8k_train_copy.jsonl"]
    # The same name with different content is not allowed; a copy of the eval outputs elsewhere is data.
    allowed.write_text(json.dumps({"q": GSM[0]["question"], "x": 1}) + "\n")
    (trial.workspace / "train_from_evals.jsonl").write_bytes((run_dir / "samples.jsonl").read_bytes())
    files = {e["file"] for e in run(trial).evidence}
    assert files == {"workspace/gsm8k_train_copy.jsonl", "workspace/train_from_evals.jsonl"}


def test_data_named_by_the_trajectory_and_fresh_cache_datasets_are_scanned(trial_factory, tmp_path):
    trial = trial_factory(task="gsm8k", agent="claude-code")  # its agent.yaml names ~/.claude its CLI's state
    outside = tmp_path / "elsewhere" / "pile.jsonl"
    outside.parent.mkdir()
    outside.write_text(json.dumps({"t": GSM[0]["question"]}) + "\n")
    scaffold_log = trial.home / ".claude" / "projects" / "s.jsonl"
    scaffold_log.parent.mkdir(parents=True)
    scaffold_log.write_text(json.dumps({"tool_output": GSM[1]["question"]}) + "\n")  # the agent looked: allowed
    cache = tmp_path / "hf"
    snap = cache / "hub" / "datasets--someone--mathmix" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    pq.write_table(pa.table({"problem": [GSM[2]["question"]]}), snap / "train-00000.parquet")
    f = run(trial, cache_dirs=[cache], since=0.0)
    assert {e["file"] for e in f.evidence} == {str(snap / "train-00000.parquet") + "[problem]"}
    assert f.details["excluded"]["agent CLI state"] == ["home/.claude/projects/s.jsonl"]
    write_trajectory(trial, [f"python train.py --data {outside}", "cat ~/.claude/projects/s.jsonl > /dev/null"])
    (trial.agent_dir / "trajectory.json").write_text(
        (trial.agent_dir / "trajectory.json").read_text().replace("~", str(trial.home))
    )
    f = run(trial, cache_dirs=[cache], since=9e9)  # the cache entry is older than the trial: not the agent's
    assert {e["file"] for e in f.evidence} == {str(outside), "home/.claude/projects/s.jsonl"}


def test_only_the_trials_own_cli_state_is_excluded(trial_factory):
    """The state folders come from the trial's agent.yaml: a Claude Code session log is the CLI's, but
    the same folder in the HOME of an agent whose CLI is not Claude Code is the agent's own data."""
    for agent, flagged in (("claude-code", False), ("codex", True), ("reference", True)):
        trial = trial_factory(task="gsm8k", agent=agent)
        log = trial.home / ".claude" / "projects" / "s.jsonl"
        log.parent.mkdir(parents=True)
        log.write_text(json.dumps({"tool_output": GSM[1]["question"]}) + "\n")
        f = run(trial)
        assert (f.verdict == "flagged") is flagged, (agent, f.verdict, f.evidence)
        shutil.rmtree(trial.path)


def test_an_agent_whose_agent_yaml_is_gone_excludes_no_state_folder(trial_factory):
    """No agent.yaml to name its CLI's state folders (a Harbor import, a removed agent): nothing in
    HOME is excluded: the check decides instead of leaving the trial unchecked."""
    trial = trial_factory(task="gsm8k", agent="no-such-agent")
    assert run(trial).verdict == "clean"


def test_a_test_set_that_cannot_be_loaded_is_unchecked(trial_factory, tmp_path):
    trial = trial_factory(task="gsm8k", options={"data_path": str(tmp_path / "gone")})
    with pytest.raises(Unchecked, match="test set of task 'gsm8k' unavailable"):
        run(trial)


def test_copies_of_base_model_files_are_exempt_but_an_edited_copy_is_not(trial_factory, tmp_path):
    """A checkpoint saved with the base model's own character-level tokenizer (`"$": 13, "%": 14`) is
    not an arithmetic item; a tokenizer.json with an item slipped in is, and so is any other file."""
    base = tmp_path / "base"
    base.mkdir()
    vocab = {"<s>": 1, "$": 13, "%": 14, "&": 15}
    (base / "tokenizer.json").write_text(json.dumps({"model": {"vocab": vocab}}, indent=2))
    trial = trial_factory(task="arithmetic", options={"n_test": 200}, base=str(base))
    item = get_task("arithmetic", n_test=200).test_examples()[0].id  # e.g. "8+56"
    a, b = item.split("+")
    ckpt = trial.workspace / "ckpt"
    ckpt.mkdir()
    (ckpt / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"<s>": 1, "$": int(a), "%": int(b)}}}))
    (base / "tokenizer.json").write_bytes((ckpt / "tokenizer.json").read_bytes())  # the base ships exactly this
    f = run(trial)
    assert f.verdict == "clean", f.evidence
    assert f.details["excluded"]["copies of base model files"] == ["workspace/ckpt/tokenizer.json"]
    (ckpt / "tokenizer.json").write_text((base / "tokenizer.json").read_text() + "\n")  # one byte more: data again
    f = run(trial)
    assert f.verdict == "flagged" and {e["item_id"] for e in f.evidence} == {item}
    hub = trial_factory(task="arithmetic", options={"n_test": 200}, base=str(tmp_path / "absent"))
    (ckpt / "tokenizer.json").write_bytes((base / "tokenizer.json").read_bytes())
    assert run(hub).verdict == "flagged"  # no local base model to compare with: nothing is exempt


def test_parquet_struct_fields_keep_their_keys_but_an_item_inside_one_is_found(trial_factory):
    """Row metadata such as {case_index: 8, index: 56} reads as its JSON would, not as the item "8+56";
    an item written into one struct field, or split as a+b across two values of a string, is found."""
    trial = trial_factory(task="arithmetic", options={"n_test": 200})
    item = get_task("arithmetic", n_test=200).test_examples()[0].id
    a, b = (int(x) for x in item.split("+"))
    meta = [{"case_index": a, "index": b, "split": "test"}]
    pq.write_table(pa.table({"extra_info": meta}), trial.workspace / "rows.parquet")
    assert run(trial).verdict == "clean"
    hidden = [{"case_index": a, "index": b, "split": "test", "note": f"{a} + {b}"}]
    pq.write_table(pa.table({"extra_info": hidden}), trial.workspace / "rows.parquet")
    f = run(trial)
    assert f.verdict == "flagged" and f.evidence[0]["file"] == "workspace/rows.parquet[extra_info]"
