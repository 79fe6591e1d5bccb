#!/usr/bin/env bash
# Install Traceloupe into .venv and run the demo: a demo database, the stub provider, the dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# A CJK font so the demo's Chinese titles and messages render as characters, not boxes.
bash scripts/cjk-font.sh
exec .venv/bin/traceloupe demo "$@"
