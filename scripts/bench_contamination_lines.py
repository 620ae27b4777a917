"""What question lines cost the contamination scan: CPU seconds to scan 64 MB of honest JSONL against
448 GPQA-like items (a template line, a 9-token question line, four option lines), with the items'
lines joined by spaces (no question line: one 13-gram table) and by newlines (a second, 6-token
table), and what each finds in the honest file (must be 0).

    python scripts/bench_contamination_lines.py [--mb 64] [--workers 1]
    python scripts/bench_contamination_lines.py --tiny   # the suite's smoke run: 1 MB
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from pathlib import Path

from ptbench.integrity.contamination.index import TestIndex, contaminated_segments
from ptbench.integrity.contamination.scan import scan_files

TEMPLATE = "Answer the following multiple choice question. Think step by step before answering."


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--tiny", action="store_true", help="1 MB (the suite's smoke run)")
    args = ap.parse_args()
    if args.tiny:
        args.mb = 1
    rng = random.Random(0)
    words = [f"w{i}" for i in range(5000)]

    def phrase(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    items = [(phrase(9), [phrase(3) for _ in range(4)]) for _ in range(448)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "honest.jsonl"
        with path.open("w") as fh:
            while fh.tell() < args.mb << 20:
                fh.write(json.dumps({"instruction": phrase(30), "output": phrase(40)}) + "\n")
        for sep in (" ", "\n"):
            index = TestIndex(13)
            for i, (question, options) in enumerate(items):
                text = sep.join([TEMPLATE, question, *(f"{'ABCD'[j]}) {o}" for j, o in enumerate(options))])
                index.add_item("gpqa", str(i), [("question", text)])
            index.build()
            cpu, wall = _cpu(), time.time()
            scans = scan_files(index, [("honest.jsonl", path)], workers=args.workers)
            found = sum(len(contaminated_segments(index, h)) for s in scans for top in s.hits for h in top.flat())
            mode = "on " if sep == "\n" else "off"
            print(
                f"question lines {mode}: {index.size} keys, tables {sorted(index.hashes)}, "
                f"{_cpu() - cpu:.2f} CPU s ({time.time() - wall:.2f} s wall) for {args.mb} MB, found {found}"
            )


if __name__ == "__main__":
    main()
