"""Contamination scan throughput: 1 GB of JSONL against the union of all seven test sets, on 2 cores.

The real test sets cannot be downloaded offline, so they are synthesized at their real sizes
(items x words per part, Zipf-distributed words): GSM8K 1319, AIME 30, GPQA 448, HumanEval 164,
BFCL 100, Arena-Hard writing 250 (with ~700-word reference answers), HealthBench Easy 245. The
JSONL holds 20 planted test items; the scan must find exactly those.

    python scripts/bench_contamination.py [--gb 1] [--keep FILE] [--tiny]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from ptbench.integrity.contamination.index import (
    TestIndex,
    contaminated_segments,
    scan_stream,
)
from ptbench.integrity.contamination.ngrams import Hasher
from ptbench.integrity.contamination.sources import streams_of

# task: (items, [(part, words)])
SIZES = {
    "gsm8k": (1319, [("question", 46), ("answer", 100)]),
    "aime2025": (30, [("question", 90), ("answer", 1)]),
    "gpqa": (448, [("question", 170), ("answer", 15)]),
    "humaneval": (164, [("question", 110), ("answer", 60), ("context", 120)]),
    "bfcl": (100, [("question", 30), ("context", 90), ("answer", 20)]),
    "arena_hard_writing": (250, [("question", 60), ("answer", 700)]),
    "healthbench_easy": (245, [("question", 160), ("answer", 250)]),
}


def vocabulary(rng: np.random.Generator, size: int = 50_000) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(rng.integers(2, 10)))) for _ in range(size)]


def words(rng, vocab, n: int) -> str:
    ids = np.minimum(rng.zipf(1.2, size=n), len(vocab)) - 1
    return " ".join(vocab[i] for i in ids)


def build_index(rng, vocab, scale: float = 1.0) -> tuple[TestIndex, list[str]]:
    index = TestIndex(n=13)
    planted = []
    for task, (n_items, parts) in SIZES.items():
        for i in range(max(4, int(n_items * scale))):
            texts = [(role, words(rng, vocab, n)) for role, n in parts]
            index.add_item(task, f"{task}-{i}", texts)
            if len(planted) < 20 and i % 97 == 3:
                planted.append(texts[0][1].upper())  # questions only, case changed
    return index.build(), planted


def write_jsonl(path: Path, gb: float, rng, vocab, planted: list[str], rows: int = 40_000) -> None:
    block_rows = []
    for _ in range(rows):
        block_rows.append(json.dumps({"instruction": words(rng, vocab, 60), "output": words(rng, vocab, 200)}))
    block = ("\n".join(block_rows) + "\n").encode()
    target = int(gb * (1 << 30))
    with open(path, "wb") as fh:
        written, k = 0, 0
        while written < target:
            fh.write(block)
            written += len(block)
            # the planted items spread over the file (at least one per block until all are in)
            for line in planted[k : k + max(1, len(planted) * len(block) // target + 1)]:
                data = (json.dumps({"instruction": line, "output": "whatever"}) + "\n").encode()
                fh.write(data)
                written += len(data)
                k += 1
        for line in planted[k:]:
            fh.write((json.dumps({"instruction": line, "output": "whatever"}) + "\n").encode())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--keep", help="write the JSONL here and keep it (default: a temporary file)")
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    scale, rows, vocab_size = (0.02, 500, 2_000) if args.tiny else (1.0, 40_000, 50_000)
    if args.tiny:
        args.gb = 0.0005
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    rng = np.random.default_rng(0)
    vocab = vocabulary(rng, vocab_size)
    t0 = time.perf_counter()
    index, planted = build_index(rng, vocab, scale)
    t_index = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "train.jsonl"
        write_jsonl(path, args.gb, rng, vocab, planted, rows)
        size = path.stat().st_size
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0, c0 = time.perf_counter(), time.process_time()
        found = set()
        hasher = Hasher()
        for stream in streams_of(path, "train.jsonl", []):
            hits = scan_stream(index, stream, hasher)
            found |= {index.items[index.segments[s].item][1] for s in contaminated_segments(index, hits)}
        t_scan, c_scan = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"test sets: {len(index.items)} items, {index.size} n-grams (n=13), index built in {t_index:.1f} s")
    print(
        f"scanned {size / 2**30:.2f} GiB of JSONL in {t_scan:.1f} s ({size / 2**20 / t_scan:.0f} MiB/s) on "
        f"{len(os.sched_getaffinity(0))} cores, {c_scan:.1f} CPU s ({size / 2**20 / c_scan:.0f} MiB per CPU s); peak "
        f"RSS {peak:.0f} MiB (before the scan {rss_before / 1024:.0f} MiB)"
    )
    print(f"planted {len(planted)} items, found {len(found)}; load average {os.getloadavg()[0]:.1f}")
    if len(found) != len(planted):
        raise SystemExit("the scan missed planted items")


if __name__ == "__main__":
    main()
