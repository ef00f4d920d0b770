#!/usr/bin/env bash
# The demo: sync the demo corpus (version 1 of the travel policy), then version 2 of it, then
# search as an ordinary employee and look at the policy's history.
set -euo pipefail
cd "$(dirname "$0")/.."
RP=".venv/bin/rag-pipeline"
CONFIG=demo/rag_pipeline.yaml
POLICY=demo/docs/policies/travel-policy.pdf
restore() { git checkout -q -- "$POLICY" 2>/dev/null || cp demo/versions/travel-policy.v1.pdf "$POLICY" 2>/dev/null || true; }
trap restore EXIT
start=$(date +%s)
echo "== sync 1: the demo corpus"
"$RP" sync --config "$CONFIG"
echo "== sync 2: the travel policy is replaced by its second edition"
cp demo/versions/travel-policy.v2.pdf "$POLICY"
"$RP" sync --config "$CONFIG"
echo "== demo syncs took $(( $(date +%s) - start )) s"
echo "== search as all-staff: who approves a business trip abroad?"
"$RP" search "Who approves a business trip abroad?" --groups all-staff -k 3 --config "$CONFIG"
echo "== history of the travel policy"
"$RP" history policies/travel-policy.pdf --config "$CONFIG"
echo "== the database server (one per state folder, shared with Dagster; \`rag-pipeline db stop\` stops it)"
"$RP" db status --config "$CONFIG"
