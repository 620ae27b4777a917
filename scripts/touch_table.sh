#!/usr/bin/env bash
# What adding each pluggable kind touches (docs/design.md, "Layers"): each row is added as a BUILT-IN
# plugin (the harder case: a plugin in its own package edits no ptbench file by construction) by its
# guide's steps, in a throwaway clone of this checkout's HEAD, then `git status --short` is counted and
# the registries are asked for it. Usage: scripts/touch_table.sh [REV]   (default HEAD; one row a kind)
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
TOY=$REPO/tests/plugins/ptbench-toy/src/ptbench_toy
git clone -q "$REPO" "$S/clone" && cd "$S/clone" && git checkout -q "$(git -C "$REPO" rev-parse "${1:-HEAD}")"
row() {  # kind, python code that finds the new plugin through its registry
  found=$(PYTHONPATH=$PWD/src python -c "$2" 2>&1 | tail -1)
  st=$(git status --short --untracked-files=all)
  new=$(grep -c '^??' <<<"$st"); edits=$(grep -vc '^??\|^$' <<<"$st")
  echo "| $1 | $(git status --short | tr '\n' ' ')| new files: $new | edits: $edits | found: $found |"
  git checkout -q . && git clean -fdq
}
# a scheduler (docs/guides/add-a-scheduler.md): one backend package under src/ptbench/backends/
mkdir -p src/ptbench/backends/toy && cp "$TOY/scheduler.py" src/ptbench/backends/toy/__init__.py
row scheduler "from ptbench.backends.registry import BACKENDS; print(BACKENDS.get('toy'))"
# a benchmark (add-a-benchmark.md): src/ptbench/tasks/<name>.py
cp "$TOY/benchmark.py" src/ptbench/tasks/toy_parity.py
row benchmark "from ptbench.tasks.base import TASKS; c = TASKS.get('toy_parity'); print(c, c.token_phases)"
# an agent CLI with its own output format (add-an-agent-cli.md): agents/<name>/ and a parser module in
# agents/traces/ (the toy package's agent.py without the line that registers its packaged folder)
cp -r "$TOY/agents/toy-copy" agents/toy-copy
grep -v '^AGENTS.add\|^from ptbench.agents.spec import AGENTS\|^from pathlib import Path' "$TOY/agent.py" \
  > src/ptbench/agents/traces/toy_lines.py
row "agent CLI" "import subprocess, sys
from ptbench.agents.spec import load_agent
from ptbench.agents.traces.formats import TRACE_FORMATS
a = load_agent('toy-copy')
pins = subprocess.run([sys.executable, '-m', 'ptbench.agents.pins', 'npm'], capture_output=True, text=True).stdout.split()
print(a.trace_format, TRACE_FORMATS.get(a.trace_format).__module__, a.state_folders, [p for p in pins if 'toy' in p])"
# an integrity check (add-an-integrity-check.md): one public module under src/ptbench/integrity/
cp "$TOY/check.py" src/ptbench/integrity/toy_cheat.py
row "integrity check" "from ptbench.integrity.checks import CHECKS; print(CHECKS.get('toy_cheat'))"
# an environment family (add-an-environment.md): one adapter module under src/ptbench/bootcamp/adapters/
cp "$TOY/environment.py" src/ptbench/bootcamp/adapters/toy.py
row environment "from ptbench.bootcamp.adapters import ADAPTERS, config_dict
a = ADAPTERS.get('toy.'); print(a.PREFIX, config_dict('toy.' + a.names()[0])['name'])"
