"""Paired comparisons (`collate --compare`), cell CIs (`--ci`) and `--seeds-needed`: statistics
against hand-computed cases and a simulation, and the command end to end on synthetic records."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from ptbench.results.collate import collate_dirs
from ptbench.results.paired import Cell, Unit, mean_ci, paired_difference, seeds_needed, sign_flip_p, t975
from tests.results import synthetic

CLEAN = {"contamination": "clean", "model_identity": "clean"}


def _records(cells: dict[tuple[str, str, int], float], base: str = "A") -> list[dict]:
    return [synthetic.record(agent, base, task, seed, v, integrity=CLEAN) for (agent, task, seed), v in cells.items()]


# a: gsm8k .50 .60 .70, aime .20 .20 .30; b: gsm8k .40 .55 .60, aime .10 .20 .20 (seeds 0, 1, 2)
HAND = {
    ("a", "gsm8k", 0): 0.50, ("a", "gsm8k", 1): 0.60, ("a", "gsm8k", 2): 0.70,
    ("b", "gsm8k", 0): 0.40, ("b", "gsm8k", 1): 0.55, ("b", "gsm8k", 2): 0.60,
    ("a", "aime2025", 0): 0.20, ("a", "aime2025", 1): 0.20, ("a", "aime2025", 2): 0.30,
    ("b", "aime2025", 0): 0.10, ("b", "aime2025", 1): 0.20, ("b", "aime2025", 2): 0.20,
}  # fmt: skip


def _by(comparisons, bench):
    return next(c for c in comparisons if c.benchmark == bench)


def test_sign_flip_p_and_t_interval_by_hand():
    # diffs 1, 2, 3, 4: of the 16 sign patterns only all-plus and all-minus reach |mean| 2.5
    assert sign_flip_p([1, 2, 3, 4]) == pytest.approx(2 / 16)
    assert sign_flip_p([1, -1]) == pytest.approx(1.0)
    low, high = mean_ci([0.1, 0.2, 0.3])
    half = 4.303 * 0.1 / math.sqrt(3)
    assert (low, high) == (pytest.approx(0.2 - half), pytest.approx(0.2 + half))
    assert mean_ci([0.5]) is None
    assert t975(1) == 12.706 and t975(1000) == pytest.approx(1.962, abs=1e-3)
    # width 2·t(n−1)·s/√n <= W: s = 10, W = 10 → n = 18 (t(17) = 2.110: 2·2.110·10/√18 = 9.95)
    assert seeds_needed(10.0, 10.0) == 18
    assert seeds_needed(math.nan, 5.0) is None


def test_paired_difference_by_hand(tmp_path):
    synthetic.write(tmp_path, _records(HAND), [])
    c = collate_dirs([tmp_path / "c1"], compare=["a:b"], weights="equal").collation
    gsm, aime, weighted = _by(c.comparisons, "gsm8k"), _by(c.comparisons, "aime2025"), _by(c.comparisons, "weighted")
    assert gsm.diff == pytest.approx((10 + 5 + 10) / 3) and gsm.n_pairs == 3
    assert aime.diff == pytest.approx((10 + 0 + 10) / 3)
    assert weighted.diff == pytest.approx((10 + 2.5 + 10) / 3)  # equal weights: per seed (gsm + aime) / 2
    # every seed's difference is >= 0: of 8 sign patterns, all-plus and all-minus are as extreme
    assert gsm.p_value == pytest.approx(2 / 8)
    assert 5 - 1e-9 <= gsm.ci_low <= gsm.diff <= gsm.ci_high <= 10 + 1e-9  # a bootstrap mean of values in [5, 10]
    assert not gsm.items_resampled and not gsm.unpaired


def test_planted_difference_is_found_and_a_null_one_is_not():
    """A simulation: 16 seeds, per-seed difference ~ N(3, 3) points (planted +3) or N(0, 3) (null)."""
    rng = np.random.default_rng(7)

    def run(mu: float, seed: int) -> bool:
        units = [Unit(((1.0, Cell(float(d))),)) for d in rng.normal(mu, 3.0, size=16)]
        r = paired_difference(units, reps=2000, seed=seed)
        return r.p_value < 0.05 and not (r.ci_low <= 0 <= r.ci_high)

    planted = sum(run(3.0, i) for i in range(100))
    null = sum(run(0.0, i) for i in range(200))
    assert planted >= 90  # power for d/sd = 1 at n = 16 is ~0.98
    assert null <= 20  # nominal 5 % (binomial 200 × 0.05: 10 ± 3)


def test_unpaired_cells_are_named_and_left_out(tmp_path):
    cells = dict(HAND)
    del cells[("b", "gsm8k", 2)]  # b never ran seed 2 on gsm8k
    cells[("a", "gsm8k", 3)] = 0.9  # a has an extra seed
    synthetic.write(tmp_path, _records(cells), [])
    c = collate_dirs([tmp_path / "c1"], compare=["a:b"], weights="equal").collation
    gsm, weighted = _by(c.comparisons, "gsm8k"), _by(c.comparisons, "weighted")
    assert gsm.n_pairs == 2 and gsm.diff == pytest.approx(7.5)
    assert gsm.unpaired == ["A/gsm8k/seed 2: only a", "A/gsm8k/seed 3: only a"]
    assert weighted.n_pairs == 2  # seed 2 is paired on aime only: not in the weighted average
    assert any("seed 2" in u for u in weighted.unpaired)


def test_one_seed_has_no_interval_and_says_so(tmp_path):
    synthetic.write(tmp_path, _records({k: v for k, v in HAND.items() if k[2] == 0}), [])
    result = collate_dirs([tmp_path / "c1"], compare=["a:b"], weights="equal", ci=True, seeds_width=5)
    gsm = _by(result.collation.comparisons, "gsm8k")
    assert gsm.n_pairs == 1 and gsm.ci_low is None and gsm.p_value is None
    from ptbench.results.tables import to_markdown

    md = to_markdown(result.collation)
    assert "no CI: one seed" in md and "[no CI: n=1]" in md and "spread is not known" in md


def test_item_scores_are_resampled_within_cells(tmp_path):
    cdir = synthetic.write(tmp_path, _records(HAND), [])
    rng = np.random.default_rng(1)
    for d in cdir.iterdir():
        if d.is_dir():
            (d / "eval").mkdir()
            scores = rng.integers(0, 2, size=40)
            rows = [json.dumps({"id": f"q{i}", "score": int(s)}) for i, s in enumerate(scores)]
            (d / "eval" / "samples.jsonl").write_text("\n".join(rows) + "\n")
    c = collate_dirs([cdir], compare=["a:b"], weights="equal").collation
    gsm = _by(c.comparisons, "gsm8k")
    assert gsm.items_resampled
    # the item noise (40 coin flips per trial) widens the interval past the seeds' own range [5, 10]
    assert gsm.ci_low < 5 and gsm.ci_high > 10


def _ptbench(*args):
    return subprocess.run([sys.executable, "-m", "ptbench", *args], capture_output=True, text=True, timeout=120)


def test_collate_compare_end_to_end(tmp_path):
    cdir = synthetic.write(tmp_path, _records(HAND), [])
    out = tmp_path / "tables"
    p = _ptbench("collate", str(cdir), "--out", str(out), "--no-plots", "--compare", "a:b", "--ci",
                 "--seeds-needed", "5", "--weights", "equal")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "Paired comparisons (points)" in p.stdout and "a − b" in p.stdout and "Seeds for a 95 % CI" in p.stdout
    assert "too narrow with 3 seeds" in p.stdout  # a bootstrap over 3 seeds is marked, never shown as if sound
    data = json.loads((out / "results.json").read_text())
    assert {c["benchmark"] for c in data["comparisons"]} == {"gsm8k", "aime2025", "weighted"}
    for cmp in data["comparisons"]:
        assert {"a", "b", "benchmark", "diff", "ci_low", "ci_high", "p_value", "n_pairs"} <= cmp.keys()
    assert all("ci_low" in row for row in data["aggregate"]) and data["seeds_needed"]["width"] == 5
    assert (out / "comparisons.csv").read_text().startswith("a,b,benchmark,diff,ci_low")
    assert "Paired differences between agents" in (out / "results.tex").read_text()


def test_unknown_agent_in_compare_is_one_line_exit_2(tmp_path):
    cdir = synthetic.write(tmp_path, _records(HAND), [])
    p = _ptbench("collate", str(cdir), "--no-plots", "--compare", "a:nobody")
    assert p.returncode == 2
    assert "'nobody' is not an agent of these results (agents: a, b)" in p.stderr
    assert not (cdir / "tables").exists()  # refused before anything was written
    p = _ptbench("collate", str(cdir), "--no-plots", "--compare", "ab")
    assert p.returncode == 2 and "write two agent labels as A:B" in p.stderr
