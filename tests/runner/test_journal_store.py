"""The run journal keeps a file that only looks like weights: a safetensors header in front of
test items is copied (and so scanned), a real weight file of 1 MiB or more is recorded, not copied."""

from __future__ import annotations

import json
import struct

from ptbench.integrity.journal import RECORDS
from ptbench.runner.journal_store import WEIGHT_MIN, JournalStore


def _safetensors(n_floats: int, tail: bytes = b"") -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [n_floats], "data_offsets": [0, 4 * n_floats]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * (4 * n_floats) + tail


def test_real_weights_are_recorded_and_a_disguise_is_kept(tmp_path):
    store = JournalStore(tmp_path / "journal", max_bytes=64 << 20)
    real = tmp_path / "model.safetensors"
    real.write_bytes(_safetensors(WEIGHT_MIN // 4 + 16))
    fake = tmp_path / "cache.safetensors"  # a valid-looking header, then the test items
    fake.write_bytes(_safetensors(16, tail=b"Question: what is 13+54?\nAnswer: 67\n" * (WEIGHT_MIN // 30)))
    store.copy(real, "workspace/model.safetensors", 1)
    store.copy(fake, "workspace/cache.safetensors", 2)
    store.close()
    records = {r["label"]: r for r in map(json.loads, (tmp_path / "journal" / RECORDS).read_text().splitlines())}
    assert records["workspace/model.safetensors"]["kind"] == "skipped"
    assert records["workspace/model.safetensors"]["why"] == "weights"
    assert records["workspace/cache.safetensors"]["kind"] == "kept"
    assert store.files_kept == 1 and store.skipped == 1
