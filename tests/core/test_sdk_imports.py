"""The provider SDKs are imported on first use, from whichever thread needs them first.

A replay's job thread and a request thread (building a body's preflight) can both be first: each
must find a whole SDK, never one another thread is still importing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.long_runs import LONG_TESTS

ROOT = Path(__file__).resolve().parents[2]

# Four threads released together in a fresh interpreter, each the first to need part of an SDK.
FIRST_USES_AT_ONCE = """
import threading
from core.preflight import sdk_types
from core.providers import provider_named
from core.replay import send

openai_wire, anthropic_wire = provider_named("openai").wire, provider_named("anthropic").wire
uses = [
    lambda: sdk_types.openai_chat_body({"model": "m", "messages": []}),
    lambda: send.error_table(openai_wire),
    lambda: sdk_types.anthropic_body({"model": "m", "max_tokens": 1, "messages": []}),
    lambda: send.error_table(anthropic_wire),
]
barrier = threading.Barrier(len(uses))
failures = []

def first_use(use):
    barrier.wait()
    try:
        use()
    except Exception as exc:
        failures.append(repr(exc))

threads = [threading.Thread(target=first_use, args=(use,)) for use in uses]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(failures)
"""


def test_threads_that_first_use_the_sdks_at_once_each_find_them_whole() -> None:
    # Without one lock over SDK imports, most runs end in a deadlock or a partly imported module.
    for _ in range(8 if LONG_TESTS else 3):
        done = subprocess.run(
            [sys.executable, "-c", FIRST_USES_AT_ONCE], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "[]"
