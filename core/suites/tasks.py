"""The suite job: ``suite_item`` replays one conversation of a suite run (``core.suites.execute.run_item``).

Its only argument is the item's row id: the run's provider, model and mode are read from the
store, the key from the worker's environment. It is safe to run again (a worker died, a job was
delivered twice): an item with an outcome is left alone, a ``running`` one is taken over.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.jobs.queue import JSON
from core.jobs.registry import JobContext, task
from core.suites.execute import give_up, run_item

SUITE_ITEM_TASK = "suite_item"


def lock_of(run_id: str, item_pk: int) -> str:
    """The job lock of one item: enqueueing it again while its job is open (a resumed run) adds nothing."""
    return f"{lock_prefix(run_id)}{item_pk}"


def lock_prefix(run_id: str) -> str:
    """What every job lock of a suite run starts with."""
    return f"suite:{run_id}:"


def lane_of(run_id: str, item_pk: int, concurrency: int) -> str:
    """The job lane of one item: a run's items share ``concurrency`` lanes, so that many replay at once at most.

    By row id, so a resumed run puts an item in the lane it had (its items' ids are consecutive: round robin).
    """
    return f"suite-lane:{run_id}:{item_pk % concurrency}"


def _item(args: Mapping[str, JSON]) -> int:
    return int(args["item"])


def _given_up(ctx: JobContext, args: Mapping[str, JSON], why: str) -> None:
    give_up(ctx.store, _item(args), why)


@task(SUITE_ITEM_TASK, on_give_up=_given_up)
def suite_item(ctx: JobContext, args: Mapping[str, JSON]) -> None:
    """Replay one conversation of a suite run and record its outcome."""
    run_item(ctx.store, _item(args), environ=ctx.environ, timeout=ctx.timeout, sender=ctx.send)
