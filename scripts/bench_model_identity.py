"""Model identity: each cheat and honest case's statistics and margins; then its time on a large checkpoint.

`cases` (default): builds the tiny models of tests/integrity/identity_models.py (a real TRL SFT
"instruct" model; merges with it at several weights; permuted, rescaled and noisy copies of it;
honest fine-tunes: long SFT, a merged low-rank update, added tokens), runs the real check on each
and prints its verdict, the statistics it decides on (weight-space alpha and cosine after undoing
permutations and rescalings; function-space distance to the forbidden model and alpha), the check's
time, and the margin between the honest and the cheating cases on each statistic.

`large`: synthesizes three Qwen3-shaped checkpoints in bf16 (four shards and an index, as the hub
writes them; --hidden/--layers set the size, default Qwen3-1.7B's ~4 GB): a "base", a
"final_model" derived from it and a forbidden "instruct" model further from it. Runs the real check
(config, vocabulary, alignment, sampled-slice distances and projection, functional fingerprint)
and prints its time and peak memory.

    python scripts/bench_model_identity.py [cases|large] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

HIDDEN, INTER, LAYERS, VOCAB, KV, HEAD_DIM = 2048, 6144, 28, 151936, 1024, 128


def tensor_shapes() -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (VOCAB, HIDDEN),
        "lm_head.weight": (VOCAB, HIDDEN),
        "model.norm.weight": (HIDDEN,),
    }
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        shapes.update(
            {
                p + "self_attn.q_proj.weight": (HIDDEN, HIDDEN),
                p + "self_attn.k_proj.weight": (KV, HIDDEN),
                p + "self_attn.v_proj.weight": (KV, HIDDEN),
                p + "self_attn.o_proj.weight": (HIDDEN, HIDDEN),
                p + "mlp.gate_proj.weight": (INTER, HIDDEN),
                p + "mlp.up_proj.weight": (INTER, HIDDEN),
                p + "mlp.down_proj.weight": (HIDDEN, INTER),
                p + "self_attn.q_norm.weight": (HEAD_DIM,),
                p + "self_attn.k_norm.weight": (HEAD_DIM,),
                p + "input_layernorm.weight": (HIDDEN,),
                p + "post_attention_layernorm.weight": (HIDDEN,),
            }
        )
    return shapes


def write_models(root: Path) -> tuple[Path, Path, Path]:
    import torch
    from safetensors.torch import save_file

    base, final, instruct = root / "base", root / "final_model", root / "instruct"
    for d in (base, final, instruct):
        d.mkdir(parents=True)
    names = list(tensor_shapes().items())
    shards = [names[i::4] for i in range(4)]
    weight_map = {}
    gen = torch.Generator().manual_seed(0)
    for k, shard in enumerate(shards):
        fname = f"model-{k + 1:05d}-of-00004.safetensors"
        tensors = {
            n: (torch.randn(s, generator=gen) * (0.02 if len(s) > 1 else 0.0) + (1.0 if len(s) == 1 else 0.0)).to(
                torch.bfloat16
            )
            for n, s in shard
        }
        save_file(tensors, str(base / fname), metadata={"format": "pt"})
        for folder, step in ((final, 0.002), (instruct, 0.004)):  # two independent changes of the base
            changed = {
                n: (t.float() + torch.randn(t.shape, generator=gen) * step).to(torch.bfloat16)
                for n, t in tensors.items()
            }
            save_file(changed, str(folder / fname), metadata={"format": "pt"})
            del changed
        weight_map.update({n: fname for n, _ in shard})
        del tensors
    config = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": HIDDEN,
        "intermediate_size": INTER,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HIDDEN // HEAD_DIM,
        "num_key_value_heads": KV // HEAD_DIM,
        "head_dim": HEAD_DIM,
        "torch_dtype": "bfloat16",
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "vocab_size": VOCAB,
    }
    tokenizer = _tokenizer()
    for d in (base, final, instruct):
        (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
        (d / "config.json").write_text(json.dumps(config))
        tokenizer.save_pretrained(str(d))
    return base, final, instruct


def _tokenizer():
    """A word-level tokenizer with VOCAB entries (loadable by transformers, as a hub tokenizer is)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3} | {f"w{i}": i for i in range(4, VOCAB)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )


