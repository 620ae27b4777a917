#!/usr/bin/env bash
# Render a campaign's HTCondor submit description and submit it with condor_submit.
#
#   submit/condor_submit.sh CAMPAIGN.yaml [condor_submit options...]
#
# The same description `ptbench submit` uses (templates in src/ptbench/backends/templates/): one
# cluster, one job per unfinished trial. Trials are planned first (their directories must exist
# before a job starts). `ptbench status CAMPAIGN.yaml` tracks the jobs from the job log afterwards:
# each job's submit event names its trial. PTBENCH (default: ptbench) is the command to run.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
campaign=$1
shift
ptbench=${PTBENCH:-ptbench}

$ptbench plan "$campaign"
description=$($ptbench render "$campaign" --backend htcondor)
echo "description: $description"
exec condor_submit "$@" "$description"
