#!/usr/bin/env bash
# Builds the folder of wheels that scripts/gpu-smoke.sh installs on a GPU machine without network:
# ptbench itself, and the Python packages its smoke run needs beyond torch and transformers, at the
# versions installed here (the ones the test suite ran with). Compiled ones are fetched for the GPU
# machine's Python (PYTHON_VERSION, default 3.12) and x86-64 Linux. pyarrow and pandas (datasets
# needs them; about 60 MB together) are left out unless GPU_WHEELS_EXTRA names them: most torch
# images have them, and gpu-smoke.sh names any package still missing there.
#   bash scripts/gpu-wheels.sh [DIR]      (default .cache/gpu-wheels; prints its size)
#   PYTHON_VERSION=3.11 GPU_WHEELS_EXTRA="pyarrow pandas" bash scripts/gpu-wheels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.cache/gpu-wheels}
pyver=${PYTHON_VERSION:-3.12}
PY=${PYTHON:-python3}

# pure Python (py3-none-any, or one wheel per Python version for multiprocess)
pure=(pydantic annotated-types typing-inspection typing-extensions trl datasets dill multiprocess accelerate
  typer click shellingham rich markdown-it-py mdurl pygments jinja2 nvidia-ml-py fsspec aiosignal attrs
  aiohappyeyeballs)
# compiled: for the GPU machine's Python
compiled=(pydantic-core pyyaml markupsafe psutil xxhash aiohttp multidict yarl frozenlist propcache)
# shellcheck disable=SC2206  # a list of names, split on purpose
extra=(${GPU_WHEELS_EXTRA:-})

pins() {  # NAME==VERSION as installed here (the suite's versions); the bare name where it is not installed
  "$PY" - "$@" <<'EOF'
import importlib.metadata as md
import sys

for name in sys.argv[1:]:
    try:
        print(f"{name}=={md.version(name)}")
    except md.PackageNotFoundError:
        print(name)
EOF
}

tmp="$dir.partial"
rm -rf "$tmp"
mkdir -p "$tmp"
echo "== ptbench"
"$PY" -m pip wheel -q --no-deps --no-build-isolation -w "$tmp" .
platforms=()
for p in manylinux2014_x86_64 manylinux_2_17_x86_64 manylinux_2_27_x86_64 manylinux_2_28_x86_64 manylinux_2_34_x86_64; do
  platforms+=(--platform "$p")
done
fetch=("$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp
  "${platforms[@]}" -d "$tmp")
echo "== pure-Python wheels"
mapfile -t want < <(pins "${pure[@]}")
"${fetch[@]}" "${want[@]}"
echo "== compiled wheels for CPython $pyver, x86-64 Linux"
mapfile -t want < <(pins "${compiled[@]}" "${extra[@]}")
"${fetch[@]}" "${want[@]}"
rm -rf "$dir"
mv "$tmp" "$dir"
bytes=$(du -sb "$dir" | cut -f1)
echo "$dir: $(find "$dir" -name '*.whl' | wc -l) wheels, $((bytes / 1048576)) MiB"
if [ "$bytes" -ge $((64 * 1048576)) ]; then
  echo "error: $dir is $((bytes / 1048576)) MiB, over the 64 MiB a device run carries: drop GPU_WHEELS_EXTRA" >&2
  exit 1
fi
