"""How a replay form's post is answered, a Re-run's and a Replay steps' alike.

A plain form post is redirected (303) to the new run's page; refused, it gets the error page
(``web.errors`` says which status). htmx swaps only 2xx answers, so for htmx a refusal is said in
place, where the run would have appeared, and an accepted run answers with its live region and, out of band,
the conversation header's new run count.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Protocol, TypeVar

from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from core.errors import MisuseError
from web import masking
from web.conversation_page import RunCount
from web.source import StoreSource

NEXT_KEY_HEADER = "X-Next-Idempotency-Key"
"""A fresh key for the form's next press (static/runs.js puts it in the form): a new press is a new run."""


class _Started(Protocol):
    @property
    def run_id(self) -> str: ...

    @property
    def conversation_id(self) -> str: ...


R = TypeVar("R", bound=_Started)


def answer_start(
    request: HTMXRequest,
    start: Callable[[], R],
    page_url: Callable[[str], str],
    region: tuple[str, Callable[[R], object]],
    source: StoreSource,
) -> Template | Redirect:
    """Record a run with ``start``; answer with its page (``page_url``) or its live region (a template and its panel)
    with the run count of its conversation (from ``source``).

    ReplayBusy, KeyConflict and any other MisuseError are refusals: nothing was recorded.
    """
    try:
        run = start()
    except MisuseError as exc:
        if not request.htmx:
            raise
        return Template("runs/_refusal.html", context={"message": masking.mask(str(exc))})
    if not request.htmx:
        return Redirect(page_url(run.run_id), status_code=303)
    template, panel = region
    context = {"region": template, "panel": panel(run), "count": RunCount.of(source, run.conversation_id)}
    return Template("runs/_started.html", context=context, headers={NEXT_KEY_HEADER: secrets.token_urlsafe(18)})
