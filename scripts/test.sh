#!/usr/bin/env bash
# The test suite as CI runs it: installs everything, starts the dev Slurm cluster, runs pytest.
# Extra arguments go to pytest (e.g. bash scripts/test.sh tests/foundation -x).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== installing test dependencies"
bash scripts/install.sh test
if [ -f scripts/slurm-dev-cluster.sh ]; then
  echo "== starting the dev Slurm cluster"
  eval "$(bash scripts/slurm-dev-cluster.sh start | grep '^export ')"
fi
echo "== running tests"
python -m pytest -m "not gpu" -q -p no:cacheprovider "$@"
