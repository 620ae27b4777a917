"""Model identity against disguised forbidden models, on real tiny models made here
(tests/integrity/identity_models.py): the forbidden "instruct" model is a real TRL SFT of a tiny
GQA Llama; cheats merge it with the base or reparametrize it (permuted hidden, MLP and head units,
rescaled SwiGLU pairs, plus noise); honest controls are a long TRL SFT on other instruction data,
a low-rank update merged back, and added tokens."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptbench.integrity.context import CheckContext
from ptbench.integrity.model_identity import check
from ptbench.integrity.report import Unchecked

from .conftest import make_trial
from .identity_models import CHEATS, HONEST

pytestmark = pytest.mark.slow  # three real fine-tunes (two TRL, one low-rank)


@pytest.fixture(scope="module")
def models(tiny_model, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("disguises")
    proc = subprocess.run(
        [sys.executable, "-m", "tests.integrity.identity_models", str(root), str(tiny_model)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {p.name: p for p in root.iterdir() if (p / "config.json").exists()}


def verdict(tmp_path: Path, models: dict[str, Path], submitted: str, *, forbidden: tuple[str, ...] = ("instruct",)):
    root = tmp_path / f"trial-{len(list(tmp_path.glob('trial-*')))}"
    trial = make_trial(
        root,
        task="arithmetic",
        options={"n_test": 4},
        base=str(models["base"]),
        integrity={"forbidden_models": [str(models[f]) for f in forbidden]},
    )
    shutil.copytree(models[submitted], trial.final_model)
    return check(CheckContext(trial_dir=trial.path, spec=trial.spec))


def test_the_disguises_compute_the_instruct_models_function(models):
    """The permutations and rescalings are function-preserving (so only identity can tell)."""
    import torch
    from transformers import AutoModelForCausalLM

    ids = torch.tensor([[1, 20, 31, 42, 17, 9, 60, 33]])
    ref = AutoModelForCausalLM.from_pretrained(str(models["instruct"])).eval()
    with torch.no_grad():
        want = ref(ids).logits
        for name in ("permuted", "rescaled"):
            got = AutoModelForCausalLM.from_pretrained(str(models[name])).eval()(ids).logits
            assert float((got - want).abs().max()) < 1e-4, name
        # ... and none of their weights lines up with the instruct model's rows
        a = ref.model.layers[0].mlp.gate_proj.weight
        b = AutoModelForCausalLM.from_pretrained(str(models["permuted"])).model.layers[0].mlp.gate_proj.weight
        assert float((a - b).norm() / a.norm()) > 0.5


@pytest.mark.parametrize("submitted", CHEATS)
def test_merges_and_reparametrized_copies_are_flagged(tmp_path, models, submitted):
    f = verdict(tmp_path, models, submitted)
    if submitted == "merge_0.1":  # a tenth of the instruct model's change: below the stated threshold (0.2)
        assert f.verdict == "clean", f
        assert 0.05 < f.details["projection"][str(models["instruct"])]["matrices_alpha"] < 0.2
        return
    assert f.verdict == "flagged", f
    e = f.evidence[0]
    assert e["forbidden"] == str(models["instruct"])
    proj = f.details["projection"][str(models["instruct"])]
    if submitted == "merge_0.45_sft":  # trained on after the merge: the instruct model's share stays
        assert proj["matrices_alpha"] > 0.4 and proj["matrices_cosine"] > 0.4, proj
    elif submitted.startswith("merge_"):
        a = float(submitted.split("_")[1])
        # the mixing weight, read back through any permutation
        assert abs(proj["matrices_alpha"] - a) < 0.05 and proj["matrices_cosine"] > 0.95, proj
    else:
        assert proj["matrices_alpha"] > 0.9 and proj["matrices_cosine"] > 0.95, proj
    if submitted in ("permuted", "rescaled", "disguised", "merge_0.45_permuted"):
        moved = f.details["alignment"]
        if submitted != "rescaled":
            assert moved["mlp_units"] != f"0/{moved['mlp_units'].split('/')[1]}"
        else:
            assert moved["mlp_units_rescaled"].split("/")[0] != "0"
    if submitted in ("permuted", "rescaled"):
        fn = f.details["functional"][str(models["instruct"])]
        assert fn["distance_to_forbidden"] < 1e-3 and fn["distance_to_base"] > 0.5


@pytest.mark.parametrize("submitted", HONEST)
def test_honest_fine_tunes_of_the_base_stay_clean(tmp_path, models, submitted):
    f = verdict(tmp_path, models, submitted)
    assert f.verdict == "clean", f
    moved = f.details["alignment"]
    assert [moved[k].split("/")[0] for k in ("hidden_units", "mlp_units", "query_heads", "kv_heads")] == ["0"] * 4
    proj = f.details["projection"][str(models["instruct"])]
    assert proj["matrices_alpha"] < 0.2 and proj["matrices_cosine"] < 0.4
    assert f.details["functional"][str(models["instruct"])]["distance_to_forbidden"] > 0.2


def test_a_forbidden_model_that_does_not_load_leaves_it_unchecked(tmp_path, models):
    """The functional comparison cannot be made: unchecked, never clean."""
    broken = tmp_path / "broken"
    shutil.copytree(models["instruct"], broken)
    for p in broken.glob("*.safetensors"):
        p.write_bytes(p.read_bytes()[:-4096])  # truncated weights
    models = {**models, "broken": broken}
    with pytest.raises(Unchecked):
        verdict(tmp_path, models, "sft_long", forbidden=("broken",))
