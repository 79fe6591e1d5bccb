"""What the benchmarks measure of other processes: resident memory and CPU time, read from ``/proc``."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` and of the worker processes it started, in KiB (``/proc/<pid>/status``)."""
    total = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            total += int(line.split()[1])
    # Workers are started by the main thread; the others come and go and start no process.
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        with contextlib.suppress(OSError):  # a process that just ended
            if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes():
                total += rss_kib(int(child))
    return total


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid`` and of the worker processes it started (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        with contextlib.suppress(OSError):
            if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes():
                total += cpu_seconds(int(child))
    return total


def local_postgres_cpu_seconds() -> float:
    """CPU time of every PostgreSQL process on this machine, and of those that ended (0 when none runs here).

    A connection's server process that ended is counted in its parent's children's time.
    """
    total = 0.0
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            if entry.name.isdigit() and (entry / "comm").read_text().startswith("postgres"):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # own and children's
    return total
