"""Contamination scan throughput: 1 GB of JSONL against the union of all seven test sets, on 2 cores.

The scan is the check's own (ptbench.integrity.contamination.scan.scan_files): two worker
processes over ranges of the file, the decoding pass (base64/hex blobs, escapes) included.
Target: >= 250 MB/s (1 GB in < 4 s), peak memory < 1 GB (the main process plus its workers).

The real test sets cannot be downloaded offline, so they are synthesized at their real sizes
(items x words per part, Zipf-distributed words): GSM8K 1319, AIME 30, GPQA 448, HumanEval 164,
BFCL 100, Arena-Hard writing 250 (with ~700-word reference answers), HealthBench Easy 245. The
JSONL holds 20 planted test items; the scan must find exactly those.

    python scripts/bench_contamination.py [--size 1G] [--workers 2] [--unicode] [--keep FILE] [--tiny]

`--final-model SIZE` measures instead what reading final_model/ adds to the check (the same index):
the tiny model as a fine-tune saves it (generation settings, two added tokens, a chat template), then
the same with SIZE of real safetensors shards beside it (sparse files, valid headers), e.g. 1G. It
prints the seconds and the bytes the process read (/proc/self/io rchar): tensor bytes are not read.

    python scripts/bench_contamination.py --final-model 1G [--repeat 5]
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

from ptbench.integrity.contamination import ngrams
from ptbench.integrity.contamination.index import TestIndex, contaminated_segments
from ptbench.integrity.contamination.scan import scan_files

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


def write_jsonl(
    path: Path, gb: float, rng, vocab, planted: list[str], unicode: bool = False, rows: int = 40_000
) -> None:
    block_rows = []
    for i in range(rows):
        out = words(rng, vocab, 200)
        if unicode and i % 2:  # UTF-8 as written with ensure_ascii=False: accents, dashes, quotes, CJK
            out = f"“{out[:40]}” — café naïve 日本語 {out[40:]}"
        block_rows.append(json.dumps({"instruction": words(rng, vocab, 60), "output": out}, ensure_ascii=not unicode))
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


def _rchar() -> int:
    try:
        return int(next(x for x in Path("/proc/self/io").read_text().splitlines() if x.startswith("rchar")).split()[1])
    except (OSError, StopIteration):
        return -1


def _fine_tune_of(base: Path, final: Path) -> None:
    """final/: the tiny model as a fine-tune saves it (not byte-equal to the base where it changed)."""
    import shutil

    from transformers import AutoTokenizer, GenerationConfig

    shutil.copytree(base, final)
    tok = AutoTokenizer.from_pretrained(final)
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tok.chat_template = "{% for m in messages %}<|im_start|>{{ m['content'] }}<|im_end|>{% endfor %}"
    tok.save_pretrained(final)
    gen = GenerationConfig.from_pretrained(final)
    gen.do_sample, gen.temperature = True, 0.7
    gen.save_pretrained(final)


def _shards(final: Path, size: int, n: int = 4) -> int:
    """n real safetensors shards of F32 tensors, size bytes of tensors in all, written sparse (the header
    is real; the tensor bytes are zeros the disk does not hold), and their index."""
    rows = max(1, size // n // (4096 * 4))
    index: dict[str, str] = {}
    total = 0
    for i in range(n):
        name = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
        nbytes = rows * 4096 * 4
        header = json.dumps({f"layer{i}.w": {"dtype": "F32", "shape": [rows, 4096], "data_offsets": [0, nbytes]}})
        raw = header.encode() + b" " * (-len(header) % 8)
        with open(final / name, "wb") as fh:
            fh.write(len(raw).to_bytes(8, "little") + raw)
            fh.truncate(8 + len(raw) + nbytes)
        index[f"layer{i}.w"] = name
        total += nbytes
    (final / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": index})
    )
    return total


def bench_final_model(size: int, repeat: int) -> None:
    from ptbench.demo import make_tiny_model
    from ptbench.integrity.contamination.model_files import final_model_targets

    rng = np.random.default_rng(0)
    vocab = vocabulary(rng)
    index, _ = build_index(rng, vocab)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = make_tiny_model(root / "base")
        cases = {"tiny model fine-tune": root / "tiny"}
        _fine_tune_of(base, cases["tiny model fine-tune"])
        large = root / "large"
        _fine_tune_of(base, large)
        weights = _shards(large, size)
        cases[f"the same + {weights / 1e9:.2f} GB of safetensors shards"] = large
        for name, final in cases.items():
            times, reads = [], []
            for r in range(repeat):
                work = root / f"work{r}-{final.name}"
                work.mkdir()
                t0, rc0 = time.perf_counter(), _rchar()
                fm = final_model_targets(final, base, work)
                found = 0
                for scan in scan_files(index, fm.targets, workers=2):
                    assert scan.error is None, scan.error
                    found += sum(len(contaminated_segments(index, h)) for top in scan.hits for h in top.flat())
                times.append(time.perf_counter() - t0)
                reads.append(_rchar() - rc0)
                assert found == 0, f"{name}: an honest final_model matched the test sets"
            on_disk = sum(p.stat().st_size for p in final.rglob("*") if p.is_file())
            scanned = sum(p.stat().st_size for _, p in fm.targets)
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(fm.details(0, 0)["by_kind"].items()))
            print(
                f"final_model {name}: {len(fm.how)} files, {on_disk / 1e6:.1f} MB on disk ({kinds}); "
                f"added {float(np.median(times)):.3f} s (median of {repeat}, min {min(times):.3f}), "
                f"read {int(np.median(reads)) / 1e6:.2f} MB, scanned {scanned / 1e6:.2f} MB as text"
            )
    print(f"load average {os.getloadavg()[0]:.1f}")


def parse_size(text: str) -> int:
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1] if t and t[-1] in units else ""
    try:
        return int(float(t[: len(t) - len(unit)]) * units[unit])
    except ValueError:
        raise SystemExit(f"--size {text!r}: give a size like 1G, 256M or 100000000") from None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G", help="size of the JSONL (1G, 256M, ...)")
    ap.add_argument("--gb", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--unicode", action="store_true", help="every other row holds non-ASCII text (UTF-8)")
    ap.add_argument("--keep", help="write the JSONL here and keep it (default: a temporary file)")
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    ap.add_argument("--final-model", metavar="SIZE", help="measure reading final_model/ with SIZE of weights instead")
    ap.add_argument("--repeat", type=int, default=5, help="runs per --final-model case")
    args = ap.parse_args()
    if args.final_model:
        bench_final_model(parse_size(args.final_model), args.repeat)
        return
    size_wanted = int(args.gb * (1 << 30)) if args.gb else parse_size(args.size)
    scale, rows, vocab_size = (0.02, 500, 2_000) if args.tiny else (1.0, 40_000, 50_000)
    if args.tiny:
        size_wanted = 512 << 10
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    rng = np.random.default_rng(0)
    vocab = vocabulary(rng, vocab_size)
    t0 = time.perf_counter()
    index, planted = build_index(rng, vocab, scale)
    t_index = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "train.jsonl"
        write_jsonl(path, size_wanted / (1 << 30), rng, vocab, planted, args.unicode, rows)
        size = path.stat().st_size
        with open(path, "rb") as fh:  # in the page cache, as a file just written by the agent is
            while fh.read(64 << 20):
                pass
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0, c0 = time.perf_counter(), time.process_time()
        ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        found = set()
        for scan in scan_files(index, [("train.jsonl", path)], workers=args.workers):
            for top in scan.hits:
                for h in top.flat():
                    found |= {index.items[index.segments[s].item][1] for s in contaminated_segments(index, h)}
        t_scan = time.perf_counter() - t0
        ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c_scan = time.process_time() - c0 + (ch1.ru_utime + ch1.ru_stime) - (ch0.ru_utime + ch0.ru_stime)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    mb = size / 1e6
    print(f"test sets: {len(index.items)} items, {index.size} n-grams (n=13), index built in {t_index:.1f} s")
    passes = "the compiled kernel" if ngrams.kernel is not None else "numpy (no kernel built)"
    print(f"token and window passes: {passes}")
    print(
        f"scanned {mb:.0f} MB of JSONL in {t_scan:.2f} s: {mb / t_scan:.0f} MB/s on {args.workers} worker(s) "
        f"({len(os.sched_getaffinity(0))} cores), {c_scan:.1f} CPU s ({mb / c_scan:.0f} MB per CPU s; "
        f"target >= 250 MB/s on 2 cores)"
    )
    print(
        f"peak RSS: main process {peak:.0f} MiB (before the scan {rss_before / 1024:.0f} MiB), largest worker "
        f"{child_peak:.0f} MiB; all together at most {peak + args.workers * child_peak:.0f} MiB (target < 1 GB)"
    )
    print(f"planted {len(planted)} items, found {len(found)}; load average {os.getloadavg()[0]:.1f}")
    if len(found) != len(planted):
        raise SystemExit("the scan missed planted items")


if __name__ == "__main__":
    main()
