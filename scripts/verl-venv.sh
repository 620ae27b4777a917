#!/usr/bin/env bash
# Builds .venv-verl: the pinned verl release beside CPU torch, for the tests that drive verl for real.
# verl pins transformers<5.11 while ptbench's train/eval extras need >=5.16, so verl lives in its own venv.
# Idempotent: a finished venv (marker file naming the pins) returns at once.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${PTBENCH_VERL_VENV:-$PWD/.venv-verl}
# verl 0.9.1 is the release the adapters are tested against; transformers 5.9.0 is verl's own pin in
# its cpu extra; torch 2.13.0 is the CPU build on this disk (verl's extras would pull a CUDA 2.11).
# fastapi + uvicorn: imported by verl's rollout utils, which its agent loop imports (ptbench's own
# bootcamp extra no longer brings them: its tool server is on aiohttp).
PINS="verl==0.9.1 transformers==5.9.0 datasets==5.2.0 pyarrow==26.0.1 cachetools==8.0.2 fastapi==0.165.0 uvicorn==0.54.0"
# The simulator environments' extras (pinned in pyproject), so verl's tests play them too.
EXTRAS="bootcamp,verl,bootcamp-battery,bootcamp-poker,bootcamp-combinatorial,bootcamp-forecasting"
marker="$VENV/.ptbench-pins"
# The marker names the pins, the extras and this checkout (ptbench is installed editable from it);
# importing verl to check would cost seconds on every install run.
if [ -x "$VENV/bin/python" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$PINS [$EXTRAS] $PWD" ]; then
  exit 0
fi
# shellcheck source=scripts/uv.sh
. scripts/uv.sh
[ -x "$VENV/bin/python" ] || uv_venv "$VENV"
uv_install "$VENV/bin/python" torch==2.13.0
# Plain `verl` (no extras): the dataset, tool, reward and agent-loop modules, no GPU engines.
# shellcheck disable=SC2086  # PINS is a list of requirements
uv_install "$VENV/bin/python" $PINS
uv_install "$VENV/bin/python" -e ".[$EXTRAS]"
# cachetools: imported by the agent loop (verl lists it only in its verl-core extra, which pulls GPU pieces).
"$VENV/bin/python" -c "import verl.experimental.agent_loop.tool_agent_loop, verl.tools.tool_registry, verl.utils.dataset.rl_dataset, ptbench.bootcamp, pybamm, pokerkit, ortools, statsmodels"
echo "$PINS [$EXTRAS] $PWD" > "$marker"
