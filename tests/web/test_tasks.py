"""The dashboard's jobs run in any worker the dashboard or ``traceloupe worker`` starts, though core names none."""

from __future__ import annotations

import subprocess
import sys

KNOWS_DIGEST = """
from core.errors import UnknownNameError
from core.jobs.registry import find_task
from web.tasks import use_web_tasks

try:
    find_task("digest")
    print("known before")
except UnknownNameError:
    print("unknown before")
use_web_tasks()
print(find_task("digest").name)
"""


def test_a_worker_handed_the_dashboards_task_modules_runs_the_digest_job() -> None:
    # A process of its own: the test process has imported the digest task already.
    out = subprocess.run([sys.executable, "-c", KNOWS_DIGEST], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["unknown before", "digest"]
