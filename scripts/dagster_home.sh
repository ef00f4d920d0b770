#!/usr/bin/env bash
# Prepare and print the Dagster home of `make dev` for a configuration: `<state_dir>/dagster-ui`,
# holding a copy of the project's dagster.yaml. The UI writes its own files there (.nux/, logs,
# compute logs), never into the checkout; runs and events still live in PostgreSQL
# (DAGSTER_PG_URL), so the UI and the CLI (whose instance is `<state_dir>/dagster`) share one
# history. Usage: scripts/dagster_home.sh CONFIG
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
config="${1:?usage: scripts/dagster_home.sh CONFIG}"
py="${PYTHON:-$root/.venv/bin/python}"
home="$("$py" - "$config" <<'PY'
import sys
from rag_pipeline.config import load_config
from rag_pipeline.errors import PipelineError
try:
    print((load_config(sys.argv[1]).state_dir / "dagster-ui").resolve())
except PipelineError as error:  # a broken configuration: one line naming the file, no traceback
    sys.exit(f"scripts/dagster_home.sh: {error}")
PY
)"
mkdir -p "$home"
cp "$root/dagster.yaml" "$home/dagster.yaml"
printf '%s\n' "$home"
