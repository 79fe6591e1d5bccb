"""``/conversations/{id}/diff?left=P&right=Q``: two providers' bodies side by side, changes grouped by cause."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.params import FromQuery, QueryParameter
from litestar.response import Template

from web import masking, urls
from web.controllers.payloads import MsgId, request_choice
from web.deps import HeavyDep, PayloadsDep, SourceDep
from web.diffview import compare
from web.heavy import export_then
from web.jsonview import render
from web.pages import DiffPage
from web.payloads import Built, PayloadBuilder, check_provider
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


class DiffController(Controller):
    """The diff page."""

    include_in_schema = False

    @get("/conversations/{conversation_id:str}/diff", name="diff")
    async def diff(
        self,
        request: Request[Any, Any, Any],
        conversation_id: urls.PathId,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        left: Provider = "openai",
        right: Provider = "anthropic",
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
    ) -> Template:
        """Both bodies highlighted, each change marked in both panes and listed under its cause."""
        conversation_id = urls.from_segment(conversation_id)

        def build(_: object) -> DiffPage:
            loaded, lbuilt, rbuilt = build_both(source, payloads, conversation_id, left, right, upto, repair)
            comparison = lrender = rrender = None
            if lbuilt.result is not None and rbuilt.result is not None:
                comparison = compare(lbuilt.result, rbuilt.result, lbuilt.anchors, rbuilt.anchors)
                lrender = render(lbuilt.result.body, comparison.left_marks)
                rrender = render(rbuilt.result.body, comparison.right_marks)
            return DiffPage(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=request_choice(loaded, left, upto, repair),
                left=lbuilt,
                right=rbuilt,
                comparison=comparison,
                left_rendered=lrender,
                right_rendered=rrender,
            )

        command = diff_command(conversation_id, left, right, upto)
        page = await heavy.run(request.receive, build, what=f"the {left} / {right} diff", command=command)
        return Template("diff.html", context={"page": page})
