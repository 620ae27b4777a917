"""Model identity on real tiny models made here: TRL fine-tunes (ptbench's reference recipe) of a
random tiny Llama, a separately trained "instruct" model, another architecture, another vocabulary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ptbench.integrity.context import CheckContext
from ptbench.integrity.model_identity import check
from ptbench.integrity.report import Unchecked

from .conftest import make_trial

pytestmark = pytest.mark.slow  # three real TRL fine-tunes

BUILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from ptbench.training.reference_sft import parse_args, train
    root, base = Path(sys.argv[1]), sys.argv[2]
    def data(name, rows):
        p = root / f"{name}.jsonl"
        p.write_text("".join(json.dumps(r) + "\\n" for r in rows))
        return str(p)
    words = "red green blue cat dog sun".split()
    chat = data("chat", [{"prompt": f"<|user|>say {w}\\n<|assistant|>", "completion": f"{w} {w}!"} for w in words] * 8)
    sums = data("sums", [{"prompt": f"{a}+{b}=", "completion": f"{a + b}"} for a in range(8) for b in range(8)])
    def sft(model, rows, out, steps, lr):
        train(parse_args(["--base-model", model, "--train-file", rows, "--output", str(root / out), "--seed", "0",
                          "--max-steps", str(steps), "--learning-rate", str(lr), "--batch-size", "8"]))
    sft(base, chat, "instruct", 10, 1e-2)          # the base's "instruct" version, trained separately
    sft(base, sums, "finetune", 3, 1e-3)           # what an honest agent submits
    sft(str(root / "instruct"), sums, "cheat", 3, 1e-3)  # the instruct model, lightly fine-tuned
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(root / "finetune"))
    model = AutoModelForCausalLM.from_pretrained(str(root / "finetune"))
    tok.add_tokens(["<tool_call>", "</tool_call>"])
    model.resize_token_embeddings(len(tok))
    model.save_pretrained(str(root / "added_tokens")); tok.save_pretrained(str(root / "added_tokens"))
""")


