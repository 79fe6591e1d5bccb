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
# Compile the bytecode once, here: with PYTHONDONTWRITEBYTECODE set nothing else writes it, and each of the
# ~100 CLI processes and servers the tests start would compile core and web again (a fifth of a `serve` start).
# pytest keeps no cache of its assert-rewritten test modules either: write it once, beside the compiling and
# linting, instead of each worker rewriting every test file at its collection.
.venv/bin/python scripts/rewrite_tests.py tests &
rewrite_pid=$!
.venv/bin/python -m compileall -q core web tests
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
wait "$rewrite_pid"
# mypy runs beside pytest (it is mostly a cold start, and pytest's workers often wait on servers and
# subprocesses); its report is printed after pytest's and its failure fails the command all the same.
# It runs niced: it takes the CPU the workers leave idle rather than a share of a core from each.
mypy_log=$(mktemp)
nice -n 10 .venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
trap 'kill "$mypy_pid" 2>/dev/null || true; rm -f "$mypy_log"' EXIT
echo "== pytest (mypy --strict core web running beside it)"
# worksteal hands each worker a contiguous share and moves tests only when one runs dry, so a module's
# expensive module-scoped fixtures (a built wheel, a browser, a seeded server) are set up once, not per chunk.
# Three workers on two cores: each waits on servers, browsers and subprocesses for much of its time, and with
# two the cores sat idle about a third of the run.
pytest_status=0
.venv/bin/pytest -n 3 --dist worksteal "$@" || pytest_status=$?
echo "== mypy --strict core web"
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
cat "$mypy_log"
if [ "$pytest_status" -ne 0 ]; then
    exit "$pytest_status"
fi
exit "$mypy_status"
