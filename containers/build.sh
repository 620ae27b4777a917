#!/usr/bin/env bash
# Builds the trial image and prints its digest (recorded in result.json's provenance when
# campaigns set sandbox_options.image to it). Run on a host with apptainer and network access.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-containers/ptbench.sif}
command -v apptainer >/dev/null || { echo "error: apptainer is not installed on this host (install it or build on a login node that has it)" >&2; exit 2; }
apptainer build --force "$out" containers/ptbench.def
sha256sum "$out" | awk '{print "sha256:" $1}' > "$out.digest"
echo "built $out ($(cat "$out.digest"))"
