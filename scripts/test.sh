#!/usr/bin/env bash
# Install everything the tests need (idempotently) and run the whole suite: lint, types, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy --strict core"
.venv/bin/mypy
echo "== pytest"
exec .venv/bin/pytest -n 2 "$@"
