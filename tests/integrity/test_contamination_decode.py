"""Contamination through encodings: test items hidden the way an agent that reads the scanner's
source would hide them (base64, hex, gzip then base64, archives nested in archives and in text,
JSON \\u escapes, URL encoding), each in a real file of a real trial directory; zip bombs and
nesting past the bounds end `unchecked`, never `clean`; ordinary text with hashes and ids stays clean."""

from __future__ import annotations

import base64
import bz2
import gzip
import io
import json
import lzma
import tarfile
import urllib.parse
import zipfile
import zlib

import pytest

from ptbench.integrity.contamination.check import check
from ptbench.integrity.contamination.decode import MAX_DEPTH, MAX_PIECE
from ptbench.integrity.context import CheckContext
from ptbench.integrity.report import Unchecked

from .conftest import FIXTURES

GSM = [json.loads(line) for line in (FIXTURES / "gsm8k" / "test.jsonl").read_text().splitlines()]
ITEMS = "".join(json.dumps({"prompt": r["question"], "completion": r["answer"]}) + "\n" for r in GSM).encode()


def run(trial):
    return check(CheckContext(trial_dir=trial.path, spec=trial.spec))


def filler(n: int = 300) -> list[str]:
    return [json.dumps({"instruction": f"honest row {i}", "output": "nothing to see"}) for i in range(n)]


def jsonl_with(field_value: str) -> str:
    rows = filler()
    rows.insert(123, json.dumps({"id": "x", "blob": field_value}))
    return "\n".join(rows) + "\n"


