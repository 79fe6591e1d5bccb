#!/usr/bin/env bash
# Install Traceloupe into .venv and run the demo: a demo database, the stub provider, the dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/traceloupe demo "$@"
