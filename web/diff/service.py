"""Two providers' requests for one conversation, as the diff page and the API compare them."""

from __future__ import annotations

from typing import Annotated

from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromQuery, QueryParameter, SkipValidation

from web import urls
from web.diff.pages import DiffLinks
from web.diff.view import Comparison, compare
from web.heavy import export_then
from web.payloads.builder import Built, PayloadBuilder, check_provider, usable_result
from web.payloads.service import MsgId
from web.source import Loaded, StoreSource

Provider = Annotated[str, QueryParameter(max_length=40)]


def build_both(
    source: StoreSource,
    payloads: PayloadBuilder,
    conversation_id: str,
    left: str,
    right: str,
    upto: str | None,
    repair: bool,
) -> tuple[Loaded, Built, Built]:
    """The conversation and both providers' requests (404 for an unknown provider, conversation or upto)."""
    check_provider(left)
    check_provider(right)
    loaded = source.load(conversation_id)
    return (
        loaded,
        payloads.build(loaded, left, upto=upto or None, repair=repair),
        payloads.build(loaded, right, upto=upto or None, repair=repair),
    )


def diff_command(conversation_id: str, left: str, right: str, upto: str | None) -> str:
    """The CLI command that diffs the same two requests without the dashboard's time budget."""
    return export_then(
        conversation_id,
        *("traceloupe", "diff", "-", "--conversation", conversation_id, "--left", left, "--right", right),
        *(("--upto", upto) if upto else ()),
    )


def comparison_of(payloads: PayloadBuilder, left: Built, right: Built) -> Comparison:
    """The diff of two built requests with each pane's marks, computed once per pair of builds."""
    lresult, rresult = usable_result(left), usable_result(right)
    return payloads.derived(
        ("diff", left.key, right.key),
        lambda: compare(lresult, rresult, left.anchors, right.anchors),
        left.size + right.size,
    )


def side_of(side: str) -> str:
    """``left`` or ``right``; 404 otherwise."""
    if side not in SIDES:
        raise NotFoundException("side is 'left' or 'right'.")
    return side


SIDES = ("left", "right")


def asked_diff(
    conversation_id: urls.PathId,
    left: Provider = "openai",
    right: Provider = "anthropic",
    upto: MsgId = None,
    repair: FromQuery[bool] = False,
) -> DiffLinks:
    """The diff page routes' shared parameters as one value (a dependency: each route declares them once here)."""
    return DiffLinks(urls.from_segment(conversation_id), left, right, upto or None, repair)


AskedDiffDep = NamedDependency[SkipValidation[DiffLinks]]


def build_asked(source: StoreSource, payloads: PayloadBuilder, asked: DiffLinks) -> tuple[Loaded, Built, Built]:
    """``build_both`` for the diff the page was asked for."""
    return build_both(source, payloads, asked.conversation_id, asked.left, asked.right, asked.upto, asked.repair)


def asked_command(asked: DiffLinks) -> str:
    """``diff_command`` for the diff the page was asked for."""
    return diff_command(asked.conversation_id, asked.left, asked.right, asked.upto)
