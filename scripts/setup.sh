#!/usr/bin/env bash
# Create .venv and install the project (with the test extra when asked), idempotently.
# A stamp file keyed on pyproject.toml skips pip when nothing changed, so repeat runs are quick.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-}"
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
spec="."
[ -n "$extra" ] && spec=".[$extra]"
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)-${extra:-base}"
if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$spec"
    touch "$stamp"
fi