def tar_bytes(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_bytes(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, data)
    return buf.getvalue()


HIDDEN = {
    "base64": lambda d: base64.b64encode(d).decode(),
    "urlsafe base64": lambda d: base64.urlsafe_b64encode(d).decode().rstrip("="),
    "hex": lambda d: d.hex(),
    "gzip then base64": lambda d: base64.b64encode(gzip.compress(d)).decode(),
    "zlib then hex": lambda d: zlib.compress(d).hex(),
    "bz2 then base64": lambda d: base64.b64encode(bz2.compress(d)).decode(),
    "xz then base64": lambda d: base64.b64encode(lzma.compress(d)).decode(),
    "tar in zip, base64": lambda d: base64.b64encode(zip_bytes("a.tar", tar_bytes("items.jsonl", d))).decode(),
    "base64 of base64 of gzip": lambda d: base64.b64encode(base64.b64encode(gzip.compress(d))).decode(),
}


@pytest.mark.parametrize("how", list(HIDDEN))
def test_items_hidden_in_an_encoded_blob_inside_a_jsonl_are_flagged(trial_factory, how):
    trial = trial_factory(task="gsm8k")
    (trial.workspace / "mix.jsonl").write_text(jsonl_with(HIDDEN[how](ITEMS)))
    f = run(trial)
    assert f.verdict == "flagged", (how, f.reason)
    assert {e["item_id"] for e in f.evidence} == {f"gsm8k-{i}" for i in range(len(GSM))}
    assert all(e["file"].startswith("workspace/mix.jsonl@") for e in f.evidence)
    first = f.evidence[0]["file"]
    assert "byte " in first and how.split()[-1].replace("urlsafe", "base64") in first, first


def test_items_in_wrapped_base64_and_in_escaped_or_url_encoded_text_are_flagged(trial_factory):
    trial = trial_factory(task="gsm8k")
    (trial.workspace / "notes.txt").write_text("attachment:\n" + base64.encodebytes(ITEMS).decode() + "end\n")
    escaped = "".join(f"\\u{ord(c):04x}" for c in GSM[0]["question"])  # every character a JSON escape
    (trial.workspace / "esc.jsonl").write_text(jsonl_with("").replace('"blob": ""', f'"blob": "{escaped}"'))
    (trial.workspace / "url.txt").write_text("q=" + urllib.parse.quote(GSM[1]["question"], safe="") + "\n")
    f = run(trial)
    files = {(e["file"].split("@")[0], e["item_id"]) for e in f.evidence}
    assert ("workspace/notes.txt", "gsm8k-2") in files
    assert ("workspace/esc.jsonl", "gsm8k-0") in files
    assert ("workspace/url.txt", "gsm8k-1") in files


def test_archives_on_disk_are_opened_whatever_their_name_and_nesting(trial_factory):
    trial = trial_factory(task="gsm8k")
    # a tar inside a zip, the zip named like model weights; a gzip named like a text file
    (trial.workspace / "pytorch_model.bin").write_bytes(zip_bytes("inner.tar", tar_bytes("d/items.jsonl", ITEMS)))
    (trial.workspace / "notes.txt").write_bytes(gzip.compress(ITEMS))
    f = run(trial)
    files = {e["file"] for e in f.evidence}
    assert "workspace/pytorch_model.bin!inner.tar!d/items.jsonl" in files, files
    assert "workspace/notes.txt" in files, files


def test_a_zip_bomb_or_nesting_past_the_bound_is_unchecked_not_clean(trial_factory):
    trial = trial_factory(task="gsm8k")
    bomb = gzip.compress(b" " * (MAX_PIECE + (1 << 20)))  # about 70 KB that would expand past the bound
    (trial.workspace / "bomb.jsonl").write_text(jsonl_with(base64.b64encode(bomb).decode()))
    with pytest.raises(Unchecked, match="zip bomb"):
        run(trial)
    (trial.workspace / "bomb.jsonl").unlink()
    deep = b"innocent looking text, nothing more here at all"
    for _ in range(MAX_DEPTH + 2):
        deep = gzip.compress(deep)
    (trial.workspace / "deep.jsonl").write_text(jsonl_with(base64.b64encode(deep).decode()))
    with pytest.raises(Unchecked, match="nested deeper"):
        run(trial)


def test_ordinary_text_with_hashes_ids_and_binary_blobs_stays_clean(trial_factory):
    trial = trial_factory(task="gsm8k")
    rows = filler()
    rows += [
        json.dumps({"sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}),
        json.dumps({"img": "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 4).decode()}),
        json.dumps({"id": "AutoModelForCausalLMWithValueHead", "url": "https://example.org/a%20b/c?x=1"}),
        json.dumps({"text": base64.b64encode(b"a perfectly ordinary sentence about training").decode()}),
    ]
    (trial.workspace / "honest.jsonl").write_text("\n".join(rows) + "\n")
    f = run(trial)
    assert f.verdict == "clean", f.evidence


def test_mostly_ascii_text_normalises_like_the_general_path():
    """The word-by-word path for text with a few non-ASCII characters gives the tokens of the
    general path (NFKC over the whole text), over random mixes of scripts, marks and punctuation."""
    import random

    from ptbench.integrity.contamination.ngrams import normalize_bytes, normalize_text

    rng = random.Random(7)
    alphabet = list("abcXYZ019 .,;-_'\"\n\t") + list("éÉßİıﬁ①—’“”\u00a0\u0301\u200b日本Ωσ🙂\ufffd")
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
        norm, _ = normalize_bytes(text.encode())
        assert norm.split() == normalize_text(text).split(), repr(text)


def test_a_large_file_scanned_in_ranges_on_worker_processes_finds_items_across_every_cut(trial_factory, monkeypatch):
    """The parallel path (ranges of a large file on forked workers) with ranges made small, so that
    planted items (plain, and base64) straddle the cuts: the same evidence as one pass."""
    from ptbench.integrity.contamination import scan

    trial = trial_factory(task="gsm8k")
    data = bytearray()
    for k in range(1, 7):  # an item (plain, then base64) across each cut of 64 KiB
        i = k % len(GSM)
        value = GSM[i]["question"] if k % 2 else HIDDEN["base64"](GSM[i]["question"].encode())
        start = k * 65_536 - len(value) // 2
        while len(data) < start - 200:
            data += (json.dumps({"instruction": f"honest row {len(data)}", "output": "nothing to see"}) + "\n").encode()
        data += (json.dumps({"pad": "p" * max(0, start - len(data) - 30)}) + "\n").encode()
        data += (json.dumps({"instruction": value, "output": "x"}) + "\n").encode()
    data += b'{"end": 1}\n' * 5000
    (trial.workspace / "big.jsonl").write_bytes(bytes(data))
    one_pass = run(trial)
    monkeypatch.setattr(scan, "RANGE", 65_536)
    monkeypatch.setattr(scan, "OVERLAP", 4096)
    monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
    ranged = run(trial)
    assert one_pass.verdict == ranged.verdict == "flagged"
    key = lambda f: sorted((e["file"].split("@")[0], e["item_id"], e["part"]) for e in f.evidence)  # noqa: E731
    assert key(ranged) == key(one_pass), (key(ranged), key(one_pass))
    assert {e["item_id"] for e in ranged.evidence} == {f"gsm8k-{i}" for i in range(len(GSM))}


def test_a_wrapped_base64_gzip_larger_than_a_chunk_is_read_whole(trial_factory):
    """`gzip | base64` (lines of 76) of more than a chunk: no chunk may end between its lines."""
    import random

    trial = trial_factory(task="gsm8k")
    rng = random.Random(3)
    noise = "".join(json.dumps({"t": "".join(rng.choices("abcdefghij ", k=200))}) + "\n" for _ in range(12_000))
    blob = base64.encodebytes(gzip.compress(noise.encode() + ITEMS, compresslevel=1)).decode()
    assert len(blob) > 1 << 20 and blob.count("\n") > 1000
    (trial.workspace / "notes.txt").write_text("see below\n" + blob + "end\n")
    f = run(trial)
    assert {e["item_id"] for e in f.evidence} == {f"gsm8k-{i}" for i in range(len(GSM))}, f.reason


def test_items_written_as_utf16_are_flagged(trial_factory):
    """UTF-16 (with and without a BOM) has a zero in every other byte of Latin text: not skipped as binary."""
    trial = trial_factory(task="gsm8k")
    (trial.workspace / "a.txt").write_bytes(ITEMS.decode().encode("utf-16"))
    (trial.workspace / "b.jsonl").write_text(jsonl_with(HIDDEN["base64"](ITEMS.decode().encode("utf-16-le"))))
    f = run(trial)
    files = {e["file"].split("@")[0] for e in f.evidence}
    assert files == {"workspace/a.txt (utf-16)", "workspace/b.jsonl"}, files
    assert {e["item_id"] for e in f.evidence} == {f"gsm8k-{i}" for i in range(len(GSM))}
