"""The run journal against agents that clean up after themselves.

Real pieces: `ptbench run` (the runner, its journal thread, real inotify), real bwrap, the real
contamination check, and the fixture agent `journal-cheat` (tests/fixtures/agents), whose script
hides arithmetic's test items from the final scan in the way its `mode` names: written then
deleted (slowly, and as fast as a shell can), written to /tmp and /dev/shm (and tried at the
sandbox's own root and /dev), renamed then overwritten, hidden past the journal's byte cap among
large files. None of them may end `clean`; the honest mode (training data, logs, temp files,
weights, deletions) must.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ptbench.integrity.journal import weight_kind
from ptbench.runner.cache_layer import overlay_problem
from ptbench.trial import TrialDir
from tests.conftest import ptbench
from tests.support import assert_run_exit, require

CAMPAIGN = """
name: jr
agents:
  - {name: journal-cheat, label: delete, options: {mode: delete}}
  - {name: journal-cheat, label: delete-fast, options: {mode: delete-fast}}
  - {name: journal-cheat, label: outside, options: {mode: outside, probe_root: "PROBE"}}
  - {name: journal-cheat, label: rename, options: {mode: rename}}
  - {name: journal-cheat, label: flood, options: {mode: flood}}
  - {name: journal-cheat, label: honest, options: {mode: honest}}
