"""``/conversations/{id}/diff?left=P&right=Q``: two providers' bodies side by side, changes grouped by cause."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.params import FromQuery, QueryParameter
from litestar.response import Template

from web import masking, urls
from web.deps import HeavyDep, PayloadsDep, SourceDep
from web.diff.pages import DiffPage
from web.diff.service import build_both, diff_command
from web.diff.view import compare
from web.payloads.jsonview import render
from web.payloads.service import MsgId, request_choice

Provider = Annotated[str, QueryParameter(max_length=40)]


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
        return Template("diff/diff.html", context={"page": page})
