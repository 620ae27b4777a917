# Sourced by scripts/install.sh and scripts/verl-venv.sh: `uv_install PYTHON ARGS...` installs into the
# environment of PYTHON with uv, and `uv_venv DIR [PYTHON]` makes a virtual environment (from $PY, this
# Python's interpreter, by default).
# Used for the `test` role (CI builds every environment from nothing); the `demo` and `gpu` roles keep
# pip, which installs once into a user's own Python with the installer its owner configured.
# Why uv: it installs in seconds what pip takes minutes for on two cores (verl's venv: about 4 min with
# pip and its download cache warm, 15 s with uv and its cache empty).
# uv does not read pip's configuration, so the same sources are passed on: pip's find-links, index and
# extra indexes (environment first, then pip's config files), searched together as pip does
# (`unsafe-best-match`; uv's default takes a package from the first index that has it). Bytecode is
# compiled at install time as pip does: with PYTHONDONTWRITEBYTECODE set, nothing compiles it later.
# shellcheck shell=bash

UV_VERSION=0.13.9
PY=$(python -c "import sys; print(sys.executable)")
python -c "import importlib.metadata as m, sys; sys.exit(m.version('uv') != '$UV_VERSION')" 2>/dev/null \
  || python -m pip install --disable-pip-version-check -q "uv==$UV_VERSION"

# One of pip's settings, as pip would read it: PIP_<NAME> first, then [install] and [global] in its config
# files, merged as pip merges them (`pip config list`; `pip config get` reads only one file, the user's).
PIP_CONFIG_LIST=$(python -m pip config list 2>/dev/null || true)
pip_setting() {
  local var section value
  var=PIP_$(echo "$1" | tr 'a-z-' 'A-Z_')
  if [ -n "${!var:-}" ]; then echo "${!var}"; return; fi
  for section in install global; do
    value=$(printf '%s\n' "$PIP_CONFIG_LIST" | sed -n "s/^$section\.$1='\(.*\)'\$/\1/p" | tail -1)
    if [ -n "$value" ]; then echo "$value"; return; fi
  done
}

UV_SOURCES=(--index-strategy unsafe-best-match)
for _d in $(pip_setting find-links); do UV_SOURCES+=(--find-links "$_d"); done
_d=$(pip_setting index-url)
[ -n "$_d" ] && UV_SOURCES+=(--index-url "$_d")
for _d in $(pip_setting extra-index-url); do UV_SOURCES+=(--extra-index-url "$_d"); done
unset _d
# And pip's CA bundle (`cert`, e.g. a site's TLS-inspecting proxy), which uv takes from SSL_CERT_FILE.
UV_CERT=${SSL_CERT_FILE:-$(pip_setting cert)}

uv_run() {
  if [ -n "$UV_CERT" ]; then SSL_CERT_FILE=$UV_CERT python -m uv "$@"; else python -m uv "$@"; fi
}

uv_install() {
  local py=$1
  shift
  uv_run pip install -q --compile-bytecode "${UV_SOURCES[@]}" --python "$py" "$@"
}

uv_venv() {
  uv_run venv -q --allow-existing --python "${2:-$PY}" "$1"
}
