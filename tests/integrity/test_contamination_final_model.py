"""Contamination reads final_model/: test items kept inside the submitted model (a config, an extra file,
a tokenizer, a "weights" file that is not one) are flagged; the model's own files, a legit fine-tune's
configs and tokenizer, and real weights stay clean, and tensor bytes are never read as text.

Real pieces: the tiny model (tests/conftest.py) as the trusted base and as what is submitted, files
saved by transformers/tokenizers/safetensors/torch, the fixture test sets, and the real check through
`run_checks` (its own process, as the integrity stage runs it).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from ptbench.integrity import run_checks
from ptbench.integrity.contamination.model_files import tensor_file
from ptbench.tasks import get_task

from .conftest import FIXTURES

GSM = [json.loads(line) for line in (FIXTURES / "gsm8k" / "test.jsonl").read_text().splitlines()]
ITEM = GSM[1]["question"]
CHECK = {"checks": ["contamination"]}


def _trial(trial_factory, tiny_model: Path, **kw):
    trial = trial_factory(base=str(tiny_model), integrity=CHECK, **kw)
    shutil.copytree(tiny_model, trial.final_model)
    return trial


def _run(trial) -> dict:
    verdicts = run_checks(trial.path, trial.spec, cache_dirs=[])
    report = json.loads((trial.checks_dir / "contamination.json").read_text())
    assert verdicts == {"contamination": report["verdict"]}
    return report


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2))


def _safetensors(path: Path, metadata: dict[str, str] | None = None) -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    save_file({"w": rng.standard_normal((64, 32)).astype(np.float32), "b": np.zeros(7, np.int64)}, path, metadata)


def _gguf(path: Path, strings: dict[str, str]) -> None:
    """A GGUF v3 file with string metadata and two F32 tensors (the layout llama.cpp reads)."""

    def s(x: str) -> bytes:
        b = x.encode()
        return struct.pack("<Q", len(b)) + b

    tensors = [("a", (8, 4)), ("b", (5,))]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(strings))
    for k, v in strings.items():
        out += s(k) + struct.pack("<I", 8) + s(v)
    offset, data = 0, b""
    for name, dims in tensors:
        out += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", 0, offset)
        body = np.arange(int(np.prod(dims)), dtype=np.float32).tobytes()
        data += body + b"\0" * (-len(body) % 32)
        offset = len(data)
    out += b"\0" * (-len(out) % 32)
    path.write_bytes(out + data)


def _plant(final: Path, how: str) -> str:
    """Hide the test item in final_model/ as `how` says; returns the file evidence must name."""
    if how == "generation_config":
        _edit_json(final / "generation_config.json", note=ITEM)
        return "final_model/generation_config.json"
    if how == "extra_file":
        (final / "README.md").write_text(f"# Model card\n\nExample prompt: {ITEM}\n")
        return "final_model/README.md"
    if how == "subfolder":
        (final / "extra" / "deep").mkdir(parents=True)
        (final / "extra" / "deep" / "rows.jsonl").write_text(json.dumps({"prompt": ITEM, "completion": "7"}) + "\n")
        return "final_model/extra/deep/rows.jsonl"
    if how == "base64_in_config":
        _edit_json(final / "config.json", _hash=base64.b64encode(gzip.compress(ITEM.encode())).decode())
        return "final_model/config.json"
    if how == "gzip_named_bin":
        (final / "optimizer.bin").write_bytes(gzip.compress(ITEM.encode()))
        return "final_model/optimizer.bin"
    if how == "fake_safetensors":
        (final / "model-00002-of-00002.safetensors").write_text(json.dumps({"rows": [ITEM]}))
        return "final_model/model-00002-of-00002.safetensors"
    if how == "safetensors_metadata":
        _safetensors(final / "adapter_model.safetensors", metadata={"format": "pt", "notes": ITEM})
        return "final_model/adapter_model.safetensors"
    if how == "safetensors_trailer":
        data = (final / "model.safetensors").read_bytes() + ITEM.encode()
        (final / "model.safetensors").write_bytes(data)
        return "final_model/model.safetensors"
    if how == "nul_prefixed":
        (final / "cache.dat").write_bytes(b"\0\x01\x02" + ITEM.encode() + b"\0")
        return "final_model/cache.dat"
    if how == "tokenizer_added_token":
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(final)
        tok.add_tokens([ITEM])
        tok.save_pretrained(final)
        return "final_model/tokenizer.json"
    if how == "chat_template_few_shot":
        template = (final / "chat_template.jinja").read_text()
        (final / "chat_template.jinja").write_text(f"Example: {ITEM}\nAnswer: 5\n" + template)
        return "final_model/chat_template.jinja"
    if how == "torch_pickle":
        import torch

        torch.save({"w": torch.zeros(3), "notes": ITEM}, final / "training_state.pt")
        return "final_model/training_state.pt"
    if how == "gguf_metadata":
        _gguf(final / "model.gguf", {"general.name": "tiny", "general.description": ITEM})
        return "final_model/model.gguf"
    raise AssertionError(how)


ATTACKS = [
    "generation_config",
    "extra_file",
    "subfolder",
    "base64_in_config",
    "gzip_named_bin",
    "fake_safetensors",
    "safetensors_metadata",
    "safetensors_trailer",
    "nul_prefixed",
    "tokenizer_added_token",
    "chat_template_few_shot",
    "torch_pickle",
    "gguf_metadata",
]


@pytest.mark.slow
@pytest.mark.parametrize("how", ATTACKS)
def test_test_items_kept_inside_the_submitted_model_are_flagged(trial_factory, tiny_model, how):
    trial = _trial(trial_factory, tiny_model)  # the workspace is empty: only final_model/ holds the item
    where = _plant(trial.final_model, how)
    report = _run(trial)
    assert report["verdict"] == "flagged", report["reason"]
    assert {e["item_id"] for e in report["evidence"]} == {"gsm8k-1"}
    assert {e["file"].split(" (")[0] for e in report["evidence"]} == {where}, report["evidence"]


@pytest.mark.slow
def test_the_tiny_models_own_files_are_clean_and_its_weights_are_not_read(trial_factory, tiny_model):
    trial = _trial(trial_factory, tiny_model)
    report = _run(trial)
    assert report["verdict"] == "clean", report["evidence"]
    fm = report["details"]["final_model"]
    assert fm["base"] == str(tiny_model.resolve())
    how = fm["files_how"]
    assert how["final_model/tokenizer.json"] == "identical to the base model's tokenizer.json: not read"
    assert how["final_model/config.json"].startswith("identical to the base model's")
    [weights] = fm["weights"]
    size = (tiny_model / "model.safetensors").stat().st_size
    assert weights["file"] == "final_model/model.safetensors" and weights["format"] == "safetensors"
    header = int.from_bytes((tiny_model / "model.safetensors").read_bytes()[:8], "little")
    assert weights["tensor_bytes"] == size - 8 - header  # everything but the header is left unread
    names = list(json.loads((tiny_model / "model.safetensors").read_bytes()[8 : 8 + header]))
    # what was read of final_model/: the header's free text (metadata, tensor names), nothing else
    assert 0 < fm["bytes_to_scan"] <= len("\n".join(names)) + 32 < header


@pytest.mark.slow
def test_a_legit_fine_tunes_configs_tokenizer_and_weights_are_clean(trial_factory, tiny_model, tmp_path):
    """Saved by transformers as a fine-tune would: added special tokens, a chat template, generation
    settings, a resized config, real safetensors and a torch training-state file. On arithmetic the
    base's character-level vocabulary reads `"$": 13, "%": 14` as the test items 13+14 and 20+21: the rewritten
    tokenizer.json is read for what it adds to the base's, and stays clean; the same file read whole
    (a copy in the workspace) is flagged, so this control can fail."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, GenerationConfig

    options = {"n_test": 100}
    assert "13+14" in {e.id for e in get_task("arithmetic", **options).test_examples()}
    trial = _trial(trial_factory, tiny_model, task="arithmetic", options=options)
    final = trial.final_model
    tok = AutoTokenizer.from_pretrained(final)
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tok.chat_template = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    tok.save_pretrained(final)
    config = AutoConfig.from_pretrained(final)
    config.vocab_size = len(tok)
    config.save_pretrained(final)
    gen = GenerationConfig.from_pretrained(final)
    gen.do_sample, gen.temperature, gen.max_new_tokens = True, 0.7, 8
    gen.save_pretrained(final)
    _safetensors(final / "model-extra.safetensors", metadata={"format": "pt"})
    torch.save({"step": 150, "lr": 1e-4, "optimizer": "adamw_torch", "m": torch.ones(4, 4)}, final / "trainer_state.pt")
    base_tokenizer = (tiny_model / "tokenizer.json").read_bytes()
    assert (final / "tokenizer.json").read_bytes() != base_tokenizer
    report = _run(trial)
    assert report["verdict"] == "clean", report["evidence"]
    how = report["details"]["final_model"]["files_how"]
    assert how["final_model/tokenizer.json"].startswith("compared with the base model's tokenizer.json: JSON entries")
    assert how["final_model/generation_config.json"].startswith("compared with the base model's")
    assert {w["format"] for w in report["details"]["final_model"]["weights"]} == {"safetensors", "torch"}
    shutil.copy(final / "tokenizer.json", trial.workspace / "tokenizer.json")  # the same bytes, read whole
    report = _run(trial)
    assert report["verdict"] == "flagged" and {e["item_id"] for e in report["evidence"]} == {"13+14", "20+21"}
    assert {e["file"] for e in report["evidence"]} == {"workspace/tokenizer.json"}


