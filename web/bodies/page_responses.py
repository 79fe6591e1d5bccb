"""The responses the payload and diff pages give alike: the page (or its panel alone, for an htmx request aimed
at it), the preparing page while the page's digest is made, and the preparing panel that polls for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from litestar.plugins.htmx import ClientRefresh, HTMXRequest
from litestar.response import Redirect, Template

from web.bodies.builder import PayloadBuilder
from web.bodies.preparations import Progress
from web.bodies.preparing import PreparingPage, preparing_page
from web.deps import RequestWork
from web.source import StoreSource


class AskedPage(Protocol):
    """What a page was asked for, as far as its preparing panel needs it."""

    @property
    def conversation_id(self) -> str: ...

    @property
    def what(self) -> str: ...


Asked = TypeVar("Asked", bound=AskedPage)


def page_response(request: HTMXRequest, page: object, panel_id: str, panel: str, full: str) -> Template:
    """The preparing page while the digest is made; else ``panel`` for an htmx request aimed at ``panel_id``, the
    ``full`` page otherwise (a cache tells the two apart by the htmx headers)."""
    if isinstance(page, PreparingPage):
        return Template("payloads/preparing.html", context={"page": page})
    template = panel if request.htmx and request.htmx.target == panel_id else full
    return Template(template, context={"page": page}, headers={"Vary": "HX-Request, HX-Target"})


async def preparing_response(
    request: HTMXRequest,
    work: RequestWork,
    asked: Asked,
    progress_of: Callable[[StoreSource, PayloadBuilder, Asked], Progress | None],
    poll_url: str,
    page_url: str,
    command: str,
) -> Template | ClientRefresh | Redirect:
    """How far the page's digest is made (``#digest-preparing``, polled at ``poll_url``); once it is, a refresh
    into the page (a redirect to ``page_url`` without htmx)."""

    def build(_: object) -> PreparingPage | None:
        progress = progress_of(work.source, work.payloads, asked)
        if progress is None:
            return None
        return preparing_page(work.source, asked.conversation_id, asked.what, poll_url, progress)

    page = await work.run(build, what=asked.what, command=command)
    if page is None:
        return ClientRefresh() if request.htmx else Redirect(page_url)
    return Template("payloads/_preparing.html", context={"page": page})
