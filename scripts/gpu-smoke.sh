#!/usr/bin/env bash
# A smoke run on one NVIDIA GPU, for a machine that has torch (CUDA) and transformers but no network:
#   1. installs ptbench and the wheels it needs from a folder that scripts/gpu-wheels.sh built
#      (only those not already installed; into a private folder on PYTHONPATH, nothing system-wide),
#   2. runs the node checks (`ptbench doctor --gpus 1`),
#   3. runs a short demo campaign with `gpus: 1`: the base model and the reference TRL recipe on CUDA,
#      transformers evaluation, the monitor sampling the GPU every 2 s,
#   4. prints a table of what it saw; exit 0 when every row is ok. About 2-5 minutes.
#   bash scripts/gpu-smoke.sh [WHEELS]    (default .cache/gpu-wheels; work folder $GPU_SMOKE_DIR, default /tmp/ptbench-gpu-smoke)
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=${1:-.cache/gpu-wheels}
work=${GPU_SMOKE_DIR:-/tmp/ptbench-gpu-smoke}
PY=${PYTHON:-python3}

die() {
  echo "error: $*" >&2
  exit 2
}

# 0. a GPU, torch with CUDA, transformers: what this script checks, not what it installs
command -v "$PY" >/dev/null || die "no $PY on PATH (set PYTHON=/path/to/python)"
gpu=$("$PY" - <<'EOF' 2>&1
import sys

try:
    import torch
    import transformers  # noqa: F401
except ImportError as exc:
    sys.exit(f"{exc.name} is not installed: this script expects a machine with torch (CUDA) and transformers")
if not torch.cuda.is_available():
    why = "torch has no CUDA build" if torch.version.cuda is None else "torch sees no CUDA device"
    sys.exit(f"no NVIDIA GPU: {why} (torch {torch.__version__}); run this on a machine with one NVIDIA GPU")
print(torch.cuda.get_device_name(0))
EOF
) || die "$gpu"
[ -d "$wheels" ] || die "no wheel folder $wheels: build it where pip works with 'bash scripts/gpu-wheels.sh' and copy it here"
ls "$wheels"/ptbench-*.whl >/dev/null 2>&1 || die "$wheels has no ptbench wheel: rebuild it with 'bash scripts/gpu-wheels.sh'"
echo "== GPU: $gpu"

# 1. install what is missing, from the folder only
rm -rf "$work"
mkdir -p "$work/site"
missing=$("$PY" - "$wheels" <<'EOF'
import importlib.metadata as md
import re
import sys
from pathlib import Path

for wheel in sorted(Path(sys.argv[1]).glob("*.whl")):
    name = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
    try:
        md.version(name)
        if name == "ptbench":  # the harness under test is always the folder's
            raise md.PackageNotFoundError
    except md.PackageNotFoundError:
        print(wheel)
EOF
)
echo "== installing $(echo "$missing" | wc -w) wheel(s) from $wheels into $work/site"
# shellcheck disable=SC2086  # one wheel path per word
"$PY" -m pip install -q --no-index --no-deps --no-compile --disable-pip-version-check --target "$work/site" $missing
export PYTHONPATH="$work/site${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c "import ptbench.cli, trl, datasets, pydantic, pynvml" 2>"$work/import.err" \
  || die "an import failed after the install ($(tail -1 "$work/import.err")): add that package to scripts/gpu-wheels.sh (or GPU_WHEELS_EXTRA) and rebuild the folder"

# 2. node checks
echo "== ptbench doctor --gpus 1"
set +e
(cd "$work" && "$PY" -m ptbench doctor --gpus 1) | tee "$work/doctor.txt"
doctor=${PIPESTATUS[0]}
set -e

# 3. the demo campaign on the GPU (one seed: the base model and the reference recipe)
"$PY" -m ptbench make-tiny-model "$work/tiny-llama" >/dev/null
sed -e "s|path: .cache/tiny-llama|path: $work/tiny-llama|" \
  -e "s|^name: demo|name: gpu-smoke|" \
  -e "s|^seeds: .*|seeds: [0]|" \
  -e "s|  gpus: 0|  gpus: 1\n  monitor_seconds: 2|" \
  -e "s|^results_dir: .*|results_dir: $work/results|" \
  campaigns/demo.yaml >"$work/gpu-smoke.yaml"
grep -q "gpus: 1" "$work/gpu-smoke.yaml" || die "campaigns/demo.yaml changed shape: update gpu-smoke.sh's edits"
echo "== ptbench run (demo campaign, gpus: 1)"
set +e
(cd "$work" && timeout 900 "$PY" -m ptbench run gpu-smoke.yaml) | tee "$work/run.txt"
run=${PIPESTATUS[0]}
set -e

# 4. what it saw
"$PY" - "$work" "$doctor" "$run" <<'EOF'
import json
import sys
from pathlib import Path

work, doctor, run = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rows = [("ptbench doctor --gpus 1", doctor == 0, f"exit {doctor}"), ("ptbench run", run == 0, f"exit {run}")]
campaign = work / "results" / "gpu-smoke"
for trial in sorted(campaign.glob("*__s*")):
    agent = trial.name.split("__")[0]
    try:
        result = json.loads((trial / "result.json").read_text())
    except (OSError, ValueError):
        rows.append((f"{agent}: result", False, "no result.json"))
        continue
    metric = result.get("primary_metric") or {}
    ok = result.get("status") == "completed" and metric.get("value") is not None
    rows.append((f"{agent}: result", ok, f"{result.get('status')}, {metric.get('name')} {metric.get('value')}"))
    engine = (result.get("evaluation") or {}).get("engine")
    rows.append((f"{agent}: transformers evaluation", engine == "transformers", f"engine {engine}"))
    mon = result.get("monitor") or {}
    samples = len((trial / "monitor.jsonl").read_text().splitlines()) if (trial / "monitor.jsonl").exists() else 0
    gpu_ok = mon.get("gpu_count") == 1 and samples > 0
    rows.append(
        (
            f"{agent}: monitor",
            gpu_ok,
            f"{samples} samples, {mon.get('gpu_count')} GPU, util max {mon.get('gpu_util_max')}%, "
            f"memory peak {mon.get('gpu_memory_peak_bytes')} B",
        )
    )
    if agent == "reference":
        state = json.loads((trial / "state.json").read_text())
        gpus = str(state["stages"].get("prepare", {}).get("detail", {}).get("gpus", ""))
        rows.append(("reference: GPU check before the agent", "CUDA write ok" in gpus, gpus[:80]))
        solve = [
            g
            for line in (trial / "monitor.jsonl").read_text().splitlines()
            if '"solve"' in line
            for g in json.loads(line).get("gpus", [])
        ] if (trial / "monitor.jsonl").exists() else []
        mem = max((g.get("memory_tree_bytes") or 0 for g in solve), default=0)
        util = max((g.get("util_percent") or 0 for g in solve), default=0)
        rows.append(
            (
                "reference: trained on CUDA (solve-stage samples)",
                mem > 0 or util > 0,
                f"{len(solve)} GPU samples, trial's GPU memory max {mem} B, util max {util}%",
            )
        )
width = max(len(r[0]) for r in rows)
print(f"\n| {'check':<{width}} | ok | detail |\n|{'-' * (width + 2)}|----|--------|")
for name, ok, detail in rows:
    print(f"| {name:<{width}} | {'ok' if ok else 'NO'} | {detail} |")
sys.exit(0 if all(ok for _, ok, _ in rows) else 1)
EOF
