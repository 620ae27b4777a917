#!/usr/bin/env bash
# Render and submit a ptbench campaign to Slurm in one step — for people who live in sbatch.
#
#   submit/sbatch_submit.sh CAMPAIGN.yaml [--dry-run] [--retry-failed]
#
# 1. validates the campaign and writes the exact sbatch script to <results>/<campaign>/submit/slurm.sh
#    (with slurm.trials.txt beside it: array index -> trial folder), so you can review it; a resubmission
#    covers only the unfinished trials, so its array is smaller than the rendered one;
# 2. submits the unfinished trials as ONE job array through submitit (`ptbench submit --backend slurm`):
#    the script alone cannot be sbatch'ed by hand, each array task loads its trial from submitit's folder.
# --dry-run stops after step 1. Follow the jobs with `ptbench status <results>/<campaign>`.
set -euo pipefail

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != -h && $1 != --help ]] || usage
campaign=$1; shift
dry_run=0; extra=()
for arg in "$@"; do
    case $arg in
        --dry-run) dry_run=1 ;;
        --retry-failed) extra+=(--retry-failed) ;;
        *) echo "sbatch_submit: unknown option '$arg'" >&2; usage ;;
    esac
done

if command -v ptbench >/dev/null; then ptb=(ptbench); else ptb=("${PYTHON:-python3}" -m ptbench); fi
command -v sbatch >/dev/null || { echo "sbatch_submit: sbatch is not on PATH (run this on a Slurm login node, or load the Slurm module)" >&2; exit 2; }

"${ptb[@]}" validate "$campaign"
script=$("${ptb[@]}" render "$campaign" --backend slurm)
echo "sbatch script: $script"
echo "trial list:    ${script%.sh}.trials.txt"
if ((dry_run)); then
    echo "dry run: nothing submitted"
    exit 0
fi
"${ptb[@]}" submit "$campaign" --backend slurm "${extra[@]}"
