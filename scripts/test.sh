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
if [ ! -d /usr/share/fonts/truetype/wqy ]; then
    # A CJK font so the screenshots in tests/artifacts show the seed's Chinese error messages, not boxes.
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq fonts-wqy-microhei || { apt-get update -qq && apt-get install -y -qq fonts-wqy-microhei; }; } \
        >/dev/null || echo "(no CJK font: screenshots will show boxes for Chinese text)"
fi
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy --strict core web"
.venv/bin/mypy
echo "== pytest"
exec .venv/bin/pytest -n 2 "$@"
