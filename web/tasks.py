"""The dashboard's task modules: the app and ``traceloupe worker`` hand them to the job queue (core names none)."""

from __future__ import annotations

from core.jobs.registry import use_task_modules

TASK_MODULES = ("web.bodies.digest_task",)
"""Modules whose import registers the dashboard's tasks (the digests an import queues)."""


def use_web_tasks() -> None:
    """Make the dashboard's tasks known to this process's workers."""
    use_task_modules(TASK_MODULES)
