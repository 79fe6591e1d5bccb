"""Running a registered task: what a process keeps after its first job leaves the cyclic collector's sight."""

from __future__ import annotations

import subprocess
import sys

FIRST_JOBS = """
import gc
from core.jobs.registry import Task

task = Task("noop", lambda ctx, args: None)
before = gc.get_freeze_count()
task.run(None, {})
first = gc.get_freeze_count()
task.run(None, {})
print(before, first > 0, gc.get_freeze_count() == first)
"""


def test_the_first_job_of_a_process_freezes_what_it_loaded_and_later_ones_do_not() -> None:
    # A process of its own: the test process's collector state belongs to every other test.
    out = subprocess.run([sys.executable, "-c", FIRST_JOBS], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "True", "True"]