base_models: [{id: local/empty, path: "EMPTY", label: empty}]
tasks: [{name: arithmetic, options: {n_test: 4}}]
budget: {hours: 0.05, gpus: 0, grace_seconds: 2}
integrity: {checks: [contamination]}
sandbox: SANDBOX
sandbox_options: {journal_max_gb: 0.01}
results_dir: "@RESULTS@"
"""


def _run(
    write_campaign,
    tmp_path: Path,
    sandbox: str,
    labels: list[str] | None = None,
    *,
    text: str = CAMPAIGN,
    env: dict[str, str] | None = None,
) -> dict[str, dict]:
    (tmp_path / "empty-model").mkdir(exist_ok=True)
    text = text.replace("SANDBOX", sandbox).replace("EMPTY", str(tmp_path / "empty-model"))
    text = text.replace("PROBE", "1" if sandbox == "bwrap" else "0")  # unsandboxed, / and /dev are the host's
    if labels is not None:
        text = "\n".join(
            line
            for line in text.splitlines()
            if "journal-cheat" not in line or any(f"label: {x}," in line for x in labels)
        )
    out = ptbench("run", str(write_campaign(text)), cwd=tmp_path, env=env)
    assert_run_exit(out, tmp_path / "results")
    found = {}
    for trial in (tmp_path / "results" / "jr").glob("*/trial.json"):
        d = trial.parent
        label = d.name.split("__")[0]
        log = (d / "agent" / "native.log").read_text()
        assert "done" in log, log[-2000:]
        found[label] = {
            "dir": d,
            "log": log,
            "check": json.loads((d / "checks" / "contamination.json").read_text()),
            "result": json.loads((d / "result.json").read_text()),
        }
    return found


def _items(check: dict) -> set[str]:
    return {e["item_id"] for e in check.get("evidence") or []}


@pytest.mark.slow
def test_under_bwrap_nothing_the_agent_cleans_up_ends_clean(write_campaign, test_agents, tmp_path: Path) -> None:
    require(shutil.which("bwrap") is not None, "bwrap is not installed: apt-get install bubblewrap")
    runs = _run(write_campaign, tmp_path, "bwrap")
    assert set(runs) == {"delete", "delete-fast", "outside", "rename", "flood", "honest"}
    for label, run in runs.items():
        check = run["check"]
        assert run["result"]["integrity"]["contamination"] == check["verdict"]
        if label == "honest":
            assert check["verdict"] == "clean", check
            j = check["details"]["journal"]
            assert j["skipped_weights"] == 1 and j["gaps"] == [], j  # the safetensors file, by content
            assert j["watched"] == ["/dev/shm", "/tmp", "home", "workspace"], j
            continue
        if label != "delete-fast":  # (a race the journal may lose: below)
            assert check["verdict"] != "clean", (label, check)
        # nothing of the items is left in a file the final scan reads
        assert not any(not e["file"].startswith("journal:") for e in check.get("evidence") or []), (label, check)
    # Slow enough for the journal to keep up: flagged, the copy named by every name it was written under.
    every_item = {"13+54", "26+16", "86+57", "34+64"}
    for label, names in {
        "delete": {"journal:workspace/stash.txt"},
        "outside": {"journal:/tmp/items.txt", "journal:/dev/shm/items.txt"},
        "rename": {"journal:workspace/a.txt, workspace/b.txt", "journal:workspace/deep/er/c.txt"},
    }.items():
        check = runs[label]["check"]
        assert check["verdict"] == "flagged" and _items(check) == every_item, (label, check)
        files = {e["file"] for e in check["evidence"]}
        if label == "rename":
            # a.txt lives only until its rename: on a loaded machine the journal can first read the file as
            # b.txt (CI-like run at load ~8 on 2 cores, 2026-12-07), and then names the copy by that name
            # alone. Flagged with every item either way; the later names are always there.
            seen = {n for f in files for n in f.removeprefix("journal:").split(", ")}
            assert {"workspace/b.txt", "workspace/deep/er/c.txt"} <= seen <= {
                "workspace/a.txt", "workspace/b.txt", "workspace/deep/er/c.txt"}, check["evidence"]  # fmt: skip
        else:
            assert files == names, (label, check["evidence"])
    # The sandbox's own root and /dev are not a place to hide anything.
    assert "ROOT-WRITABLE" not in runs["outside"]["log"] and "DEV-WRITABLE" not in runs["outside"]["log"]
    assert "JOURNAL-VISIBLE" not in runs["outside"]["log"]  # the journal is not in the sandbox's view
    # Deleted by the next command (rm: a fork and exec later), and unlinked by its writer before the close:
    # the drain thread grabs each file as its creation is read, so on a machine with a core to spare both
    # are kept. On a loaded machine the file can be gone before the journal runs (CI lost this race once,
    # at load 6 on 2 cores): the journal must then say so — each file counted and named, the reason saying
    # the journal missed it — never a silent clean. (A file that short-lived is treated like data kept in
    # memory: docs/integrity.md#the-run-journal; the model trained on it is the memorization check's.)
    fast = runs["delete-fast"]["check"]
    if fast["verdict"] == "flagged":
        names = {n for e in fast["evidence"] for n in e["file"].removeprefix("journal:").split(", ")}
        # same text: one copy, two names
        assert names <= {"workspace/stash.txt", "workspace/quick.txt"}, fast["evidence"]
    else:
        j = fast["details"]["journal"]
        missed = " ".join(j["missed_short_lived_names"])
        assert fast["verdict"] == "clean" and j["missed_short_lived"] >= 1, fast
        assert "stash.txt" in missed or "quick.txt" in missed, j
        assert "lived shorter than its reaction time" in fast["reason"], fast["reason"]
    # Past the cap: the large file holding the items was not kept, is gone, and that is the verdict.
    flood = runs["flood"]["check"]
    assert flood["verdict"] == "unchecked" and "cap" in flood["reason"], flood
    assert "big4.txt" in flood["reason"]
    # The journal is the harness's: never inside the sandbox, and the pending links are gone.
    for run in runs.values():
        assert not any((run["dir"] / "journal" / "pending").iterdir())
        launch = json.loads((run["dir"] / "agent" / "launch.json").read_text())
        assert launch["journal"] is True and str(run["dir"] / "journal") not in " ".join(launch["argv"])


@pytest.mark.slow
def test_items_hidden_in_the_hf_cache_layer_and_deleted_are_flagged(
    write_campaign, test_agents, tmp_path: Path
) -> None:
    """Under bwrap the HF cache is the trial's copy-on-write layer (runner/cache_layer.py), whose
    upper folder the journal watches: a "dataset" the agent put there and removed is still evidence."""
    require(shutil.which("bwrap") is not None, "bwrap is not installed: apt-get install bubblewrap")
    require(overlay_problem() is None, f"fuse-overlayfs cannot mount here: {overlay_problem()}")
    shared = tmp_path / "hf"
    (shared / "hub").mkdir(parents=True)
    text = CAMPAIGN.replace("label: delete, options: {mode: delete}", "label: hfcache, options: {mode: hfcache}")
    runs = _run(write_campaign, tmp_path, "bwrap", ["hfcache"], text=text, env={"HF_HOME": str(shared)})
    check = runs["hfcache"]["check"]
    assert check["verdict"] == "flagged", check
    assert {e["file"] for e in check["evidence"]} == {"journal:hf-cache/hub/datasets--me--stash/items.jsonl"}
    assert "hf-cache" in check["details"]["journal"]["watched"]
    assert list((shared / "hub").iterdir()) == []  # the shared cache never saw it


@pytest.mark.slow
def test_without_a_sandbox_the_journal_says_what_it_cannot_see(write_campaign, test_agents, tmp_path: Path) -> None:
    runs = _run(write_campaign, tmp_path, "none", ["delete", "outside"])
    deleted = runs["delete"]["check"]
    assert deleted["verdict"] == "flagged" and _items(deleted), deleted
    outside = runs["outside"]["check"]
    # /tmp and /dev/shm of the host are out of the journal's sight; the verdict says so, in words.
    assert outside["verdict"] == "clean" and "sandbox none" in outside["reason"], outside
    assert any("/dev/shm" in c for c in outside["details"]["journal"]["cannot_see"])


def test_weights_are_known_by_content_not_by_name() -> None:
    header = b'{"w": {"dtype": "F32"}}'
    assert weight_kind(len(header).to_bytes(8, "little") + header) == "safetensors"
    assert weight_kind(b"GGUF\x03\x00") == "gguf"
    assert weight_kind(b"\x93NUMPY\x01\x00") == "numpy"
    zip_head = b"PK\x03\x04" + bytes(22) + (17).to_bytes(2, "little") + bytes(2) + b"archive/data.pkl"
    assert weight_kind(zip_head[:26] + (16).to_bytes(2, "little") + bytes(2) + b"archive/data.pkl") == "torch"
    assert weight_kind(b'{"question": "13+54"}') is None
    assert weight_kind(b"PK\x03\x04" + bytes(22) + (9).to_bytes(2, "little") + bytes(2) + b"items.txt") is None


def test_the_journal_keeps_what_a_process_hides_and_never_a_login_file(tmp_path: Path) -> None:
    """RunJournal directly, with a real writer process: a file held open (its link count must stay 1:
    Claude Code refuses its own files otherwise), a file made unreadable and deleted, a file written
    into a folder made after the watch began, a login file the harness copied in."""
    import subprocess
    import sys

    from ptbench.integrity.journal import read_journal
    from ptbench.launch.solve_launch import sandbox_dirs
    from ptbench.runner.journal import RunJournal
    from ptbench.trial import TrialDir

    trial = TrialDir(tmp_path / "t")
    for d in ("workspace", "home/.codex"):
        (trial.path / d).mkdir(parents=True)
    login = trial.home / ".codex" / "auth.json"
    roots = [trial.workspace, trial.home, *sandbox_dirs(trial)]
    journal = RunJournal(trial, roots, sandbox="bwrap", max_bytes=1 << 30, cannot_see=[], private=[login])
    journal.start()
    script = f"""
