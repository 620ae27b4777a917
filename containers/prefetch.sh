#!/usr/bin/env bash
# Downloads every entry of a prefetch list into $HF_HOME (run on a node with network access).
set -euo pipefail
list=${1:-$(dirname "$0")/hf-prefetch.txt}
grep -v '^\s*#' "$list" | while read -r kind id rev; do
  [ -z "${kind:-}" ] && continue
  echo "== $kind $id @ $rev"
  python - "$kind" "$id" "$rev" <<'PY'
import sys
from huggingface_hub import snapshot_download
kind, repo, rev = sys.argv[1:4]
print(snapshot_download(repo, revision=rev, repo_type="model" if kind == "model" else "dataset"))
PY
done
