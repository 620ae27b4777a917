#!/usr/bin/env bash
# The demo on one machine, no GPU, no API key: installs ptbench, creates a tiny model locally,
# runs campaigns/demo.yaml (base-model vs the reference TRL SFT recipe) and prints the table.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# Everything goes into ptbench's own virtual environment (.venv, or $PTBENCH_VENV), made here with
# python3 and activated for the steps below: `python` below is the venv's (scripts/venv.sh).
# shellcheck source=scripts/venv.sh
. scripts/venv.sh
ptbench_venv
echo "== installing into $VIRTUAL_ENV (CPU torch, transformers, TRL)"
bash scripts/install.sh demo
echo "== creating the tiny demo model in .cache/tiny-llama"
python -m ptbench make-tiny-model .cache/tiny-llama
echo "== running campaigns/demo.yaml on the local backend"
python -m ptbench run campaigns/demo.yaml
echo "== demo finished in $(( $(date +%s) - start )) s"
