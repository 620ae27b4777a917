"""Model identity on a 4 GB safetensors checkpoint, without loading it whole.

Synthesizes three Qwen3-1.7B-shaped checkpoints in bf16 (about 4 GB each, four shards and an index,
as the hub writes them): a "base", a "final_model" derived from it and a forbidden "instruct"
model further from it. Runs the real check (config, vocabulary,
sampled-slice distances to base and forbidden) and prints its time and peak memory.

    python scripts/bench_model_identity.py [--dir DIR] [--keep]
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

HIDDEN, INTER, LAYERS, VOCAB, KV = 2048, 6144, 28, 151936, 1024


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
        tensors = {n: torch.randn(s, generator=gen, dtype=torch.float32).to(torch.bfloat16) for n, s in shard}
        save_file(tensors, str(base / fname), metadata={"format": "pt"})
        save_file(
            {n: (t * 1.01).contiguous() for n, t in tensors.items()}, str(final / fname), metadata={"format": "pt"}
        )
        save_file(
            {n: (t * 1.05).contiguous() for n, t in tensors.items()}, str(instruct / fname), metadata={"format": "pt"}
        )
        weight_map.update({n: fname for n, _ in shard})
        del tensors
    config = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": HIDDEN,
        "intermediate_size": INTER,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "vocab_size": VOCAB,
    }
    tokenizer = {"model": {"type": "BPE", "vocab": {f"tok{i}": i for i in range(VOCAB)}}}
    for d in (base, final, instruct):
        (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
        (d / "config.json").write_text(json.dumps(config))
        (d / "tokenizer.json").write_text(json.dumps(tokenizer))
    return base, final, instruct


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
        f"  resident now: {_status_mib('RssAnon'):.0f} MiB anonymous (tensors, torch), {_status_mib('RssFile'):.0f} "
        "MiB file-backed (mmapped shard pages around the sampled rows; the page cache's, not copies)"
    )
    print(
        f"  {finding.details['tensors_sampled']} tensors x {finding.details['rows_per_tensor']} rows; "
        f"to base {finding.details['distance_to_base']}; to forbidden {finding.details['distance_to_forbidden']}"
    )
    print(f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    import subprocess
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", help="where to write the checkpoints (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--check-only", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    if args.check_only:
        return run_check(Path(args.check_only))
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-identity-"))
    try:
        if not (root / "final_model" / "config.json").exists():
            t0 = time.perf_counter()
            write_models(root)
            print(f"wrote three checkpoints in {time.perf_counter() - t0:.0f} s")
        subprocess.run([sys.executable, __file__, "--check-only", str(root)], check=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