@pytest.mark.slow
def test_a_hub_base_is_found_in_the_trusted_cache_and_never_in_the_agents_layer(trial_factory, tiny_model, tmp_path):
    """The base found as the memorization check finds it: a hub id in the shared cache. A "base" the
    agent put in its own cache layer is not trusted: compared with nothing, the tokenizer is read whole."""
    cache = tmp_path / "hf"
    snap = cache / "hub" / "models--tiny--base" / "snapshots" / "abc"
    shutil.copytree(tiny_model, snap)
    trial = trial_factory(task="arithmetic", options={"n_test": 100}, base="", integrity=CHECK)  # hub id only
    shutil.copytree(tiny_model, trial.final_model)
    (trial.final_model / "tokenizer.json").write_text((tiny_model / "tokenizer.json").read_text() + "\n")
    verdicts = run_checks(trial.path, trial.spec, cache_dirs=[cache])
    fm = json.loads((trial.checks_dir / "contamination.json").read_text())["details"]["final_model"]
    assert verdicts == {"contamination": "clean"} and fm["base"] == str(snap)
    layer = trial.path / "hf-layer" / "upper"
    shutil.copytree(snap.parent.parent.parent, layer / "hub" / "models--tiny--base")
    verdicts = run_checks(trial.path, trial.spec, cache_dirs=[])  # only the agent's layer holds it
    again = json.loads((trial.checks_dir / "contamination.json").read_text())
    assert again["details"]["final_model"]["base"] is None
    assert verdicts == {"contamination": "flagged"} and {e["item_id"] for e in again["evidence"]} == {"13+14", "20+21"}


