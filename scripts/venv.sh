# Sourced by scripts/install.sh, scripts/quickstart.sh and scripts/test.sh: `ptbench_venv` makes (once)
# and activates ptbench's own virtual environment, $PTBENCH_VENV (default .venv in the checkout).
# Why a venv: Debian 12 and Ubuntu 24.04 refuse pip installs into the system's Python (PEP 668,
# "externally managed") and have `python3` but no `python`; inside an activated venv `python` is the
# venv's interpreter and every install lands there, never in the system.
# Why --system-site-packages: where the interpreter already carries the heavy stack (CI's Python has
# CPU torch, vLLM's CPU build, transformers, ...), pip sees it and installs only what is missing, into
# the venv; a clean venv would download and unpack several GB again on every fresh clone (minutes).
# On a stock machine the interpreter has none of it, so the venv ends up holding everything. A package
# the venv installs shadows the interpreter's copy (the venv's site-packages come first on sys.path),
# and pip never uninstalls outside the venv.
# The interpreter: $PTBENCH_PYTHON, else python3 on PATH; Python >= 3.11 with the venv module (Debian
# and Ubuntu ship that as python3.X-venv, installed here with apt-get when run as root).
# shellcheck shell=bash

ptbench_venv() {
  local venv=${PTBENCH_VENV:-$PWD/.venv}
  local py=${PTBENCH_PYTHON:-python3}
  if [ "${VIRTUAL_ENV:-}" = "$venv" ] && [ -x "$venv/bin/python" ]; then
    return 0 # a parent script activated it already
  fi
  # Reused when its interpreter still runs (a venv outlives neither a removed pyenv version nor a Python upgrade).
  if ! "$venv/bin/python" -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null; then
    if [ -e "$venv" ] && [ ! -f "$venv/pyvenv.cfg" ] && [ -n "$(ls -A "$venv" 2>/dev/null)" ]; then
      echo "error: $venv exists and is not a virtual environment; remove it or set PTBENCH_VENV to another folder" >&2
      exit 2
    fi
    if ! command -v "$py" >/dev/null; then
      echo "error: no $py on PATH: ptbench needs Python >= 3.11 with its venv module (Debian/Ubuntu: apt-get install python3 python3-venv), or set PTBENCH_PYTHON=/path/to/python3.11" >&2
      exit 2
    fi
    local ver
    ver=$("$py" -c "import sys; print('%d.%d' % sys.version_info[:2])")
    if ! "$py" -c "import sys; sys.exit(sys.version_info < (3, 11))"; then
      echo "error: $py is Python $ver; ptbench needs Python >= 3.11: set PTBENCH_PYTHON=/path/to/python3.11 (or newer)" >&2
      exit 2
    fi
    # Debian and Ubuntu split ensurepip (which `python3 -m venv` needs for pip) into python3.X-venv.
    if ! "$py" -c "import venv, ensurepip" 2>/dev/null; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "== installing python$ver-venv (apt-get): $py has no ensurepip, which its venv module needs"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python$ver-venv" >/dev/null
      else
        echo "error: $py cannot make a virtual environment (no ensurepip): sudo apt-get install python$ver-venv" >&2
        exit 2
      fi
    fi
    echo "== making the virtual environment $venv ($py, Python $ver)"
    # --clear: a venv whose interpreter is gone is rebuilt, not patched.
    "$py" -m venv --clear --system-site-packages "$venv"
    # Python 3.11's ensurepip also puts its old setuptools (65) into the venv, where it would shadow the
    # interpreter's own; pip then installed the newest over it, past pins such as vLLM's setuptools==78.1.1.
    if "$py" -c "import setuptools" 2>/dev/null; then
      "$venv/bin/python" -m pip uninstall -y -q --disable-pip-version-check setuptools >/dev/null 2>&1 || true
    fi
  fi
  export VIRTUAL_ENV=$venv
  export PATH=$venv/bin:$PATH
  unset PYTHONHOME
  hash -r
}