import os, time
os.chdir({str(trial.workspace)!r})
held = open("held.txt", "w")
held.write("86 + 57 = 143")
held.flush()
time.sleep(0.3)
assert os.fstat(held.fileno()).st_nlink == 1, "the journal changed the file's link count"
held.close()
open("locked.txt", "w").write("13 + 54 = 67")
os.chmod("locked.txt", 0)
os.makedirs("a/b/c")
open("a/b/c/deep.txt", "w").write("26 + 16 = 42")
open({str(login)!r}, "w").write('{{"token": "sk-login-canary-0123456789abcdef"}}')
time.sleep(0.3)
os.unlink("locked.txt")
os.unlink("a/b/c/deep.txt")
os.unlink("held.txt")
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    journal.flush()
    run = journal.stop()
    assert run["gaps"] == [], run
    kept = {}
    for labels, obj in read_journal(trial.path).targets:
        for label in labels:
            kept[label] = obj.read_text()
    assert kept == {
        "workspace/held.txt": "86 + 57 = 143",
        "workspace/locked.txt": "13 + 54 = 67",
        "workspace/a/b/c/deep.txt": "26 + 16 = 42",
    }, kept
    assert not any(
        "sk-login-canary" in p.read_text(errors="replace") for p in (trial.path / "journal").rglob("*") if p.is_file()
    )
    assert list((trial.path / "journal" / "pending").iterdir()) == []
    runs = json.loads((trial.path / "journal" / "summary.json").read_text())["runs"]
    assert len(runs) == 1 and runs[0]["ended"] is not None  # the placeholder written at start was closed


