#!/usr/bin/env bash
# Builds one of the two images and records its digest:
#   bash containers/build.sh agent|eval [OUT.sif]
# writes containers/<name>.sif (or OUT.sif) and the entry {image, digest: sha256:<hex>, bytes, built_at}
# under <name> in containers/digests.json, which ptbench reads to put the digest into every result
# (provenance.container_digest). Needs apptainer and network on the build host.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:-}
case "$name" in
  agent|eval) ;;
  *) echo "usage: bash containers/build.sh agent|eval [OUT.sif]" >&2; exit 2 ;;
esac
out=${2:-containers/$name.sif}
command -v apptainer >/dev/null || { echo "error: apptainer is not installed on this host (install it or build on a login node that has it)" >&2; exit 2; }
apptainer build --force "$out" "containers/$name.def"
digest="sha256:$(sha256sum "$out" | awk '{print $1}')"
python3 - "$name" "$out" "$digest" <<'PY'
import json, os, sys, tempfile, time
name, image, digest = sys.argv[1:4]
path = "containers/digests.json"
data = json.load(open(path)) if os.path.exists(path) else {}
data[name] = {"image": os.path.abspath(image), "digest": digest, "bytes": os.path.getsize(image), "built_at": int(time.time())}
fd, tmp = tempfile.mkstemp(dir="containers", prefix=".digests.")
with os.fdopen(fd, "w") as f:
    json.dump(data, f, indent=2, sort_keys=True)
    f.write("\n")
os.replace(tmp, path)
PY
echo "built $out ($digest); recorded in containers/digests.json"