def _journal(trial, files: dict[str, bytes]) -> None:
    """A run journal (the runner's format) that kept these files, all gone from where they were written."""
    root = trial.path / "journal"
    (root / "objects").mkdir(parents=True)
    (trial.agent_dir / "launch.json").write_text(json.dumps({"journal": True}))
    records = []
    for label, data in files.items():
        sha = hashlib.sha256(data).hexdigest()
        (root / "objects" / sha).write_bytes(data)
        records.append({"kind": "kept", "sha256": sha, "label": label, "ino": 0, "size": len(data), "mtime_ns": 0})
    (root / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "summary.json").write_text(json.dumps({"runs": [{"run": 1, "ended": 1.0, "gaps": []}]}))


@pytest.mark.slow
def test_a_journal_copy_of_a_final_model_file_is_read_as_that_file_and_the_exclusion_is_recorded(
    trial_factory, tiny_model
):
    trial = _trial(trial_factory, tiny_model)
    _plant(trial.final_model, "generation_config")
    gen = (trial.final_model / "generation_config.json").read_bytes()
    tokenizer = (trial.final_model / "tokenizer.json").read_bytes()
    _journal(
        trial,
        {
            "workspace/final_model/generation_config.json": gen,  # collected: now final_model/generation_config.json
            "workspace/final_model/tokenizer.json": tokenizer,
            "workspace/old_config.json": gen + b"\n",  # other bytes: a copy scanned as the journal's
        },
    )
    report = _run(trial)
    assert report["verdict"] == "flagged"
    files = {e["file"] for e in report["evidence"]}
    assert files == {
        "final_model/generation_config.json (JSON entries not in the base model's)",
        "journal:workspace/old_config.json",
    }
    excluded = report["details"]["excluded"]["journal copies of final_model files"]
    assert excluded == [
        "journal:workspace/final_model/generation_config.json = final_model/generation_config.json (compared with "
        "the base model's generation_config.json: JSON entries not in it read)",
        "journal:workspace/final_model/tokenizer.json = final_model/tokenizer.json (identical to the base model's "
        "tokenizer.json: not read)",
    ]
    assert report["details"]["journal"]["copies_scanned"] == 1