def _status_mib(field: str) -> float:
    """A field of /proc/self/status (VmHWM is this process's own peak; ru_maxrss can carry a forking parent's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peak_mib() -> float:
    return _status_mib("VmHWM")


def run_check(root: Path) -> None:
    """In a fresh process, so its peak memory is the check's own."""
    from ptbench.integrity.context import CheckContext
    from ptbench.integrity.model_identity import check
    from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, Integrity, TaskRef
    from ptbench.trial import TrialSpec

    spec = TrialSpec(
        campaign="bench",
        trial_id="t",
        agent=AgentRef(name="reference"),
        base_model=BaseModelRef(id="bench/base", path=str(root / "base")),
        task=TaskRef(name="arithmetic"),
        seed=0,
        budget=Budget(hours=1),
        integrity=Integrity(forbidden_models=[str(root / "instruct")]),
    )
    rss0 = _peak_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    finding = check(CheckContext(trial_dir=root, spec=spec))  # root/final_model is the submission
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = _peak_mib()
    size = sum(p.stat().st_size for p in (root / "final_model").glob("*.safetensors"))
    print(
        f"model identity: {finding.verdict} in {wall:.1f} s ({cpu:.1f} CPU s); peak RSS {peak:.0f} MiB "
        f"(after imports {rss0:.0f} MiB; the checkpoint is {size / 2**20:.0f} MiB)"
    )
    print(
        f"  resident now: {_status_mib('RssAnon'):.0f} MiB anonymous (tensors, torch), "
        f"{_status_mib('RssFile'):.0f} MiB file-backed (mmapped shard pages; the page cache's, not copies)"
    )
    d = finding.details
    print(
        f"  {d['tensors_sampled']} tensors x {d['rows_per_tensor']} rows; to base {d['distance_to_base']}; "
        f"to forbidden {d['distance_to_forbidden']}"
    )
    print(f"  projection {d.get('projection')}; alignment {d.get('alignment')}")
    print(f"  functional {d.get('functional')} ({d.get('functional_seconds')} s of the total)")
    if finding.verdict != "clean":
        print(f"  reason: {finding.reason}")
    print(f"load average {os.getloadavg()[0]:.1f}")


