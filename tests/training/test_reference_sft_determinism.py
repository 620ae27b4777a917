"""The demo is reproducible: the tiny model is the same bytes every time it is made, and the reference
recipe trained twice with one seed gives bit-identical weights, whatever OMP_NUM_THREADS says and
while another process loads the CPU; another seed gives other weights."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.demo import make_tiny_model
from ptbench.tasks.arithmetic import Arithmetic
from tests.servers import cpu_load

pytestmark = pytest.mark.slow


def _files(model: Path) -> dict[str, bytes]:
    return {name: (model / name).read_bytes() for name in ("model.safetensors", "tokenizer.json", "config.json")}


def test_the_tiny_model_is_the_same_bytes_for_a_seed(tmp_path: Path) -> None:
    first, again, other = (make_tiny_model(tmp_path / name, seed=seed) for name, seed in (("a", 0), ("b", 0), ("c", 1)))
    assert _files(first) == _files(again)
    assert _files(first)["model.safetensors"] != _files(other)["model.safetensors"]
    assert _files(first)["tokenizer.json"] == _files(other)["tokenizer.json"]


def _train(
    model: Path, train_file: Path, outs: dict[int, Path], *, omp_threads: str, nan_fill: bool = False
) -> dict[int, bytes]:
    """Train once per seed in OUTS, one after the other in one fresh process (so a seed must also
    win over what the previous run left in the RNGs); few steps and examples so it is quick.
    `nan_fill`: turn torch's NaN fill of new tensors back on (the recipe turns it off for speed)."""
    common = [
        "--base-model",
        str(model),
        "--train-file",
        str(train_file),
        "--max-steps",
        "6",
        "--batch-size",
        "16",
        "--max-examples",
        "192",
    ]
    runs = [[*common, "--seed", str(seed), "--output", str(out)] for seed, out in outs.items()]
    refill = (
        "seeded = recipe.make_deterministic\n"
        "def make_deterministic(*args):\n"
        "    seeded(*args)\n"
        "    import torch\n"
        "    torch.utils.deterministic.fill_uninitialized_memory = True\n"
        "recipe.make_deterministic = make_deterministic\n"
    )
    code = (
        "import sys, json\nimport ptbench.training.reference_sft as recipe\n"
        + (refill if nan_fill else "")
        + "for argv in json.loads(sys.argv[1]): recipe.main(argv)"
    )
    env = {**os.environ, "OMP_NUM_THREADS": omp_threads, "MKL_NUM_THREADS": omp_threads}
    run = subprocess.run(
        [sys.executable, "-c", code, json.dumps(runs)], capture_output=True, text=True, env=env, timeout=900
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return {seed: (out / "model.safetensors").read_bytes() for seed, out in outs.items()}


def test_the_reference_recipe_gives_the_same_weights_for_a_seed(tiny_model: Path, tmp_path: Path) -> None:
    train_file = tmp_path / "train.jsonl"
    train_file.write_text("".join(json.dumps(r) + "\n" for r in Arithmetic(digits=2).train_examples(0)))
    base = (tiny_model / "model.safetensors").read_bytes()

    first = _train(tiny_model, train_file, {0: tmp_path / "s0", 1: tmp_path / "s1"}, omp_threads="2")
    with cpu_load():  # a loaded machine trains the same model, only later (steps are fixed, not timed)
        # and with torch's NaN fill of new tensors on: no kernel reads memory it did not write
        again = _train(tiny_model, train_file, {0: tmp_path / "again"}, omp_threads="1", nan_fill=True)

    assert first[0] != base, "the recipe trained nothing"
    assert again[0] == first[0], (
        "same seed, different weights: something in the recipe is not deterministic, or reads memory it never wrote"
    )
    assert first[1] != first[0], "the seed does not reach the recipe (data order)"
