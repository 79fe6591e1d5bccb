"""Dependency types for handlers: the source, the payload builder and the settings are trusted objects.

Litestar validates handler arguments with msgspec; objects built by ``create_app``
must pass through untouched, hence ``SkipValidation``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from litestar import Request
from litestar.di import NamedDependency, Provide
from litestar.enums import RequestEncodingType
from litestar.params import Body, SkipValidation

from web.bodies.builder import PayloadBuilder
from web.heavy import HeavyWork
from web.replays.service import RunService
from web.settings import Settings
from web.source import StoreSource

SourceDep = NamedDependency[SkipValidation[StoreSource]]
SettingsDep = NamedDependency[SkipValidation[Settings]]
PayloadsDep = NamedDependency[SkipValidation[PayloadBuilder]]
HeavyDep = NamedDependency[SkipValidation[HeavyWork]]
RunsDep = NamedDependency[SkipValidation[RunService]]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RequestWork:
    """What a heavy route (a body build, a diff, a compare) works with: the conversations, the payload builder, and
    the heavy work's budget and slots bound to this request, so the work stops when its client leaves."""

    source: StoreSource
    payloads: PayloadBuilder
    heavy: HeavyWork
    request: Request[Any, Any, Any]

    async def run(self, fn: Callable[[threading.Event], T], *, what: str, command: str) -> T:
        """``fn`` as heavy work; ``what`` and ``command`` name it in the message when it runs out of time."""
        return await self.heavy.run(self.request.receive, fn, what=what, command=command)


def _request_work(
    request: Request[Any, Any, Any], source: SourceDep, payloads: PayloadsDep, heavy: HeavyDep
) -> RequestWork:
    return RequestWork(source, payloads, heavy, request)


REQUEST_WORK = Provide(_request_work, sync_to_thread=False)
"""``work``: registered by ``create_app`` for every route."""
WorkDep = NamedDependency[SkipValidation[RequestWork]]

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
"""A form post's body (``Annotated[SomeData, FORM]``); the CSRF middleware has checked its token."""


@dataclass
class ReplayFields:
    """The fields every replay form posts (``web.replays.forms.ReplayForm`` renders them), as text."""

    provider: str = ""
    model: str = ""
    idempotency_key: str = ""
    model_as_typed: str = ""
    """"1" when the reader typed the model on purpose (the form's "as typed" box)."""
    tools: str = ""
    """A JSON tool list in any provider's shape, sent instead of the stored tools (blank: the stored)."""
    tool_choice: str = ""
    """``auto``, ``none``, ``required`` or a tool's name (blank: the stored tool choice)."""

    @property
    def as_typed(self) -> bool:
        return self.model_as_typed == "1"


@dataclass
class ManyCallsFields(ReplayFields):
    """A replay form's fields and those of a run of many calls (a step run, a suite run), as text."""

    max_cost: str = ""
    """The run's cost cap in USD (blank: none)."""
    compare: str = ""
    """How a replayed answer is compared with the recorded one (``core.replay.answers``; blank: the default)."""
