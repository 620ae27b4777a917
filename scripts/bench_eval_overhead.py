"""Harness overhead of `ptbench eval` against raw `vllm.LLM.generate` (CPU build, tiny model).

Both sides use one started `vllm.LLM` (start-up is the same code either way and is excluded), the
same prompts (GSM8K-schema rows rendered with the model's chat template) and the same sampling
settings. The harness side is the whole `evaluate()` call: data loading, templating, tokenizing,
generation with retry bookkeeping, scoring and writing metrics/samples.

    VLLM_CPU_KVCACHE_SPACE=1 python scripts/bench_eval_overhead.py [--n 200] [--max-new-tokens 64] \\
        [--repeats 3] [--base-model ID] [--tiny]

With --base-model (e.g. meta-llama/Meta-Llama-3-8B) both sides render the harness's chat template
for that family, as the runner's evaluation does.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base-model", default=None)
    parser.add_argument(
        "--tiny", action="store_true", help="smallest run (the test suite's smoke run; its figures mean little)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.n, args.max_new_tokens, args.repeats = 8, 8, 1
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

    from vllm import LLM, SamplingParams

    from ptbench.demo import make_tiny_model
    from ptbench.inference.vllm_engine import VLLMEngine, private_rpc_folder
    from ptbench.tasks import get_task
    from ptbench.tasks.evaluate import evaluate

    work = Path(tempfile.mkdtemp(prefix="ptbench-overhead-"))
    model = make_tiny_model(work / "tiny")
    cfg = json.loads((model / "config.json").read_text())
    cfg["max_position_embeddings"] = 4096
    (model / "config.json").write_text(json.dumps(cfg))
    data = work / "gsm8k"
    data.mkdir()
    rows = [
        {
            "question": f"Tom has {i} apples and buys {i % 7 + 2} more. How many apples does he have now?",
            "answer": f"{i} + {i % 7 + 2} = {2 * i % 7}\n#### {i + i % 7 + 2}",
        }
        for i in range(args.n)
    ]
    (data / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    options = {"data_path": str(data), "max_new_tokens": args.max_new_tokens, "retry_max_new_tokens": []}

    # PTBENCH_VLLM_ARGS as `ptbench eval` reads it (the test suite's smoke run asks for eager mode)
    extra = json.loads(os.environ.get("PTBENCH_VLLM_ARGS") or "{}")
    private_rpc_folder()  # vLLM's socket files in a folder removed at exit, as VLLMEngine does
    llm = LLM(model=str(model), dtype="float32", max_model_len=2048, seed=0, max_num_seqs=256, **extra)
    tok = llm.get_tokenizer()
    task = get_task("gsm8k", **options)
    if args.base_model:
        from ptbench.inference.chat_format import choose_chat_format

        chat = choose_chat_format(args.base_model)
        prompts = [chat.render(ex.prompt, None, None) for ex in task.test_examples()]
    else:
        prompts = [
            tok.apply_chat_template(ex.prompt, tokenize=False, add_generation_prompt=True)
            for ex in task.test_examples()
        ]
    params = SamplingParams(max_tokens=args.max_new_tokens, temperature=0.0)
    engine = VLLMEngine.from_llm(llm)
    llm.generate(prompts[:8], params, use_tqdm=False)  # warm-up

    raw, harness = [], []
    for _ in range(args.repeats):
        started = time.perf_counter()
        llm.generate(prompts, params, use_tqdm=False)
        raw.append(time.perf_counter() - started)
        started = time.perf_counter()
        evaluate("gsm8k", str(model), work / "eval", task_options=options, engine=engine, base_model=args.base_model)
        harness.append(time.perf_counter() - started)
    report = {
        "n": args.n,
        "max_new_tokens": args.max_new_tokens,
        "raw_generate_s": [round(x, 3) for x in raw],
        "ptbench_eval_s": [round(x, 3) for x in harness],
        "ratio_median": round(sorted(harness)[len(harness) // 2] / sorted(raw)[len(raw) // 2], 3),
    }
    print(json.dumps(report))
    engine.close()


if __name__ == "__main__":
    main()
