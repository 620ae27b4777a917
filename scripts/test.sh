#!/usr/bin/env bash
# The test suite as CI runs it: installs everything, runs the gate (ruff, mypy), starts the dev Slurm
# cluster, runs pytest.
# Extra arguments go to pytest (e.g. bash scripts/test.sh tests/runner -x).
set -euo pipefail
cd "$(dirname "$0")/.."
# Installs, the gate and pytest all use ptbench's own virtual environment (.venv, or $PTBENCH_VENV),
# made here with python3 and activated: `python` below is the venv's, and so is the sys.executable
# that tests start subprocesses with (scripts/venv.sh).
# shellcheck source=scripts/venv.sh
. scripts/venv.sh
ptbench_venv
# `-m gpu` (the GPU tests, on a GPU machine) installs the GPU stack instead and needs no Slurm cluster.
gpu=0
prev=
for a in "$@"; do [ "$prev" = -m ] && [ "$a" = gpu ] && gpu=1; prev=$a; done
if [ $gpu = 1 ]; then
  echo "== installing the GPU stack"
  bash scripts/install.sh gpu
else
  echo "== installing test dependencies"
  bash scripts/install.sh test
  # The gate: lint, format and types (configured in pyproject.toml; versions pinned in the dev extra).
  # Each prints its count; a problem fails the run before the cluster starts or any test runs.
  echo "== ruff check (src, tests, scripts)"
  python -m ruff check --no-fix src tests scripts
  echo "== ruff format --check"
  python -m ruff format --check src tests scripts
  echo "== mypy (src/ptbench)"
  python -m mypy
  if [ -f scripts/slurm-dev-cluster.sh ]; then
    echo "== starting the dev Slurm cluster"
    # A cluster this run starts is stopped when it ends (pass or fail), so the suite leaves no daemon
    # behind; one that was already running (a developer's) is left as it was.
    if ! bash scripts/slurm-dev-cluster.sh status >/dev/null 2>&1; then
      trap 'echo "== stopping the dev Slurm cluster"; bash scripts/slurm-dev-cluster.sh stop >/dev/null 2>&1 || true' EXIT
    fi
    eval "$(bash scripts/slurm-dev-cluster.sh start | grep '^export ')"
  fi
fi
# Three pytest-xdist workers on two cores: much of the suite waits on real processes (CLIs, Slurm jobs,
# servers, budgets), and a third worker fills those waits (measured on a 2-core machine: 34:26 with two,
# 30:18 with three, every test passing; docs/design.md "The suite's time"). Each worker's processes get
# one OpenMP thread (tests/conftest.py), so three do not oversubscribe the cores. A file with module
# fixtures, and all Slurm tests, stay on one worker, and the longest of these units start first
# (tests/conftest.py). PTBENCH_TEST_WORKERS=0 runs in this process; GPU tests share one GPU.
workers=${PTBENCH_TEST_WORKERS:-3}
[ $gpu = 1 ] && workers=0
echo "== running tests ($workers workers)"
# --slow: the `slow` tests are opt-in for a plain `pytest` (tests/conftest.py); this script runs every test.
python -m pytest -m "not gpu" --slow -n "$workers" --dist loadgroup -q -p no:cacheprovider -p no:benchmark --durations=25 "$@"
