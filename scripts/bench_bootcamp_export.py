"""How long the training hand-off takes: `export-verl` on the three shipped bootcamps (as a suite)
and the TRL conversion of traces. Prints its figures; no assertion on time.

    PYTHONPATH=src python scripts/bench_bootcamp_export.py [--rows 2000] [--tiny]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import yaml

from ptbench.bootcamp.data.suite import load_configs
from ptbench.bootcamp.export.sft import examples_from_trace
from ptbench.bootcamp.export.verl_export import export_verl

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--rows", type=int, default=400, help="train rows per bootcamp (mastermind small has 256 codes in all)"
    )
    ap.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = ap.parse_args()
    test, k = (5, 200) if args.tiny else (50, 20_000)
    if args.tiny:
        args.rows = 20
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        entries = []
        for name in ("arithmetic", "mastermind", "sql_explore"):
            data = yaml.safe_load((REPO / "campaigns" / "bootcamp" / f"{name}.yaml").read_text())
            data["splits"] = {"test": test, "train": args.rows}
            (work / f"{name}.yaml").write_text(yaml.safe_dump(data))
            entries.append({"config": f"{name}.yaml"})
        (work / "suite.yaml").write_text(yaml.safe_dump({"suite": "bench", "bootcamps": entries}))
        t0 = time.perf_counter()
        manifest = export_verl(load_configs(work / "suite.yaml"), work / "out")
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        export_verl(load_configs(work / "suite.yaml"), work / "out")
        warm = time.perf_counter() - t0
        n = sum(s["n"] for s in manifest["splits"].values())
        print(
            f"export-verl, 3 bootcamps, {n} rows: {cold:.2f} s cold ({n / cold:.0f} rows/s), {warm:.2f} s with "
            "generated data cached"
        )
        call = {
            "id": "c0",
            "type": "function",
            "function": {"name": "calculator", "arguments": json.dumps({"expression": "1 + 2"})},
        }
        trace = {
            "sample_id": "x",
            "data_source": "bootcamp/arithmetic",
            "score": 1.0,
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "u" * 200},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c0", "content": "3"},
                {"role": "assistant", "content": "\\boxed{3}", "reasoning_content": "r" * 200},
            ],
        }
        t0 = time.perf_counter()
        for _ in range(k):
            examples_from_trace(trace, "[]", expand_turns=True)
        dt = time.perf_counter() - t0
        print(f"trace -> TRL examples (turn expansion): {k / dt:.0f} traces/s")


if __name__ == "__main__":
    main()