@pytest.fixture(scope="module")
def models(tiny_model, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("identity")
    proc = subprocess.run(
        [sys.executable, "-c", BUILD, str(root), str(tiny_model)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    from ptbench.demo import make_tiny_model

    out = {name: root / name for name in ("instruct", "finetune", "cheat", "added_tokens")}
    out["base"] = tiny_model
    out["shallow"] = make_tiny_model(root / "shallow", layers=2)
    vocab = root / "vocab"
    shutil.copytree(tiny_model, vocab)
    tj = json.loads((vocab / "tokenizer.json").read_text())
    v = tj["model"]["vocab"]
    a, b = list(v)[10], list(v)[11]
    v[a], v[b] = v[b], v[a]  # two tokens swap ids: same size, different vocabulary
    (vocab / "tokenizer.json").write_text(json.dumps(tj))
    out["vocab"] = vocab
    return out


def verdict(
    tmp_path,
    models,
    submitted: str,
    *,
    base_id="tiny/base",
    forbidden=("instruct",),
    cache_dirs=(),
    since=None,
    layer_dirs=(),
    base_path=None,
):
    root = tmp_path / f"trial-{len(list(tmp_path.glob('trial-*')))}"
    trial = make_trial(
        root,
        task="arithmetic",
        options={"n_test": 4},
        base=str(models["base"]) if base_path is None else base_path,
        integrity={"forbidden_models": [str(models[f]) for f in forbidden]},
    )
    spec = trial.spec.model_copy(update={"base_model": trial.spec.base_model.model_copy(update={"id": base_id})})
    shutil.copytree(models[submitted], trial.final_model)
    return check(
        CheckContext(
            trial_dir=trial.path, spec=spec, cache_dirs=list(cache_dirs), since=since, layer_dirs=list(layer_dirs)
        )
    )


def test_a_fine_tune_of_the_base_is_clean_with_distances(tmp_path, models):
    f = verdict(tmp_path, models, "finetune")
    assert f.verdict == "clean", f
    d = f.details
    assert 0 < d["distance_to_base"]["l2"] < d["distance_to_forbidden"][str(models["instruct"])]["l2"]
    assert d["tensors_sampled"] > 10 and d["rows_per_tensor"] == 16
    assert verdict(tmp_path, models, "added_tokens").verdict == "clean"  # added tokens are allowed


@pytest.mark.parametrize("submitted", ["instruct", "cheat"])
def test_the_instruct_model_or_a_fine_tune_of_it_is_flagged(tmp_path, models, submitted):
    f = verdict(tmp_path, models, submitted)
    assert f.verdict == "flagged", f
    e = f.evidence[0]  # then the functional fingerprint's, where it also sees the instruct model's function
    assert e["forbidden"] == str(models["instruct"]) and e["relative_l2_to_forbidden"] < e["relative_l2_to_base"]
    assert all(x["forbidden"] == str(models["instruct"]) for x in f.evidence)


def test_a_model_that_appeared_in_the_cache_layer_counts_as_forbidden(tmp_path, models):
    snap = tmp_path / "hf" / "hub" / "models--someone--tiny-instruct" / "snapshots" / "abc"
    shutil.copytree(models["instruct"], snap)
    shutil.copytree(models["shallow"], tmp_path / "hf" / "hub" / "models--someone--small" / "snapshots" / "abc")
    f = verdict(tmp_path, models, "instruct", forbidden=(), cache_dirs=[tmp_path / "hf"], since=0.0)
    assert f.verdict == "flagged" and f.evidence[0]["forbidden"] == "someone/tiny-instruct (in the cache layer)"
    f = verdict(tmp_path, models, "finetune", forbidden=(), cache_dirs=[tmp_path / "hf"], since=0.0)
    assert f.verdict == "clean", f  # a model of another architecture in the cache cannot be the submission
    assert f.details["forbidden_compared"] == ["someone/tiny-instruct (in the cache layer)"]
    assert "num_hidden_layers" in f.details["forbidden_skipped"]["someone/small (in the cache layer)"]


def test_the_agents_own_cache_layer_counts_whatever_its_mtimes_and_never_supplies_the_base(tmp_path, models):
    """hf-layer/upper (what the agent wrote through its copy-on-write cache) is the agent's, even if
    it set old mtimes; a base model only found there is no reference (the agent could put anything there)."""
    upper = tmp_path / "trial-layer" / "upper"
    snap = upper / "hub" / "models--someone--tiny-instruct" / "snapshots" / "abc"
    shutil.copytree(models["instruct"], snap)
    for p in [snap, *snap.parents[:3]]:
        os.utime(p, (1, 1))  # backdated: the mtime test alone would call it not the agent's
    f = verdict(tmp_path, models, "instruct", forbidden=(), cache_dirs=[upper], since=9e9, layer_dirs=[upper])
    assert f.verdict == "flagged" and f.evidence[0]["forbidden"] == "someone/tiny-instruct (in the cache layer)", f
    assert verdict(tmp_path, models, "instruct", forbidden=(), cache_dirs=[upper], since=9e9).verdict == "clean"
    base_snap = upper / "hub" / "models--tiny--base" / "snapshots" / "abc"
    shutil.copytree(models["instruct"], base_snap)  # "the base", as the agent would like it to be
    with pytest.raises(Unchecked, match="outside the agent's own cache layer"):
        verdict(tmp_path, models, "instruct", forbidden=(), cache_dirs=[upper], layer_dirs=[upper], base_path="")


def test_other_architecture_or_vocabulary_is_flagged(tmp_path, models):
    f = verdict(tmp_path, models, "shallow")
    assert (
        f.verdict == "flagged" and {"key": "num_hidden_layers", "final": 2, "base": 4}.items() <= f.evidence[0].items()
    )
    f = verdict(tmp_path, models, "vocab")
    assert f.verdict == "flagged" and f.evidence[0]["tokens_changed_or_missing"] == 2


def test_a_known_instruct_model_that_is_not_available_leaves_it_unchecked(tmp_path, models):
    with pytest.raises(Unchecked, match="Qwen/Qwen3-1.7B not found locally"):
        verdict(tmp_path, models, "finetune", base_id="Qwen/Qwen3-1.7B-Base", forbidden=(), cache_dirs=[tmp_path])
