#!/usr/bin/env bash
# Install Traceloupe into .venv and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/traceloupe --help