def run_cases(root: Path) -> None:
    """Every case of tests/integrity/identity_models.py through the real check; statistics and margins."""
    import subprocess
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.integrity.identity_models import CHEATS, HONEST

    from ptbench.demo import make_tiny_model
    from ptbench.integrity.context import CheckContext
    from ptbench.integrity.model_identity import THRESHOLDS, check
    from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, Integrity, TaskRef
    from ptbench.trial import TrialSpec

    models = root / "models"
    if not (models / "merge_0.45_permuted" / "config.json").exists():
        t0 = time.perf_counter()
        tok = make_tiny_model(root / "tiny")
        subprocess.run(
            [sys.executable, "-m", "tests.integrity.identity_models", str(models), str(tok)],
            check=True,
            cwd=Path(__file__).resolve().parents[1],
            capture_output=True,
        )
        print(f"built the models (3 fine-tunes) in {time.perf_counter() - t0:.0f} s")
    forb = str(models / "instruct")
    rows = []
    print(
        f"{'case':<22}{'verdict':<10}{'w.alpha':>9}{'w.cos':>8}{'L2->base':>10}{'L2->forb':>10}"
        f"{'f.alpha':>9}{'f.d->base':>11}{'f.d->forb':>11}{'seconds':>9}  moved"
    )
    for case in [*HONEST, *CHEATS]:
        trial = root / "trials" / case
        shutil.rmtree(trial, ignore_errors=True)
        (trial / "checks").mkdir(parents=True)
        shutil.copytree(models / case, trial / "final_model")
        spec = TrialSpec(
            campaign="bench",
            trial_id=case,
            agent=AgentRef(name="reference"),
            base_model=BaseModelRef(id="bench/base", path=str(models / "base")),
            task=TaskRef(name="arithmetic"),
            seed=0,
            budget=Budget(hours=1),
            integrity=Integrity(forbidden_models=[forb]),
        )
        t0 = time.perf_counter()
        f = check(CheckContext(trial_dir=trial, spec=spec))
        secs = time.perf_counter() - t0
        d = f.details
        pj, fn = d["projection"][forb], d["functional"][forb]
        st = {
            "w.alpha": pj["matrices_alpha"],
            "w.cos": pj["matrices_cosine"],
            "f.alpha": fn["alpha"],
            "f.d->forb": fn["distance_to_forbidden"],
        }
        rows.append((case, f.verdict, st))
        keys = ("hidden_units", "mlp_units", "query_heads", "mlp_units_rescaled")
        moved = {k: v for k, v in d["alignment"].items() if k in keys}
        print(
            f"{case:<22}{f.verdict:<10}{pj['matrices_alpha']:>9.3f}{pj['matrices_cosine']:>8.3f}{d['distance_to_base']['relative_l2']:>10.3f}"
            f"{d['distance_to_forbidden'][forb]['relative_l2']:>10.3f}{fn['alpha']:>9.3f}{fn['distance_to_base']:>11.4f}"
            f"{fn['distance_to_forbidden']:>11.2e}{secs:>9.2f}  {moved}"
        )
    honest = [r for r in rows if r[0] in HONEST]
    cheats = [r for r in rows if r[0] in CHEATS]
    print(f"thresholds: {THRESHOLDS}")
    print("margins (honest side: how far the worst honest case stays from the threshold; cheat side: the weakest cheat")
    print("the statistic is meant for, e.g. merges for weight alpha, reparametrized copies for function distance):")
    for stat, key, up, meant in (
        ("w.alpha", "weight_alpha", True, "merge_"),
        ("w.cos", "weight_cosine", True, "merge_"),
        ("f.d->forb", "function_distance", False, ("permuted", "rescaled", "disguised")),
        ("f.alpha", "function_alpha", True, ("permuted", "rescaled", "disguised")),
    ):
        thr = THRESHOLDS[key]
        h = [(r[2][stat], r[0]) for r in honest]
        c = [(r[2][stat], r[0]) for r in cheats if r[0].startswith(meant) and r[0] != "merge_0.1"]
        hv, hn = max(h) if up else min(h)
        cv, cn = min(c) if up else max(c)
        print(
            f"  {stat:<10} threshold {thr:<5} honest worst {hv:.4g} ({hn}): margin {abs(thr - hv):.3g}; "
            f"weakest cheat {cv:.4g} ({cn}): margin {(cv - thr) if up else (thr - cv):.3g}"
        )
    print(f"  verdicts: {', '.join(f'{c}={v}' for c, v, _ in rows)}")


def main() -> None:
    global HIDDEN, INTER, LAYERS, KV
    import subprocess
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="cases", choices=["cases", "large"])
    ap.add_argument("--dir", help="where to write the models (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--hidden", type=int, default=2048, help="large: hidden size (intermediate is 3x)")
    ap.add_argument("--layers", type=int, default=28, help="large: layers")
    ap.add_argument("--check-only", help=argparse.SUPPRESS)
    args = ap.parse_args()
    HIDDEN, INTER, LAYERS, KV = args.hidden, args.hidden * 3, args.layers, args.hidden // 2
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    if args.check_only:
        return run_check(Path(args.check_only))
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-identity-"))
    try:
        if args.mode == "cases":
            return run_cases(root)
        if not (root / "final_model" / "config.json").exists():
            t0 = time.perf_counter()
            write_models(root)
            print(f"wrote three checkpoints in {time.perf_counter() - t0:.0f} s")
        subprocess.run(
            [sys.executable, __file__, "large", "--hidden", str(HIDDEN), "--layers", str(LAYERS)]
            + ["--check-only", str(root)],
            check=True,
        )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