def test_a_race_the_journal_loses_is_counted_and_named_never_silent(tmp_path: Path, monkeypatch) -> None:
    """The journal made slower than the agent, deterministically: its first read of the kernel's
    queue waits until the writer has created, written and deleted two files (the loaded machine on
    which CI once lost this race). Nothing is kept, and the summary says what was missed, by name."""
    import threading

    from ptbench.integrity.journal import read_journal
    from ptbench.runner.journal import RunJournal

    trial = TrialDir(tmp_path / "t")
    trial.workspace.mkdir(parents=True)
    journal = RunJournal(trial, [trial.workspace], sandbox="bwrap", max_bytes=1 << 30, cannot_see=[], private=[])
    agent_done = threading.Event()
    real_read = journal.notify.read

    def late_read(timeout, *rest):
        agent_done.wait(30)
        return real_read(timeout, *rest)

    monkeypatch.setattr(journal.notify, "read", late_read)
    journal.start()
    (trial.workspace / "stash.txt").write_text("13 + 54 = 67\n")
    (trial.workspace / "stash.txt").unlink()
    fd = os.open(trial.workspace / "quick.txt", os.O_CREAT | os.O_WRONLY)
    os.write(fd, b"26 + 16 = 42\n")
    os.unlink(trial.workspace / "quick.txt")
    os.close(fd)
    agent_done.set()
    journal.flush()
    run = journal.stop()
    assert run["gaps"] == [], run
    view = read_journal(trial.path)
    assert view.targets == []
    assert view.details["missed_short_lived"] == 2, view.details
    assert sorted(n.split(" ")[0] for n in view.details["missed_short_lived_names"]) == [
        "workspace/quick.txt",
        "workspace/stash.txt",
    ], view.details
    assert view.notice and "missed 2 file version(s) that lived shorter than its reaction time" in view.notice


def test_copies_of_files_of_the_submitted_model_are_named_as_those_files_and_anything_else_is_scanned(
    tmp_path: Path,
) -> None:
    """A copy with the bytes of a file of the collected final_model/ (any file: a tokenizer, a config,
    an extra file) is that file, which the contamination check reads in final_model/; the journal
    names each such copy and the file it equals. A copy with other bytes is scanned as the journal's."""
    import hashlib

    from ptbench.integrity.journal import read_journal

    trial = tmp_path / "t"
    (trial / "final_model").mkdir(parents=True)
    (trial / "journal" / "objects").mkdir(parents=True)
    (trial / "agent").mkdir()
    (trial / "agent" / "launch.json").write_text(json.dumps({"journal": True}))
    files = {
        "workspace/final_model/tokenizer.json": b'{"vocab": {"13": 1, "14": 2}}',  # submitted: the model's own
        "workspace/final_model/notes.json": b'{"q": "13+14="}',  # submitted too, but not a model file
        "workspace/old/tokenizer.json": b'{"vocab": {"13": 1, "14": 2}, "x": "13+14="}',  # other bytes
    }
    records = []
    for label, data in files.items():
        sha = hashlib.sha256(data).hexdigest()
        (trial / "journal" / "objects" / sha).write_bytes(data)
        records.append({"kind": "kept", "sha256": sha, "label": label, "ino": 0, "size": len(data), "mtime_ns": 0})
        if "final_model" in label:
            (trial / "final_model" / Path(label).name).write_bytes(data)
    (trial / "journal" / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (trial / "journal" / "summary.json").write_text(json.dumps({"runs": [{"run": 1, "ended": 1.0, "gaps": []}]}))
    view = read_journal(trial)
    scanned = sorted(name for names, _ in view.targets for name in names)
    assert scanned == ["workspace/old/tokenizer.json"]
    assert sorted(view.in_final_model) == [
        (["workspace/final_model/notes.json"], "final_model/notes.json"),
        (["workspace/final_model/tokenizer.json"], "final_model/tokenizer.json"),
    ]
    assert view.details["copies_of_final_model_files"] == [
        "workspace/final_model/notes.json = final_model/notes.json",
        "workspace/final_model/tokenizer.json = final_model/tokenizer.json",
    ]
    assert not view.gaps
