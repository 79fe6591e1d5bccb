"""The job queue's public names: growing them is a visible decision."""

from __future__ import annotations

import core.jobs


def test_the_public_names_are_pinned() -> None:
    assert core.jobs.__all__ == [
        "JSON", "LIMITS_VAR", "OPEN_STATUSES", "TASKS", "TASK_MODULES", "JobContext", "JobId", "JobInfo", "JobQueue",
        "JobSettings", "JobStatus", "NewJob", "Task", "env_limits", "find_task", "parse_limits", "queue_for",
        "register", "task",
    ]  # fmt: skip


def test_the_replay_tasks_are_registered_for_every_worker() -> None:
    assert core.jobs.find_task("run").on_give_up is not None
    assert core.jobs.find_task("step_run").on_give_up is not None
