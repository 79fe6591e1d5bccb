"""How a replay form's post is answered, a Re-run's and a Replay steps' alike.

A plain form post is redirected (303) to the new run's page; refused, it gets the error page
(``web.errors`` says which status). htmx swaps only 2xx answers, so for htmx a refusal is said in
place, where the run would have appeared, and an accepted run answers with its live region and, out of band,
the conversation header's new run count. Both start routes take one ``Starter`` (the ``starter`` dependency).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from litestar.di import NamedDependency, Provide
from litestar.params import SkipValidation
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from core.errors import MisuseError
from web import masking
from web.auth.principals import started_by
from web.conversation_page import RunCount
from web.deps import ReplayFields, RunsDep, SourceDep
from web.replays.service import ReplayAsk, RunService
from web.request_options import posted_options, posted_tools
from web.source import StoreSource

NEXT_KEY_HEADER = "X-Next-Idempotency-Key"
"""A fresh key for the form's next press (static/runs.js puts it in the form): a new press is a new run."""


class _Started(Protocol):
    @property
    def run_id(self) -> str: ...

    @property
    def conversation_id(self) -> str: ...


R = TypeVar("R", bound=_Started)


@dataclass(frozen=True, slots=True)
class Starter:
    """What a replay form's post works with: the request, the run service, the conversations, and the request
    options posted beside the form's own fields (``web.request_options``)."""

    request: HTMXRequest
    runs: RunService
    source: StoreSource
    posted: Mapping[str, str]

    def ask(self, conversation_id: str, data: ReplayFields) -> ReplayAsk:
        """What the form asks of the run service: its fields, its tools with the posted options over them
        (``posted_tools``), and the account the run records as its starter."""
        tools = posted_tools(data.provider, data.model, data.tools, data.tool_choice, self.posted)
        who = started_by(self.request)
        return ReplayAsk(conversation_id, data.provider, data.model, data.idempotency_key, data.as_typed, tools, who)

    def answer(
        self, start: Callable[[], R], page_url: Callable[[str], str], region: tuple[str, Callable[[R], object]]
    ) -> Template | Redirect:
        """Record a run with ``start``; answer with its page (``page_url``) or its live region (a template and its
        panel) with the run count of its conversation.

        ReplayBusy, KeyConflict and any other MisuseError are refusals: nothing was recorded.
        """
        try:
            run = start()
        except MisuseError as exc:
            if not self.request.htmx:
                raise
            return Template("runs/_refusal.html", context={"message": masking.mask(str(exc))})
        if not self.request.htmx:
            return Redirect(page_url(run.run_id), status_code=303)
        template, panel = region
        context = {"region": template, "panel": panel(run), "count": RunCount.of(self.source, run.conversation_id)}
        return Template("runs/_started.html", context=context, headers={NEXT_KEY_HEADER: secrets.token_urlsafe(18)})


async def _starter(request: HTMXRequest, run_service: RunsDep, source: SourceDep) -> Starter:
    return Starter(request, run_service, source, await posted_options(request))


STARTER = Provide(_starter)
"""``starter``: the dependency of the routes that start a run."""
StarterDep = NamedDependency[SkipValidation[Starter]]