def test_weight_files_are_recognised_by_their_whole_layout_not_their_name(tmp_path):
    real = tmp_path / "real.safetensors"
    _safetensors(real)
    t = tensor_file(real)
    assert t is not None and t.fmt == "safetensors" and t.tensor_bytes == 64 * 32 * 4 + 7 * 8
    data = real.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    broken = {
        "json": json.dumps({"a": 1}).encode(),
        "trailer": data + b"hidden",
        "truncated": data[:-1],
        "gap": data[: 8 + n] + b"x" * 8 + data[8 + n :],
    }
    header["w"]["dtype"] = "F16"  # sizes no longer add up
    wrong = json.dumps(header).encode()
    broken["dtype"] = len(wrong).to_bytes(8, "little") + wrong + data[8 + n :]
    for name, body in broken.items():
        (tmp_path / f"{name}.safetensors").write_bytes(body)
        assert tensor_file(tmp_path / f"{name}.safetensors") is None, name
    _gguf(tmp_path / "m.gguf", {"general.name": "tiny"})
    g = tensor_file(tmp_path / "m.gguf")
    assert g is not None and g.fmt == "gguf" and g.tensor_bytes == 32 * 4 + 5 * 4
    (tmp_path / "pad.gguf").write_bytes((tmp_path / "m.gguf").read_bytes() + b"\0" * 4 + b"hidden")
    assert tensor_file(tmp_path / "pad.gguf") is None
    np.save(tmp_path / "a.npy", np.arange(10.0))
    assert tensor_file(tmp_path / "a.npy") is not None
    np.save(tmp_path / "o.npy", np.array([ITEM], dtype=object), allow_pickle=True)
    assert tensor_file(tmp_path / "o.npy") is None  # a pickle: data


def test_what_is_new_against_the_base_keeps_duplicate_keys_added_lines_and_binary_runs():
    from ptbench.integrity.contamination.model_files import new_content

    base = json.dumps({"model": {"vocab": {"$": 13, "%": 14}}, "note": "x"}).encode()
    # json.loads keeps only the last of two equal keys: the first still counts
    final = base[:-1] + f', "note": "{ITEM}", "note": "x"}}'.encode()
    text, how = new_content(final, base, binary=False)
    assert how == "JSON entries" and ITEM.encode() in text and b"13" not in text  # the base's vocabulary is not re-read
    words = {"model": {"vocab": {"$": 13, "%": 14, "josh": 15, "decides": 16, "to": 17}}}
    text, _ = new_content(json.dumps(words).encode(), base, binary=False)
    assert b"josh\ndecides\nto" in text  # added tokens read as the sentence they spell
    text, how = new_content(b"a\nb\n" + ITEM.encode() + b"\n", b"a\nb\n", binary=False)
    assert (how, text) == ("lines", ITEM.encode() + b"\n")
    text, how = new_content(b"\0\x01same run\0" + ITEM.encode(), b"\0\x01same run\0", binary=True)
    assert (how, text) == ("printable runs", ITEM.encode() + b"\n")


@pytest.mark.slow
def test_weight_named_files_in_the_workspace_are_read_by_their_content(trial_factory, tiny_model):
    """A `.safetensors` or `.bin` in the workspace that is not a weight file is data (it was skipped by
    its name); a real checkpoint's free text is read, its tensors are not, and it stays clean."""
    trial = trial_factory(base=str(tiny_model), integrity=CHECK)
    ckpt = trial.workspace / "checkpoint-100"
    shutil.copytree(tiny_model, ckpt)
    report = _run(trial)
    assert report["verdict"] == "clean", report["evidence"]
    assert report["details"]["weight_named_files"] == {
        "workspace/checkpoint-100/model.safetensors": "weights: safetensors, its free text read"
    }
    (ckpt / "model-00002-of-00002.safetensors").write_text(json.dumps({"rows": [ITEM]}))
    (trial.home / "stash.bin").write_text(ITEM)
    _safetensors(trial.workspace / "adapter.safetensors", metadata={"notes": ITEM})
    (trial.workspace / "tokens.bin").write_bytes(np.arange(5000, dtype=np.uint16).tobytes())  # binary: unread
    report = _run(trial)
    assert report["verdict"] == "flagged"
    assert {e["file"] for e in report["evidence"]} == {
        "workspace/checkpoint-100/model-00002-of-00002.safetensors",
        "home/stash.bin",
        "workspace/adapter.safetensors (safetensors: its free text)",
    }
    assert report["details"]["weight_named_files"]["workspace/tokens.bin"] == "not read (binary, not a weight file)"
