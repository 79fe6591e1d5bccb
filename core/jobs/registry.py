"""Task functions by name: what a worker runs for a job.

A task is ``fn(ctx, args)``: ``ctx`` gives the open store, the job's attempt number and the
``send`` to use for provider calls (it holds the provider's concurrency slot and waits out 429s);
``args`` are the job's JSON arguments. A task must be idempotent to a retry: a worker killed
mid-job means the job runs again. ``on_give_up(ctx, args, why)`` records the outcome of a job
that will not run again (its attempts are spent), so nothing it owns stays ``running``.

Workers import :data:`TASK_MODULES` before they take jobs, so a task registered in one of them
runs in a ``traceloupe worker`` process as well as in ``serve``. A layer above the library (the
dashboard) hands its own task modules in with :func:`use_task_modules`; the library names none of them.
"""

from __future__ import annotations

import gc
import importlib
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from core.errors import UnknownNameError
from core.jobs.limits import Limiter, limited_sender
from core.jobs.queue import JSON, JobId
from core.replay.send import Sender
from core.store import Store

TASK_MODULES: list[str] = ["core.jobs.replay_tasks", "core.suites.tasks", "core.ingest.assembly"]
"""Modules whose import registers tasks; a library feature with tasks of its own adds its module here."""


@dataclass(frozen=True, slots=True)
class JobContext:
    """What a task function gets besides its arguments."""

    store: Store
    job_id: JobId
    attempt: int
    """1 for the first run; more after a failure or a lost worker."""
    max_attempts: int
    provider: str
    send: Sender
    """Calls the provider holding one of its slots, waiting out 429s up to the queue's ``max_rate_limit_wait``."""
    limiter: Limiter
    environ: Mapping[str, str]
    timeout: float

    def sender(self, max_rate_limit_wait: float) -> Sender:
        """A ``send`` like :attr:`send` with another budget for 429 waits (0: a 429 stands at once)."""
        return limited_sender(self.limiter, self.provider, max_wait=max_rate_limit_wait)


TaskFn = Callable[[JobContext, Mapping[str, JSON]], None]
GiveUpFn = Callable[[JobContext, Mapping[str, JSON], str], None]


@dataclass(frozen=True, slots=True)
class Task:
    """A registered task: its function and what records a job given up."""

    name: str
    fn: TaskFn
    on_give_up: GiveUpFn | None = None

    def run(self, ctx: JobContext, args: Mapping[str, JSON]) -> None:
        """Run the task's function for one job."""
        try:
            self.fn(ctx, args)
        finally:
            _settle()


_SETTLED = threading.Event()


def _settle() -> None:
    """Once a process has run a job it holds what every later one needs (the SDKs, their kept clients, the
    compiled SQL): frozen out of the cyclic collector's sight, so full collections stop rescanning them."""
    if not _SETTLED.is_set():
        _SETTLED.set()
        gc.freeze()


TASKS: dict[str, Task] = {}


def register(name: str, fn: TaskFn, *, on_give_up: GiveUpFn | None = None) -> Task:
    """Register ``fn`` under ``name``; registering the same function again is a no-op, another one is refused."""
    existing = TASKS.get(name)
    if existing is not None and existing.fn is not fn:
        raise ValueError(f"task {name!r} is registered already ({existing.fn.__module__})")
    TASKS[name] = Task(name, fn, on_give_up)
    return TASKS[name]


def task(name: str, *, on_give_up: GiveUpFn | None = None) -> Callable[[TaskFn], TaskFn]:
    """Decorator form of :func:`register`."""

    def decorate(fn: TaskFn) -> TaskFn:
        register(name, fn, on_give_up=on_give_up)
        return fn

    return decorate


def use_task_modules(modules: Iterable[str]) -> None:
    """Add modules whose tasks the workers of this process run (the app and ``traceloupe worker`` hand theirs)."""
    TASK_MODULES.extend(m for m in modules if m not in TASK_MODULES)


def load_tasks() -> None:
    """Import every module of :data:`TASK_MODULES` (each registers its tasks once)."""
    for module in TASK_MODULES:
        importlib.import_module(module)


def find_task(name: str) -> Task:
    """The task registered under ``name``; UnknownNameError naming the known ones."""
    load_tasks()
    found = TASKS.get(name)
    if found is None:
        raise UnknownNameError(f"no task {name!r}; known: {', '.join(sorted(TASKS)) or 'none'}")
    return found
