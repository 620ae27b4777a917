#!/usr/bin/env bash
# The toy CLI: its own output format (toy-lines), its own state under ~/.toy, and the work.
set -eu
base=$1
plant=${2:-}
mkdir -p "$HOME/.toy"
echo "session $(date +%s)" >>"$HOME/.toy/session.log"
echo '{"toy": "say", "text": "copying the base model"}'
echo "{\"toy\": \"run\", \"cmd\": \"cp -r $base final_model\"}"
cp -r "$base" final_model
if [ -n "$plant" ]; then
  : >"final_model/$plant"
fi
echo '{"toy": "done", "text": "copied"}'
