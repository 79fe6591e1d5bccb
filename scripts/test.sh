#!/usr/bin/env bash
# Install everything the tests need (idempotently) and run the whole suite: lint, types, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
if [ ! -x /usr/bin/chromium ]; then
    # The browser tests drive Debian's Chromium (Playwright's own browser download is not used).
    echo "== installing Debian's chromium for the browser tests"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
fi
# A CJK font so the screenshots in tests/artifacts show the seed's Chinese error messages, not boxes.
bash scripts/cjk-font.sh
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy --strict core web"
.venv/bin/mypy
echo "== pytest"
# worksteal hands each worker a contiguous half and moves tests only when one runs dry, so a module's
# expensive module-scoped fixtures (a built wheel, a browser, a seeded server) are set up once, not per chunk.
exec .venv/bin/pytest -n 2 --dist worksteal "$@"
